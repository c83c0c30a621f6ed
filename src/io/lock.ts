/**
 * One writer per output: `OUT.lock` beside the output, created exclusively (O_EXCL) and holding the
 * owner's pid and host. A second `egogeo run`/`merge` on the same output refuses at once with one
 * line naming the owner; a lock whose process is gone (killed, crashed, power cut) is stale and
 * taken over. The lock is removed when the owner releases it or exits (also on a signal).
 *
 * The lock appears with its content: written to a private file first, then hard-linked into place
 * (link fails if the lock exists), so another process never reads a lock that is created but not yet
 * written (it would take it for a stale one). Where the filesystem has no hard links, O_EXCL create
 * then write.
 */
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { hostname } from 'node:os';
import { InputError } from '../core/errors.js';
import { errnoText, writeTarget } from './safety.js';

/** Locks this process holds (a second run in the same process is refused too). */
const held = new Set<string>();

export interface OutputLock {
  path: string;
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Who holds `<output>.lock` now: a live process (or one on another host), else null (no lock, or a stale one). */
export function lockHolder(output: string): { pid: number; host?: string; command?: string } | null {
  let owner: { pid?: number; host?: string; command?: string };
  try {
    owner = JSON.parse(readFileSync(`${writeTarget(output)}.lock`, 'utf8'));
  } catch {
    return null;
  }
  const pid = Number(owner.pid);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const otherHost = !!owner.host && owner.host !== hostname();
  return otherHost || alive(pid) ? { pid, host: owner.host, command: owner.command } : null;
}

/** Creates `path` holding `text`, failing with EEXIST when it exists; the file never appears empty. */
function createWith(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  try {
    linkSync(tmp, path);
    return;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw e;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
  }
  // No hard links here: exclusive create, then write.
  const fd = openSync(path, 'wx');
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Takes `<output>.lock` (the real output behind a symlink); InputError when another live process holds it. */
export function lockOutput(output: string, what = 'egogeo run'): OutputLock {
  const path = `${writeTarget(output)}.lock`;
  if (held.has(path)) throw new InputError(`${output}: this process is already writing this output; use another -o`);
  const me = `${JSON.stringify({ pid: process.pid, host: hostname(), command: what, since: new Date().toISOString() })}\n`;
  // `-o results/preds.jsonl` creates results/, as the output's side files need it too.
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(code === 'EEXIST' || code === 'ENOTDIR' ? `${output}: ${dirname(output)} is not a folder` : `${output}: cannot create its folder (${errnoText(e)})`);
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      createWith(path, me);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new InputError(`${path}: cannot create the output lock (${errnoText(e)})`);
      let owner: { pid?: number; host?: string; command?: string } = {};
      try {
        owner = JSON.parse(readFileSync(path, 'utf8'));
      } catch {
        /* torn or foreign: treated as stale below */
      }
      const pid = Number(owner.pid);
      const otherHost = owner.host && owner.host !== hostname();
      if (Number.isInteger(pid) && pid > 0 && (otherHost || (pid !== process.pid && alive(pid)))) {
        throw new InputError(
          `${output}: another ${owner.command ?? 'egogeo'} (pid ${pid}${otherHost ? ` on ${owner.host}` : ''}) is writing this output; ` +
            `wait for it to finish (or stop it and rerun to resume), or use another -o${otherHost ? ` (remove ${path} if that host is gone)` : ''}`,
        );
      }
      try {
        unlinkSync(path); // stale: its process is gone
      } catch {
        /* someone else took it over first: retry */
      }
      continue;
    }
    held.add(path);
    const release = () => {
      if (!held.has(path)) return;
      held.delete(path);
      process.removeListener('exit', release);
      try {
        const cur = JSON.parse(readFileSync(path, 'utf8')) as { pid?: number };
        if (cur.pid === process.pid) unlinkSync(path);
      } catch {
        /* already gone */
      }
    };
    process.on('exit', release);
    return { path, release };
  }
  throw new InputError(`${path}: could not take the output lock (another process keeps taking it)`);
}
