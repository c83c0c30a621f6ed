/**
 * A JSONL output written line by line through a file stream (with backpressure: a line waits until
 * the stream has taken the last ones), split into parts at a size limit. Nothing is held but the
 * line being written, whatever the number of lines.
 *
 * Parts: while writing, hidden temporary files beside the output (`.OUT.<pid>.<hex>.part-001.tmp`,
 * …); at `finish` they are flushed and renamed: one part becomes `OUT` itself, several become
 * `OUT-stem.part-001.ext`, `…part-002.ext` (`partPath`), and an earlier run's parts or `OUT` that
 * this run's names do not cover are removed, so that the files present are this run's. `abort` (a
 * failure, a signal) removes the temporary files; a part is never left half written under its name.
 * Temporary files of a run that was killed outright (its pid gone) are removed by the next run.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, createWriteStream, fsyncSync, lstatSync, openSync, readdirSync, renameSync, unlinkSync, type WriteStream } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { InputError } from '../core/errors.js';
import { errnoText, faultFor, writeTarget } from './safety.js';

/** The name of part `i` (1-based) of `output` when it is split: `batch.jsonl` → `batch.part-001.jsonl`. */
export function partPath(output: string, i: number): string {
  const ext = extname(output);
  const stem = ext ? output.slice(0, -ext.length) : output;
  return `${stem}.part-${String(i).padStart(3, '0')}${ext}`;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

interface Part {
  tmp: string;
  fd: number;
  ws: WriteStream;
  bytes: number;
  lines: number;
}

export class JsonlParts {
  private readonly target: string;
  private readonly prefix: string;
  private readonly parts: Part[] = [];
  private failure: Error | null = null;
  private closed = false;
  /** Lines written, over all parts. */
  lines = 0;

  /** `maxBytes`: the most bytes a part may hold (a line longer than that alone is refused). */
  constructor(
    readonly output: string,
    readonly maxBytes: number,
  ) {
    this.target = writeTarget(output);
    const base = basename(this.target);
    this.prefix = join(dirname(this.target), `.${base}.${process.pid}.${randomBytes(4).toString('hex')}`);
    // A run killed outright (SIGKILL, out of memory) left its temporary files: its pid is gone.
    const stale = new RegExp(`^\\.${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)\\.[0-9a-f]{8}\\.part-\\d+\\.tmp$`);
    try {
      for (const f of readdirSync(dirname(this.target))) {
        const m = stale.exec(f);
        if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) unlinkSync(join(dirname(this.target), f));
      }
    } catch {
      /* the folder is created when the first part is */
    }
  }

  /** Writes one line (no newline: one is added); resolves once the stream can take more. */
  async write(line: string): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.closed) throw new Error('JsonlParts: write after finish or abort');
    const buf = Buffer.from(`${line}\n`);
    if (buf.length > this.maxBytes) {
      throw new InputError(`${this.output}: line ${this.lines + 1} is ${mb(buf.length)} MB, more than the part size limit of ${mb(this.maxBytes)} MB (--max-file-mb): raise the limit`);
    }
    let part = this.parts[this.parts.length - 1];
    if (!part || part.bytes + buf.length > this.maxBytes) part = await this.open();
    const fault = faultFor(part.tmp);
    if (fault) throw this.fail(fault, part);
    part.bytes += buf.length;
    part.lines++;
    this.lines++;
    if (!part.ws.write(buf)) await this.drained(part);
    if (this.failure) throw this.failure;
  }

  /** Flushes and closes every part and renames them to their names; returns those names in order. */
  async finish(): Promise<string[]> {
    if (this.failure) throw this.failure;
    if (this.parts.length === 0) await this.open(); // no lines: an empty OUT, as before
    const last = this.parts[this.parts.length - 1];
    await this.close(last);
    this.closed = true;
    const names = this.parts.length === 1 ? [this.output] : this.parts.map((_, i) => partPath(this.output, i + 1));
    const targets = this.parts.length === 1 ? [this.target] : this.parts.map((_, i) => partPath(this.target, i + 1));
    try {
      this.parts.forEach((p, i) => renameSync(p.tmp, targets[i]));
    } catch (e) {
      this.abort();
      throw new InputError(`${this.output}: cannot write (${errnoText(e)})`);
    }
    // What an earlier run wrote under names this run does not use: its parts past ours, or OUT beside our parts.
    const removeFile = (p: string): boolean => {
      try {
        if (!lstatSync(p).isFile()) return false;
        unlinkSync(p);
        return true;
      } catch {
        return false;
      }
    };
    if (this.parts.length > 1) removeFile(this.target);
    for (let i = this.parts.length === 1 ? 1 : this.parts.length + 1; removeFile(partPath(this.target, i)); i++);
    return names;
  }

  /** Removes every temporary file (synchronous: safe in a signal handler); the named outputs are untouched. */
  abort(): void {
    this.closed = true;
    for (const p of this.parts) {
      p.ws.destroy();
      try {
        closeSync(p.fd);
      } catch {
        /* closed already */
      }
      try {
        unlinkSync(p.tmp);
      } catch {
        /* renamed or never created */
      }
    }
  }

  private async open(): Promise<Part> {
    const prev = this.parts[this.parts.length - 1];
    if (prev) await this.close(prev);
    const tmp = `${this.prefix}.part-${String(this.parts.length + 1).padStart(3, '0')}.tmp`;
    let fd: number;
    try {
      const fault = faultFor(tmp);
      if (fault) throw fault;
      fd = openSync(tmp, 'w');
    } catch (e) {
      throw new InputError(`${this.output}: cannot write (${errnoText(e)})`);
    }
    const ws = createWriteStream('', { fd, autoClose: false, highWaterMark: 1 << 20 });
    const part: Part = { tmp, fd, ws, bytes: 0, lines: 0 };
    ws.on('error', (e) => this.fail(e, part));
    this.parts.push(part);
    return part;
  }

  /** Ends a part's stream, flushes it to disk and closes it. */
  private async close(p: Part): Promise<void> {
    await new Promise<void>((res, rej) => {
      p.ws.once('error', rej);
      p.ws.end(() => res());
    }).catch((e) => {
      throw this.fail(e, p);
    });
    try {
      fsyncSync(p.fd);
      closeSync(p.fd);
    } catch (e) {
      throw this.fail(e, p);
    }
    if (this.failure) throw this.failure;
  }

  private drained(p: Part): Promise<void> {
    return new Promise<void>((res) => {
      const done = () => {
        p.ws.off('drain', done);
        p.ws.off('error', done);
        res();
      };
      p.ws.on('drain', done);
      p.ws.on('error', done);
    });
  }

  private fail(e: unknown, p: Part): Error {
    this.failure ??= new InputError(`${this.output}: cannot write part ${this.parts.indexOf(p) + 1} (${errnoText(e)})`);
    return this.failure;
  }
}

const mb = (b: number): string => String(Math.round((b / 1e6) * 1000) / 1000);
