/**
 * The GPU library's own tests (native/gpu/CMakeLists.txt: the C interface and its "no device" path,
 * the host reference behind the batched interface, the self-test's injected failure, the device
 * time per stage, the warp's dealing of a KLT window and the selection's block with host threads
 * as the device's threads, the throughput driver), run through ctest from the addon's build so `npm test` runs them wherever the library
 * was built; on a GPU machine the same cases hold the device to the host reference.
 * Skips where the GPU library was not built (no nvcc): then there is nothing to test.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NATIVE_BUILT, ROOT } from '../run/fixtures.js';

const DIR = join(ROOT, 'build/native/gpu');
const BUILT = NATIVE_BUILT && existsSync(join(DIR, 'CTestTestfile.cmake'));
if (NATIVE_BUILT && !BUILT) console.warn('[egogeo tests] build/native/gpu has no ctest (libegogeo_gpu not built: no nvcc): the GPU library ctest skips.');

describe.skipIf(!BUILT)('libegogeo_gpu ctest (native/gpu)', () => {
  it('every case passes, the warp-dealing, selection-block and bench-driver cases among them', () => {
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('EGOGEO_GPU_')) delete env[k];  // each case sets its own
    const r = spawnSync('ctest', ['--test-dir', DIR, '--output-on-failure', '--timeout', '180'], { encoding: 'utf8', env });
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
    expect(r.error, 'ctest runs (cmake installs it)').toBeUndefined();
    expect(out).toMatch(/100% tests passed, 0 tests failed out of \d+/);
    for (const name of ['egogeo_gpu_api', 'egogeo_gpu_api_reference', 'egogeo_gpu_selftest_inject_reference', 'egogeo_gpu_klt_group', 'egogeo_gpu_select_block', 'egogeo_gpu_bench_reference'])
      expect(out, name).toMatch(new RegExp(`${name} \\.+\\s+Passed`));
    expect(r.status, out.slice(-3000)).toBe(0);
  }, 240_000);
});
