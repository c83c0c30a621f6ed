/**
 * Files opened inside a folder, open-then-verify: the file is opened first, then the opened
 * descriptor's own real path (Linux: /proc/self/fd/N; elsewhere the realpath'd name whose device
 * and inode match the descriptor's) must lie inside one of the allowed roots. Checking a name and
 * then opening it again is a race: a local process that swaps a folder for a symlink between the
 * two gets a file outside served. What is read or streamed comes from the verified descriptor.
 * May import: core/.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { MAX_INPUT_BYTES } from './safety.js';

/** Whether `p` lies inside `root` (both real paths). */
export function insideRoot(root: string, p: string): boolean {
  const r = relative(root, p);
  return r === '' || (!isAbsolute(r) && !r.split(sep).includes('..'));
}

/** Why a confined open failed: 'outside' (the opened file lies outside every root) or an errno code. */
export class ConfinedError extends Error {
  constructor(
    readonly path: string,
    readonly code: string,
  ) {
    super(code === 'outside' ? `${path}: outside the allowed folder` : `${path}: cannot open (${code})`);
  }
}

/** Test hook: runs between the caller naming a file and opening it (to play a folder swapped by another process). */
export interface ConfinedHooks {
  beforeOpen?: (path: string) => void;
}

/** The real path of an open descriptor (null when it cannot be told). */
function fdRealPath(fd: number, path: string): string | null {
  if (process.platform === 'linux') {
    try {
      return realpathSync(`/proc/self/fd/${fd}`);
    } catch {
      /* no /proc: fall through */
    }
  }
  // Elsewhere: the name's real path, accepted only when it is the very file that is open.
  try {
    const real = realpathSync(path);
    const a = fstatSync(fd), b = statSync(real);
    return a.dev === b.dev && a.ino === b.ino ? real : null;
  } catch {
    return null;
  }
}

/** The roots as real paths (a root that does not exist allows nothing). */
export function realRoots(roots: readonly string[]): string[] {
  return roots.flatMap((r) => {
    try {
      return [realpathSync(r)];
    } catch {
      return [];
    }
  });
}

/** Where an opened file may lie: inside one of these folders (real paths, see realRoots), or where the predicate says yes. */
export type Allowed = readonly string[] | ((real: string) => boolean);

function verify(fd: number, path: string, allowed: Allowed): void {
  const real = fdRealPath(fd, path);
  const ok = real !== null && (typeof allowed === 'function' ? allowed(real) : allowed.some((r) => insideRoot(r, real)));
  if (!ok) throw new ConfinedError(path, 'outside');
}

const codeOf = (e: unknown) => (e as NodeJS.ErrnoException).code ?? 'error';

/**
 * Opens `path` read-only and without blocking (a FIFO never stalls), then verifies the descriptor
 * (module comment) against `roots` (Allowed). ConfinedError on failure.
 */
export async function openConfined(path: string, roots: Allowed, hooks: ConfinedHooks = {}): Promise<FileHandle> {
  hooks.beforeOpen?.(path);
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw new ConfinedError(path, codeOf(e));
  }
  try {
    verify(fh.fd, path, roots);
    return fh;
  } catch (e) {
    await fh.close();
    throw e;
  }
}

/** A regular file inside `roots` of at most MAX_INPUT_BYTES, read whole from the verified descriptor (ConfinedError otherwise). */
export function readConfinedSync(path: string, roots: Allowed, hooks: ConfinedHooks = {}): Buffer {
  hooks.beforeOpen?.(path);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw new ConfinedError(path, codeOf(e));
  }
  try {
    verify(fd, path, roots);
    const st = fstatSync(fd);
    if (!st.isFile()) throw new ConfinedError(path, 'not a regular file');
    if (st.size > MAX_INPUT_BYTES) throw new ConfinedError(path, `larger than ${MAX_INPUT_BYTES} bytes`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
