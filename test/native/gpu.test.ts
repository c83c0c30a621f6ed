/**
 * The CUDA path's fallbacks where there is no GPU (the device itself is checked by
 * bench/gpu/harness.py on a GPU machine): options.device 'gpu' without a library or a device is
 * one clear JS error, never a crash; 'auto' resolves to the CPU; a misspelt device names the option
 * -- in the addon, in resolveDevice and on `egogeo run`, whose manifest records the device used.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpuInfo, nativePath, processClip, resolveDevice } from '../../src/native/index.js';
import { drivingClip } from '../helpers/render.js';
import { cli, ensureDist, NATIVE_BUILT, syntheticDataset } from '../run/fixtures.js';
import { thrown } from '../helpers/throws.js';

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

  it.skipIf(!NO_DEVICE)("resolveDevice: 'auto' is the CPU here, 'gpu' and misspellings throw naming the flag", () => {
    expect(resolveDevice('auto')).toBe('cpu');
    expect(resolveDevice(undefined)).toBe('cpu');
    expect(resolveDevice('cpu')).toBe('cpu');
    expect(() => resolveDevice('gpu')).toThrow(/^--device gpu: no CUDA device \(/);
    expect(() => resolveDevice('bogus')).toThrow("--device must be one of auto, cpu, gpu, got 'bogus'");
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
