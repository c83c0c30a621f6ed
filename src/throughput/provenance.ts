/**
 * What a speed figure was measured with: egogeo's version, the engine build (the addon file's
 * hash, as run records name it), the git commit when egogeo runs from a checkout, the machine and
 * Node. A figure without these cannot be compared with another (machines here differ by 1.6x).
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type EngineVersion, engineVersion } from '../native/index.js';

export interface Provenance {
  egogeo: string;
  engine: EngineVersion;
  /** `git rev-parse HEAD` in egogeo's folder (with `-dirty` when tracked files differ); null outside a checkout or without git. */
  gitCommit: string | null;
  machine: { cpuModel: string | null; cpus: number; availableParallelism: number; memoryGb: number; platform: string; arch: string };
  node: string;
}

/** The package folder (dist/ and src/ sit in it). */
const PACKAGE_DIR = fileURLToPath(new URL('../../', import.meta.url));

const samePath = (a: string, b: string): boolean => {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
};

/** Best effort: null whenever git, or a repository whose root is egogeo's folder, is not there. */
export function gitCommit(dir = PACKAGE_DIR): string | null {
  const git = (...args: string[]) => {
    const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8', timeout: 5000 });
    return r.status === 0 ? r.stdout.trim() : null;
  };
  // Installed inside another project's checkout (node_modules/egogeo), git would name that project's commit.
  const top = git('rev-parse', '--show-toplevel');
  if (!top || !samePath(top, dir)) return null;
  const head = git('rev-parse', 'HEAD');
  if (!head || !/^[0-9a-f]{40}$/.test(head)) return null;
  const dirty = git('status', '--porcelain', '--untracked-files=no');
  return dirty ? `${head}-dirty` : head;
}

export function provenance(): Provenance {
  const c = cpus();
  const engine = engineVersion();
  return {
    egogeo: engine.egogeo,
    engine,
    gitCommit: gitCommit(),
    machine: {
      cpuModel: c[0]?.model?.trim() || null,
      cpus: c.length,
      availableParallelism: availableParallelism(),
      memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
      platform: process.platform,
      arch: process.arch,
    },
    node: process.version,
  };
}
