/**
 * The CUDA path's fallbacks where there is no GPU (the device itself is checked by
 * bench/gpu/harness.py on a GPU machine): options.device 'gpu' without a library or a device is
 * one clear JS error, never a crash; the --device decision (decideDevice) with injected probes —
 * no driver, no library, no device, a self-check that passes or fails — and the track comparison
 * the self-check makes; a misspelt device names the option -- in the addon, in decideDevice and on
 * `egogeo run`, whose manifest records the device used.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareTracks, decideDevice, type DeviceProbes, GPU_TOLERANCES, type GpuCheck, gpuSelfCheck } from '../../src/native/device.js';
import { type GpuInfo, gpuInfo, nativePath, type PairMatches, processClip } from '../../src/native/index.js';
import { drivingClip } from '../helpers/render.js';
import { cli, ensureDist, NATIVE_BUILT, syntheticDataset } from '../run/fixtures.js';
import { thrown } from '../helpers/throws.js';
import { parseDevice } from '../../src/cli/options.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-gpu-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const NO_DEVICE = NATIVE_BUILT && gpuInfo().devices === 0;

describe.skipIf(!NATIVE_BUILT)('the GPU path without a GPU', () => {
  const clip = drivingClip({ frames: 4, speed: 8, yawRate: 0, seed: 1 });
  const input = { frames: clip.frames, timestamps: clip.timestamps };

  it("device 'gpu' without the library: one Error naming the device and why", () => {
    const saved = process.env.EGOGEO_GPU_LIB;
    process.env.EGOGEO_GPU_LIB = join(tmp, 'nowhere', 'libegogeo_gpu.so');
    try {
      const e = thrown(() => processClip(input, { device: 'gpu', scale: 'none' }));
      expect(e.message).toMatch(/^processClip: --device gpu: no CUDA device \(.*nowhere\/libegogeo_gpu\.so/);
      expect(e.message.split('\n')).toHaveLength(1);
      const g = gpuInfo();
      expect(g).toMatchObject({ loaded: false, devices: 0, device: '' });
      expect(g.reason).toMatch(/nowhere/);
    } finally {
      if (saved === undefined) delete process.env.EGOGEO_GPU_LIB;
      else process.env.EGOGEO_GPU_LIB = saved;
    }
    // The process is fine afterwards: the same clip runs on the CPU.
    expect(processClip(input, { device: 'cpu', scale: 'none' }).pairs).toHaveLength(3);
  });

  it.skipIf(!NO_DEVICE)("device 'gpu' with the library but no device (or driver): the same one-line Error", () => {
    const g = gpuInfo();
    const beside = join(dirname(nativePath()!), 'libegogeo_gpu.so');
    // Built wherever nvcc exists (as here); elsewhere the loader says it is missing.
    expect(g.path).toBe(beside);
    if (existsSync(beside)) expect(g).toMatchObject({ loaded: true, devices: 0, reason: expect.stringMatching(/no device/) });
    const e = thrown(() => processClip(input, { device: 'gpu', scale: 'none' }));
    expect(e.message).toMatch(/^processClip: --device gpu: no CUDA device \(/);
  });

  it('a misspelt device is a TypeError naming options.device; cpu is the default', () => {
    const e = thrown(() => processClip(input, { device: 'cuda' as never }));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toBe("processClip: options.device must be one of 'cpu', 'gpu', got 'cuda'");
    const a = processClip(input, { scale: 'none' }), b = processClip(input, { scale: 'none', device: 'cpu' });
    expect(Array.from(b.rotations)).toEqual(Array.from(a.rotations));
  });

  it.skipIf(!NO_DEVICE)("decideDevice on this machine: 'auto' is the CPU, 'gpu' and misspellings throw naming the flag", () => {
    expect(decideDevice('auto').device).toBe('cpu');
    expect(decideDevice(undefined).device).toBe('cpu');
    expect(decideDevice('cpu')).toEqual({ device: 'cpu', note: null, check: null });
    expect(() => decideDevice('gpu')).toThrow(/^--device gpu: no CUDA device \(/);
    expect(() => parseDevice('bogus')).toThrow("--device must be one of auto, cpu, gpu, got 'bogus'"); // the CLI's edge (cli/options.ts)
  });

  it('the self-check clip tracks the same on the CPU twice: all tracks kept by both, end points equal', () => {
    const c = gpuSelfCheck(['cpu', 'cpu']);
    expect(c).toMatchObject({ ok: true, keptByBothOfEither: 1, medianEndpointDiffPx: 0 });
    expect(c.tracks.both).toBeGreaterThan(300); // 3 pairs of a textured 640×360 street
  });

  it.skipIf(!NO_DEVICE)('the self-check itself fails here with one line saying why (no device)', () => {
    const c = gpuSelfCheck();
    expect(c.ok).toBe(false);
    expect(c.detail).toMatch(/^the GPU path failed on the check clip: processClip: --device gpu: no CUDA device/);
    expect(c.detail.split('\n')).toHaveLength(1);
  });
});

/** Probes as a GPU machine of each kind would answer them; counts the self-checks run. */
function probes(kind: 'no driver' | 'no library' | 'no device' | 'pass' | 'fail' | 'selftest fails'): DeviceProbes & { checks: number } {
  const lib = { path: '/x/libegogeo_gpu.so', file: '/x/libegogeo_gpu.so' };
  const info: GpuInfo =
    kind === 'no library' ? { loaded: false, ...lib, file: '', devices: 0, device: '', reason: 'libcudart.so.13: cannot open shared object file', selftest: '' }
    : kind === 'no device' ? { loaded: true, ...lib, devices: 0, device: '', reason: '/x/libegogeo_gpu.so loads but sees no device or driver', selftest: '' }
    : kind === 'selftest fails' ? { loaded: true, ...lib, devices: 1, device: 'NVIDIA H200', reason: '', selftest: 'device self-test failed (160x120 built-in image): FAST score at (14, 3) is 17 on the device, 16 on the host (1 of 19200 pixels differ)' }
    : { loaded: true, ...lib, devices: 1, device: 'NVIDIA H200', reason: '', selftest: 'ok' };
  const check: GpuCheck = kind === 'fail'
    ? { ok: false, detail: '91.0% of tracks kept by both (needs ≥ 99%), median end-point difference 0.210 px (needs ≤ 0.05) over 400 tracks', keptByBothOfEither: 0.91, medianEndpointDiffPx: 0.21, tracks: { cpu: 430, gpu: 410, both: 400 } }
    : { ok: true, detail: '100.0% of tracks kept by both', keptByBothOfEither: 1, medianEndpointDiffPx: 0.001, tracks: { cpu: 400, gpu: 400, both: 400 } };
  const p = {
    checks: 0,
    driverNode: () => kind !== 'no driver',
    gpuInfo: () => info,
    selfCheck: () => {
      p.checks++;
      return check;
    },
  };
  return p;
}

