/**
 * The resumable predictions file of a run. While a run is going, each finished clip's records are
 * appended with one write (O_APPEND), so the file is always a sequence of whole clip blocks plus at
 * most one torn block at the end after a crash. On (re)start `recover` keeps the complete blocks,
 * drops a torn or incomplete block (that clip is redone) and reports which clips are done; when the
 * run completes `finalize` rewrites the file atomically in the dataset's canonical clip order, so
 * the result does not depend on the worker count or on interruptions.
 */
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync } from 'node:fs';
import { InputError } from '../core/errors.js';
import { writeFileAtomic as writeAtomic, writeFully } from '../io/atomic.js';
import { errnoText } from '../io/safety.js';

/** What the run expects of one clip's block. */
export interface ExpectedClip {
  /** Canonical position. */
  index: number;
  /** Records the clip's block holds. */
  count: number;
}

/** One clip's records as written (lines '\n'-terminated). */
export interface ClipBlock {
  id: string;
  text: string;
  count: number;
}

export interface Recovery {
  /** Complete blocks, in file order. */
  blocks: ClipBlock[];
  /** Clips whose block was torn or incomplete (they are redone). */
  dropped: string[];
  /** True when the file had to be rewritten (something was dropped). */
  repaired: boolean;
}

/**
 * Splits a predictions file's text into clip blocks (consecutive lines of one clip_id). A block is
 * complete when it holds `expected.count` parseable lines; anything else — a torn last line, a
 * short block, a line that is not JSON — is dropped. A complete block of a clip this run does not
 * expect, or a clip that appears twice, means the file belongs to another run: an InputError.
 */
export function parseBlocks(text: string, expected: ReadonlyMap<string, ExpectedClip>, file: string): Recovery {
  const blocks: ClipBlock[] = [];
  const dropped: string[] = [];
  let repaired = false;
  const end = text.lastIndexOf('\n') + 1;
  if (end < text.length) repaired = true; // torn last line
  const seen = new Set<string>();
  let cur: { id: string; start: number; count: number } | null = null;
  const close = (stop: number) => {
    if (!cur) return;
    const exp = expected.get(cur.id);
    if (!exp) {
      throw new InputError(`${file}: has records of clip '${cur.id}', which this run does not include (another dataset, shard or clip list? use another -o)`);
    } else if (cur.count !== exp.count) {
      dropped.push(cur.id);
      repaired = true;
    } else {
      if (seen.has(cur.id)) throw new InputError(`${file}: clip '${cur.id}' appears twice (not a file egogeo run wrote; use another -o)`);
      seen.add(cur.id);
      blocks.push({ id: cur.id, text: text.slice(cur.start, stop), count: cur.count });
    }
    cur = null;
  };
  let pos = 0;
  while (pos < end) {
    const nl = text.indexOf('\n', pos);
    const line = text.slice(pos, nl);
    let id: string | null = null;
    if (line.trim()) {
      try {
        const rec = JSON.parse(line) as { clip_id?: unknown };
        if (typeof rec.clip_id === 'string') id = rec.clip_id;
      } catch {
        /* torn or foreign line */
      }
      if (id === null) {
        // Not a record of ours (a torn line mid-file): it ends the block before it, and a block
        // it split comes out short on both sides.
        close(pos);
        repaired = true;
      } else {
        if (!cur || cur.id !== id) {
          close(pos);
          cur = { id, start: pos, count: 0 };
        }
        cur.count++;
      }
    } else {
      repaired = true; // blank lines are not ours
    }
    pos = nl + 1;
  }
  close(end);
  return { blocks, dropped, repaired };
}

/** The predictions file of one run as it is written (appended per clip, repaired on resume, put in canonical order); io/predictions.ts's `PredictionsFile` is a file as read. */
export class PredictionsOutput {
  private fd: number | null = null;

  constructor(readonly path: string, private readonly expected: ReadonlyMap<string, ExpectedClip>) {}

  /**
   * Reads what an earlier, interrupted run left, repairs it, and opens the file for appending.
   * Complete blocks for which `keep(id)` is false (their side files are gone) are dropped too.
   */
  recover(keep?: (id: string) => boolean): Recovery {
    let rec: Recovery = { blocks: [], dropped: [], repaired: false };
    if (existsSync(this.path)) {
      let text: string;
      try {
        text = readFileSync(this.path, 'utf8');
      } catch (e) {
        throw new InputError(`${this.path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      }
      rec = parseBlocks(text, this.expected, this.path);
      if (keep) {
        const lost = rec.blocks.filter((b) => !keep(b.id));
        if (lost.length > 0) rec = { blocks: rec.blocks.filter((b) => keep(b.id)), dropped: [...rec.dropped, ...lost.map((b) => b.id)], repaired: true };
      }
      if (rec.repaired) writeAtomic(this.path, rec.blocks.map((b) => b.text).join(''));
    }
    try {
      this.fd = openSync(this.path, 'a');
    } catch (e) {
      throw new InputError(`${this.path}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    return rec;
  }

  /**
   * Appends one clip's records with a single write. A write that fails part-way (a full disk) is
   * cut back to the clip before it, so the file never holds half a record; the error names the file.
   */
  append(text: string): void {
    if (this.fd === null) throw new Error('PredictionsOutput.append before recover');
    const before = fstatSync(this.fd).size;
    try {
      writeFully(this.fd, Buffer.from(text), this.path);
    } catch (e) {
      try {
        ftruncateSync(this.fd, before);
      } catch {
        /* the rerun repairs a torn block */
      }
      throw new InputError(`${this.path}: cannot write (${errnoText(e)})`);
    }
  }

  close(): void {
    if (this.fd !== null) {
      fsyncSync(this.fd);
      closeSync(this.fd);
      this.fd = null;
    }
  }

  /** Rewrites the file in canonical clip order; returns the blocks in that order. */
  finalize(): ClipBlock[] {
    this.close();
    const { blocks } = parseBlocks(readFileSync(this.path, 'utf8'), this.expected, this.path);
    blocks.sort((a, b) => this.expected.get(a.id)!.index - this.expected.get(b.id)!.index);
    writeAtomic(this.path, blocks.map((b) => b.text).join(''));
    return blocks;
  }
}
