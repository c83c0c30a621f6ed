/**
 * The guarantees every command gives about the files it touches (README, "What egogeo guarantees"):
 *
 * - `guardOutputs`: before any work, no output may be one of the command's inputs (compared by
 *   real path and by device + inode, so a symlink, a hard link or `dir/../file` cannot sneak past),
 *   and an existing output must be a regular file (or, for folder outputs, a folder) that egogeo
 *   may replace. A symlink given as an output is followed: its target is replaced and the link stays.
 * - `readInputText` / `checkInputFile`: a file input must be a regular file under a size cap, and
 *   its lines under a length cap, so `/dev/zero` or a FIFO is refused at once instead of read forever.
 * - `isSafeFileName`: ids that name files (clip ids → `<id>.tum`) cannot leave their folder.
 * - `faultFor`: the test hook `EGOGEO_FAULT_WRITE=CODE[:substring[:skip]]` makes every write whose
 *   path contains `substring` fail with errno CODE (after `skip` successful ones), so tests can
 *   play a full disk (ENOSPC), a read-only file system (EROFS) or a permission error (EACCES).
 */
import { availableParallelism } from 'node:os';
import { lstatSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, basename, join, resolve } from 'node:path';
import { InputError } from '../core/errors.js';

/** Largest text input read whole (trajectories, predictions, question files, run records). */
export const MAX_INPUT_BYTES = Number(process.env.EGOGEO_MAX_INPUT_BYTES) > 0 ? Number(process.env.EGOGEO_MAX_INPUT_BYTES) : 1 << 30;
/** Longest line in a JSONL or text input. */
export const MAX_LINE_CHARS = 64 << 20;
/** Most worker threads: more than 4 per core gains nothing and costs ~100 MB each. */
export const MAX_WORKERS = Math.max(8, 4 * availableParallelism());

const ERRNO_TEXT: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a parent is not a folder',
  EISDIR: 'is a folder',
  EEXIST: 'already exists',
  EIO: 'input/output error',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'name too long',
  ELOOP: 'too many symbolic links',
  EFBIG: 'file too large',
  EXDEV: 'crosses file systems',
  ENOTEMPTY: 'folder not empty',
  EBUSY: 'busy',
};

/** `ENOSPC: no space left on device` for an errno error, else its first line. */
export function errnoText(e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (typeof code === 'string') return ERRNO_TEXT[code] ? `${code}: ${ERRNO_TEXT[code]}` : code;
  return String((e as Error)?.message ?? e).split('\n')[0];
}

/** True for a Node file-system error (it has an errno code and a syscall). */
export function isErrnoError(e: unknown): e is NodeJS.ErrnoException {
  return e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string' && typeof (e as NodeJS.ErrnoException).syscall === 'string';
}

/** The injected write failure for `path`, if the test hook asks for one (see the module comment). */
const faultCounts = new Map<string, number>();
export function faultFor(path: string): NodeJS.ErrnoException | null {
  const spec = process.env.EGOGEO_FAULT_WRITE;
  if (!spec) return null;
  const [code, match = '', skip = '0'] = spec.split(':');
  if (match && !path.includes(match)) return null;
  const n = faultCounts.get(spec) ?? 0;
  faultCounts.set(spec, n + 1);
  if (n < Number(skip)) return null;
  const e = new Error(`${code}: injected write failure, write '${path}'`) as NodeJS.ErrnoException;
  e.code = code;
  e.syscall = 'write';
  e.path = path;
  return e;
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}
function statOrNull(p: string): Stats | null {
  try {
    return statSync(p);
  } catch {
    return null;
  }
}

/** Where a write to `path` really lands: a symlink's final target, else the path itself (resolved). */
export function writeTarget(path: string): string {
  const abs = resolve(path);
  const l = lstatOrNull(abs);
  if (l?.isSymbolicLink()) {
    try {
      return realpathSync(abs);
    } catch {
      // A dangling link: write where it points (one level), in its folder.
      return abs;
    }
  }
  // The folder may itself be reached through links: resolve it so comparisons see the real place.
  try {
    return join(realpathSync(dirname(abs)), basename(abs));
  } catch {
    return abs;
  }
}

export interface OutputSpec {
  path: string;
  /** What the output is, for messages (`-o`, `--json`, `--out`). */
  flag: string;
  /** Folder outputs (report --out, synth --out) may be existing folders. */
  kind?: 'file' | 'dir';
}

interface Identity {
  real: string;
  dev: number;
  ino: number;
}
function identity(p: string): Identity | null {
  const s = statOrNull(p);
  if (!s) return null;
  let real = resolve(p);
  try {
    real = realpathSync(p);
  } catch {
    /* keep */
  }
  return { real, dev: s.dev, ino: s.ino };
}
const inside = (child: string, dir: string) => child === dir || child.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

/**
 * Refuses, before any work, an output that is one of the inputs (or, for a folder input such as a
 * KITTI sequence, lies inside one) and an output that exists but is not something egogeo may
 * replace (a device, FIFO, socket, or a folder where a file is written). Exit 1, one line.
 */