describe('--device decision (injected probes, no GPU needed)', () => {
  it('no driver node: auto is the CPU without a note or a check; gpu says no device', () => {
    const p = probes('no driver');
    expect(decideDevice('auto', p)).toEqual({ device: 'cpu', note: null, check: null });
    expect(p.checks).toBe(0);
  });

  it('a driver but no loadable library, or a library that sees no device: auto is the CPU with one note; gpu throws one line', () => {
    for (const kind of ['no library', 'no device'] as const) {
      const p = probes(kind);
      const d = decideDevice('auto', p);
      expect(d.device).toBe('cpu');
      expect(d.note).toMatch(/^--device auto: running on the CPU: /);
      expect(d.note!.split('\n')).toHaveLength(1);
      expect(() => decideDevice('gpu', p)).toThrow(/^--device gpu: no CUDA device \(/);
      expect(p.checks).toBe(0);
    }
    expect(decideDevice('auto', probes('no library')).note).toContain('libcudart.so.13');
  });

  it('a device whose self-check passes: auto and gpu both use it, after one check each', () => {
    const p = probes('pass');
    expect(decideDevice('auto', p)).toMatchObject({ device: 'gpu', note: null, check: { ok: true } });
    expect(decideDevice('gpu', p).device).toBe('gpu');
    expect(p.checks).toBe(2);
    expect(decideDevice('cpu', p).device).toBe('cpu');
    expect(p.checks).toBe(2); // cpu checks nothing
  });

  it('a device whose self-check fails: auto runs on the CPU with one note naming the figures; gpu stops with one line', () => {
    const p = probes('fail');
    const d = decideDevice('auto', p);
    expect(d.device).toBe('cpu');
    expect(d.note).toBe('--device auto: running on the CPU: the GPU self-check failed on NVIDIA H200: 91.0% of tracks kept by both (needs ≥ 99%), median end-point difference 0.210 px (needs ≤ 0.05) over 400 tracks');
    expect(() => decideDevice('gpu', p)).toThrow(/^--device gpu: the GPU self-check failed on NVIDIA H200: 91\.0% of tracks/);
    expect(() => decideDevice('gpu', p, '--gpu-flag')).toThrow(/^--gpu-flag gpu: /);
  });
});

describe('--device decision: the library\'s device self-test (injected probes)', () => {
  it('a device failing it: gpu stops with its line, auto runs on the CPU with it; the track check is not run', () => {
    const p = probes('selftest fails');
    const line = 'NVIDIA H200: device self-test failed (160x120 built-in image): FAST score at (14, 3) is 17 on the device, 16 on the host (1 of 19200 pixels differ)';
    expect(() => decideDevice('gpu', p)).toThrow(`--device gpu: ${line}`);
    expect(decideDevice('auto', p)).toEqual({ device: 'cpu', note: `--device auto: running on the CPU: ${line}`, check: null });
    expect(p.checks).toBe(0);
  });
});

describe('the self-check comparison (compareTracks)', () => {
  /** One pair of n tracks on a grid, ids 0..n-1, moved by (dx, dy); `drop` ids left out. */
  const pair = (n: number, dx = 0, dy = 0, drop: Set<number> = new Set(), idShift = 0): PairMatches => {
    const ids = [...Array(n).keys()].filter((i) => !drop.has(i));
    const prev = new Float32Array(ids.flatMap((i) => [10 + (i % 20) * 30, 10 + Math.floor(i / 20) * 30]));
    const curr = new Float32Array(ids.flatMap((i) => [10 + (i % 20) * 30 + 2 + dx, 10 + Math.floor(i / 20) * 30 + 1 + dy]));
    return { prev, curr, ids: Int32Array.from(ids, (i) => i + idShift), inliers: new Uint8Array(ids.length).fill(1) };
  };

  it('uses the GPU harness tolerances (native/gpu/tolerances.json)', () => {
    expect(GPU_TOLERANCES).toMatchObject({ median_endpoint_diff_px: 0.05, kept_by_both_of_either: 0.99 });
  });

  it('identical tracks pass; end points 0.04 px apart pass, 0.06 px fail', () => {
    const same = compareTracks([pair(200), pair(200)], [pair(200), pair(200)]);
    expect(same).toMatchObject({ ok: true, keptByBothOfEither: 1, medianEndpointDiffPx: 0, tracks: { cpu: 400, gpu: 400, both: 400 } });
    expect(compareTracks([pair(200)], [pair(200, 0.04)]).ok).toBe(true);
    const off = compareTracks([pair(200)], [pair(200, 0.06)]);
    expect(off.ok).toBe(false);
    expect(off.medianEndpointDiffPx).toBeCloseTo(0.06, 5);
    expect(off.detail).toMatch(/median end-point difference 0\.060 px \(needs ≤ 0\.05\)/);
  });

  it('tracks kept by one device only: 1 of 200 lost passes (99.5%), 3 of 200 fail (98.5%)', () => {
    expect(compareTracks([pair(200)], [pair(200, 0, 0, new Set([5]))]).keptByBothOfEither).toBeCloseTo(199 / 200, 12);
    expect(compareTracks([pair(200)], [pair(200, 0, 0, new Set([5]))]).ok).toBe(true);
    const lost = compareTracks([pair(200)], [pair(200, 0, 0, new Set([1, 2, 3]))]);
    expect(lost.ok).toBe(false);
    expect(lost.keptByBothOfEither).toBeCloseTo(197 / 200, 12);
  });

  it('ids that do not start at the same point are not paired; different pair counts or no tracks fail', () => {
    const shifted = compareTracks([pair(200)], [pair(200, 0, 0, new Set(), 1)]);
    expect(shifted.ok).toBe(false);
    expect(shifted.tracks.both).toBe(0);
    expect(compareTracks([pair(10)], [pair(10), pair(10)]).detail).toBe('the CPU gives 1 pairs of tracks, the GPU 2');
    expect(compareTracks([], [])).toMatchObject({ ok: false, detail: 'no track to compare (CPU 0, GPU 0)' });
  });
});

describe.skipIf(!NATIVE_BUILT)('egogeo run --device', () => {
  let ds = '';
  beforeAll(() => {
    ensureDist();
    ds = syntheticDataset(join(tmp, 'synth'), [{ id: 'straight', speed: 8, yawRate: 0 }]);
  });
  const run = (name: string, ...args: string[]) => {
    mkdirSync(join(tmp, name), { recursive: true });
    return cli(['run', '--dataset', ds, '-o', join(tmp, name, 'preds.jsonl'), '--workers', '1', '--no-progress', ...args]);
  };

  it('bogus: exit 1, one line naming the option', () => {
    const r = run('bogus', '--device', 'bogus');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("egogeo: --device must be one of auto, cpu, gpu, got 'bogus'\n");
    expect(existsSync(join(tmp, 'bogus', 'preds.jsonl'))).toBe(false);
  });

  it.skipIf(!NO_DEVICE)('gpu without a device: exit 1 with one clear line, before any clip runs', () => {
    const r = run('gpu', '--device', 'gpu');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^egogeo: --device gpu: no CUDA device \([^\n]*\)\n$/);
    expect(existsSync(join(tmp, 'gpu', 'preds.jsonl.errors.jsonl'))).toBe(false);
  });

  it.skipIf(!NO_DEVICE)('auto (the default) runs on the CPU here and says so in the run record and manifest', () => {
    const r = run('auto');
    expect(r.code, r.stderr).toBe(0);
    const out = join(tmp, 'auto', 'preds.jsonl');
    expect(JSON.parse(readFileSync(`${out}.manifest.json`, 'utf8')).settings.device).toBe('cpu');
    expect(JSON.parse(readFileSync(`${out}.run.json`, 'utf8')).device).toBe('cpu');
  });
});
