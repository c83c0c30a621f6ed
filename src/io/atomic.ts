/**
 * The one way egogeo writes an output file: a temporary file in the same folder, flushed to disk,
 * then renamed over the target. A failed or interrupted write leaves the target as it was and no
 * temporary file behind. A symlink given as the target is followed (its target is replaced, the
 * link stays); a target that exists but is not a regular file (a device, FIFO, folder) is refused.
 * A failure is one InputError line naming the path and the cause (`ENOSPC: no space left on device`).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../core/errors.js';
import { errnoText, faultFor, writeTarget } from './safety.js';
import { onInterrupt, pidAlive } from './interrupt.js';

export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const target = writeTarget(path);
  try {
    const s = statSync(target);
    if (!s.isFile()) throw new InputError(`${path}: exists and is not a regular file; egogeo replaces only regular files`);
  } catch (e) {
    if (e instanceof InputError) throw e;
  }
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fault = faultFor(target);
    if (fault) throw fault;
    const fd = openSync(tmp, 'w');
    try {
      writeFully(fd, typeof data === 'string' ? Buffer.from(data) : data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* not created */
    }
    throw new InputError(`${path}: cannot write (${errnoText(e)})`);
  }
}

/** Writes all of `buf` at the descriptor's position (writeSync may write less than asked). */
export function writeFully(fd: number, buf: Uint8Array, path = ''): void {
  const fault = path ? faultFor(path) : null;
  if (fault) {
    // A full disk mid-append: part of the buffer lands, then the write fails.
    if (buf.length > 1) writeSync(fd, buf, 0, buf.length >> 1);
    throw fault;
  }
  for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
}

/**
 * Writes a whole output folder atomically: `fill(stage)` writes into a hidden staging folder beside
 * `dir`, which then replaces `dir` (the old folder is moved aside first and removed only once the
 * new one is in place). On any failure the staging folder is removed, `dir` is as it was, and the
 * error is one line naming the path and the cause.
 */
export async function writeDirAtomic<T>(
  dir: string,
  fill: (stage: string) => Promise<T> | T,
  opts: { replaceable?: (existing: string) => boolean; what?: string } = {},
): Promise<T> {
  const out = resolve(dir);
  if (existsSync(out)) {
    if (!lstatSync(out).isDirectory()) throw new InputError(`${dir}: exists and is not a folder`);
    // Replacing a folder deletes what it holds: only an empty one or one this command wrote.
    if (readdirSync(out).length > 0 && !(opts.replaceable?.(out) ?? false)) {
      throw new InputError(`${dir}: exists, is not empty and is not ${opts.what ?? 'an egogeo output folder'}; give a new folder`);
    }
  }
  let staged: StagedDir;
  try {
    staged = stageDir(out);
  } catch (e) {
    throw new InputError(`${dir}: cannot write (${errnoText(e)})`);
  }
  const { stage } = staged;
  try {
    const r = await fill(stage);
    const late = faultFor(out);
    if (late) throw late;
    publishDir(stage, out);
    return r;
  } catch (e) {
    staged.remove();
    if (e instanceof InputError) throw e;
    const p = (e as NodeJS.ErrnoException).path;
    throw new InputError(`${p ? p.replace(stage, out) : dir}: cannot write (${errnoText(e)})`);
  } finally {
    staged.done();
  }
}

/** A staging folder for the output folder `out` (stageDir). */
export interface StagedDir {
  stage: string;
  /** Removes the staging folder. */
  remove(): void;
  /** The staging folder is published or removed: an interrupt no longer removes it. */
  done(): void;
}

/**
 * A hidden staging folder beside the output folder `out` (`.OUT.<pid>.<hex>.tmp`): removed when
 * the process is interrupted (io/interrupt.ts) or exits before `done`; the staging folders of
 * killed runs for the same `out` (their pid gone; also `.OUT.tmp-*`, as egogeo synth named them before) are
 * removed first, so a kill leaves nothing a rerun keeps.
 */
export function stageDir(out: string): StagedDir {
  const parent = dirname(out);
  const base = basename(out);
  mkdirSync(parent, { recursive: true });
  const esc = base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const ours = new RegExp(`^\\.${esc}\\.(\\d+)\\.[0-9a-f]{8}\\.tmp(\\.old)?$`);
  const legacy = new RegExp(`^\\.${esc}\\.tmp-[A-Za-z0-9]{6}$`);
  for (const f of readdirSync(parent)) {
    const m = ours.exec(f);
    if ((m && Number(m[1]) !== process.pid && !pidAlive(Number(m[1]))) || legacy.test(f)) rmSync(join(parent, f), { recursive: true, force: true });
  }
  const stage = join(parent, `.${base}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fault = faultFor(stage);
  if (fault) throw fault;
  mkdirSync(stage);
  const remove = () => rmSync(stage, { recursive: true, force: true });
  const offInterrupt = onInterrupt(remove);
  process.once('exit', remove);
  return {
    stage,
    remove,
    done: () => {
      offInterrupt();
      process.removeListener('exit', remove);
    },
  };
}

/** Moves a staging folder to `out`, replacing an existing folder only once the new one is in place. */
export function publishDir(stage: string, out: string): void {
  if (!existsSync(out)) {
    renameSync(stage, out);
    return;
  }
  const old = `${stage}.old`;
  renameSync(out, old);
  try {
    renameSync(stage, out);
  } catch (e) {
    renameSync(old, out);
    throw e;
  }
  rmSync(old, { recursive: true, force: true });
}