export function guardOutputs(outputs: readonly (OutputSpec | undefined)[], inputs: readonly (string | undefined)[]): void {
  const ins = inputs.filter((p): p is string => typeof p === 'string' && p.length > 0).map((p) => ({ p, id: identity(p), dir: statOrNull(p)?.isDirectory() ?? false }));
  const outs = outputs.filter((o): o is OutputSpec => !!o && typeof o.path === 'string');
  for (const o of outs) {
    if (o.path === '') throw new InputError(`${o.flag}: empty path`);
    const abs = resolve(o.path);
    const l = lstatOrNull(abs);
    const s = statOrNull(abs);
    if (l?.isSymbolicLink() && !s) {
      throw new InputError(`${o.flag} ${o.path}: is a symbolic link to nothing; give a real path`);
    }
    if (s) {
      if ((o.kind ?? 'file') === 'file' && !s.isFile()) {
        throw new InputError(`${o.flag} ${o.path}: is ${describe(s)}, not a regular file egogeo may replace; give a file path`);
      }
      if (o.kind === 'dir' && !s.isDirectory()) throw new InputError(`${o.flag} ${o.path}: exists and is ${describe(s)}, not a folder; give a folder path`);
    }
    const target = writeTarget(abs);
    const oid = identity(abs);
    for (const i of ins) {
      const same = oid && i.id && oid.dev === i.id.dev && oid.ino === i.id.ino;
      // A folder output is replaced whole: it must not hold an input.
      const holds = o.kind === 'dir' && i.id && inside(i.id.real, target);
      if (same || (i.id && target === i.id.real) || holds) {
        throw new InputError(`${o.flag} ${o.path}: is ${holds && !same ? 'a folder holding the input' : 'the input'} ${i.p}; egogeo never writes over its inputs — give another path`);
      }
    }
  }
  // Two outputs of one command on one file would overwrite each other too.
  for (let a = 0; a < outs.length; a++) {
    for (let b = a + 1; b < outs.length; b++) {
      if (writeTarget(outs[a].path) === writeTarget(outs[b].path)) throw new InputError(`${outs[a].flag} and ${outs[b].flag} are the same file (${outs[a].path})`);
    }
  }
}

function describe(s: Stats): string {
  if (s.isDirectory()) return 'a folder';
  if (s.isCharacterDevice() || s.isBlockDevice()) return 'a device';
  if (s.isFIFO()) return 'a FIFO';
  if (s.isSocket()) return 'a socket';
  if (s.isFile()) return 'a regular file';
  return 'neither a file nor a folder';
}

/** An input that must be a regular file of at most `MAX_INPUT_BYTES`; InputError naming it otherwise. */
export function checkInputFile(path: string, what = 'file', maxBytes = MAX_INPUT_BYTES): Stats {
  let s: Stats;
  try {
    s = statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(`${path}: cannot read (${code === 'ENOENT' ? 'no such file' : errnoText(e)})`);
  }
  if (!s.isFile()) throw new InputError(`${path}: is ${describe(s)}, expected a ${what}`);
  if (s.size > maxBytes) throw new InputError(`${path}: ${(s.size / 2 ** 20).toFixed(0)} MiB is larger than egogeo reads (${(maxBytes / 2 ** 20).toFixed(0)} MiB) for a ${what}`);
  return s;
}

/** Reads a binary input whole after `checkInputFile` (an npz, an image); errors name the file. */
export function readInputBytes(path: string, what = 'file', maxBytes = MAX_INPUT_BYTES): Buffer {
  checkInputFile(path, what, maxBytes);
  try {
    return readFileSync(path);
  } catch (e) {
    throw new InputError(`${path}: cannot read (${errnoText(e)})`);
  }
}

/** Reads a text input whole after `checkInputFile`; lines longer than `MAX_LINE_CHARS` are refused. */
export function readInputText(path: string, what = 'file', maxBytes = MAX_INPUT_BYTES): string {
  checkInputFile(path, what, maxBytes);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError(`${path}: cannot read (${errnoText(e)})`);
  }
  if (text.length > MAX_LINE_CHARS) {
    let start = 0;
    for (let line = 1; start < text.length; line++) {
      let nl = text.indexOf('\n', start);
      if (nl < 0) nl = text.length;
      if (nl - start > MAX_LINE_CHARS) throw new InputError(`${path}:${line}: line longer than ${MAX_LINE_CHARS / 2 ** 20} MiB characters`);
      start = nl + 1;
    }
  }
  return text;
}

/** Bytes (UTF-8) a file-naming id may take: file systems cap a name at 255 bytes, and `<id>.tum.<pid>.tmp` must fit. */
export const MAX_ID_BYTES = 200;

/** A name that is safe as one file name inside a folder: no separators, no `.`/`..`, no control characters, at most MAX_ID_BYTES bytes. */
export function isSafeFileName(id: string): boolean {
  return id.length > 0 && Buffer.byteLength(id, 'utf8') <= MAX_ID_BYTES && id !== '.' && id !== '..' && !/[/\\\u0000-\u001f\u007f]/.test(id);
}

