/** `egogeo doctor`: every required check OK on a working install; without the addon it names the fix and exits 1. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Check, formatChecks } from '../../src/doctor/index.js';
import { cli } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BUILT = existsSync(`${ROOT}build/Release/egogeo_native.node`);
const DIST = existsSync(`${ROOT}dist/cli/main.js`);

describe('egogeo doctor', () => {
  it.skipIf(!BUILT)('prints one line per check and exits 0 when the required ones pass', async () => {
    const r = await cli('doctor');
    expect(r.code).toBe(0);
    for (const name of ['node', 'opencv', 'addon', 'video decoding', '@u4/opencv4nodejs', 'cuda', '../shared']) {
      expect(r.out).toMatch(new RegExp(`^(OK|WARN|FAIL) +${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} `, 'm'));
    }
    for (const name of ['node', 'opencv', 'addon', 'video decoding']) expect(r.out).toMatch(new RegExp(`^OK +${name} `, 'm'));
    expect(r.out).toMatch(/^OK +addon +.*(release|debug|asan) build against OpenCV 4\./m);
    expect(r.out).toMatch(/all required checks OK\n$/);
  });

  it.skipIf(!DIST)('without the addon: names the fix and exits 1 (the built CLI, addon path overridden)', () => {
    const r = spawnSync(process.execPath, ['bin/egogeo.js', 'doctor'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, EGOGEO_NATIVE: `${ROOT}build/none/egogeo_native.node` },
    });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^FAIL +addon +the native engine is not built/m);
    expect(r.stdout).toMatch(/fix: npm run build:native/);
    expect(r.stdout).toMatch(/addon, video decoding failed/);
  });

  it('--json and the summary: optional failures do not fail the run', async () => {
    const checks: Check[] = [
      { name: 'node', status: 'ok', detail: 'v20', required: true },
      { name: 'cuda', status: 'fail', detail: 'x', fix: 'y', required: false },
    ];
    expect(formatChecks(checks).ok).toBe(true);
    expect(formatChecks([...checks, { name: 'addon', status: 'fail', detail: 'missing', fix: 'npm run build:native', required: true }]).ok).toBe(false);
  });
});
