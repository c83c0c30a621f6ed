/**
 * The README's library example ("As a library"), run as written against the built package
 * (dist/): on a rendered set made here and, when ../shared is there, on the published copy
 * (nuScenes frames through the tables, CARLA videos). Only the paths are substituted.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needsShared, sharedPath } from '../helpers/shared.js';
import { cli, ensureDist, NATIVE_BUILT, ROOT } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-readme-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The first js block after "### As a library". */
function example(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf('### As a library');
  const start = readme.indexOf('```js\n', from);
  expect(from >= 0 && start > from, 'README: "### As a library" with a js block').toBe(true);
  return readme.slice(start + 6, readme.indexOf('```', start + 6));
}

function runExample(dataset: string, nuscenes: string): { code: number | null; out: string[]; err: string; dir: string } {
  const code = example()
    .replace("from 'egogeo'", `from ${JSON.stringify(join(ROOT, 'dist/index.js'))}`)
    .replaceAll("'egodyn-bench'", JSON.stringify(dataset))
    .replaceAll("'/data/nuscenes'", JSON.stringify(nuscenes));
  const dir = mkdtempSync(join(tmp, 'run-'));
  writeFileSync(join(dir, 'example.mjs'), code);
  const r = spawnSync(process.execPath, ['example.mjs'], { cwd: dir, encoding: 'utf8', timeout: 300_000 });
  return { code: r.status, out: r.stdout.split('\n').filter(Boolean), err: r.stderr, dir };
}

function expectOutput(r: ReturnType<typeof runExample>): void {
  expect(r.code, r.err).toBe(0);
  expect(Object.keys(JSON.parse(r.out[0]))).toHaveLength(14);
  const speeds = r.out[1].split(' ').map(Number);
  expect(speeds).toHaveLength(31);
  expect(speeds.every(Number.isFinite)).toBe(true);
  expect(existsSync(join(r.dir, 'preds.jsonl'))).toBe(true);
}

describe.skipIf(!NATIVE_BUILT)('the README library example', () => {
  let synth = '';
  beforeAll(() => {
    ensureDist();
    synth = join(tmp, 'synth');
    const r = cli(['synth', '--clips', '2', '--seed', '11', '--out', synth, '--no-progress']);
    expect(r.code, r.stderr).toBe(0);
  });

  it('runs as written on a rendered set (its first clip, the 14 answers, the npz speeds, then every clip)', () => {
    const r = runExample(synth, '/nonexistent/nuscenes');
    expectOutput(r);
  });

  it.skipIf(!needsShared('the README example on the published copy', 'data/published/egodyn-bench', 'data/published/nuscenes'))(
    'runs as written on the published copy (EgoDyn-Bench as downloaded, nuScenes tables, CARLA transferred videos)',
    () => {
      const r = runExample(sharedPath('data/published/egodyn-bench'), sharedPath('data/published/nuscenes'));
      expectOutput(r);
    },
  );
});
