/**
 * `npm run check:deps` (.dependency-cruiser.cjs): src/ passes, and a cycle between folders fails
 * even when no module cycle closes (issue 52: io -> grade -> oracle -> io went unnoticed).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-deps-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cruise = (cwd: string) => spawnSync(process.execPath, [DEPCRUISE, 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], { cwd, encoding: 'utf8' });

/** A project with this repository's rules and the given src/ files (path → imports). */
function project(name: string, files: Record<string, string[]>): string {
  const dir = join(tmp, name);
  for (const [f, imports] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), `${imports.map((m, i) => `import * as m${i} from '${m}';\nvoid m${i};`).join('\n')}\nexport const x = 1;\n`);
  }
  copyFileSync(join(ROOT, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022' } }));
  writeFileSync(join(dir, 'package.json'), '{"type": "module"}');
  return dir;
}

describe('dependency rules', () => {
  it('src/ has no violation (no module cycle, no folder cycle)', () => {
    const r = cruise(ROOT);
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it('a folder cycle without a module cycle fails as no-folder-cycle; the same modules without the closing edge do not', () => {
    // io/reader -> grade/parse -> oracle/questions -> io/safety: every module once, no module cycle.
    const chain = {
      'src/io/reader.ts': ['../grade/parse.js'],
      'src/grade/parse.ts': ['../oracle/questions.js'],
      'src/oracle/questions.ts': ['../io/safety.js'],
      'src/io/safety.ts': [],
    };
    const cyc = cruise(project('cycle', chain));
    expect(cyc.status).not.toBe(0);
    expect(cyc.stdout).toMatch(/no-folder-cycle: src\/(io|grade|oracle) /);
    expect(cyc.stdout).not.toMatch(/no-circular/);
    const open = cruise(project('open', { ...chain, 'src/oracle/questions.ts': [] }));
    expect(open.stdout).not.toMatch(/no-folder-cycle/);
  });
});
