/** The engine configuration (src/vo/config.ts): one place for the run's engine choices, their defaults and checks. */
import { describe, expect, it } from 'vitest';
import type { Clip } from '../../src/core/clip.js';
import { InputError } from '../../src/core/errors.js';
import { optionTable, PHOTOMETRIC } from '../../src/native/index.js';
import { engineFromFlags } from '../../src/cli/options.js';
import { clipOptions, ENGINE_DEFAULTS, engineConfig, engineInput, RESOLUTIONS, engineRecord, WIDE_BASELINE, WIDE_BASELINE_FULL } from '../../src/vo/config.js';
import { loadFrames } from '../../src/vo/frames.js';
import type { DeviceProbes, GpuCheck } from '../../src/native/device.js';
import { cli } from '../helpers/cli.js';

const check = (ok: boolean): GpuCheck => ({ ok, detail: ok ? 'agree' : 'disagree', keptByBothOfEither: ok ? 1 : 0.5, medianEndpointDiffPx: 0, tracks: { cpu: 1, gpu: 1, both: ok ? 1 : 0 } });
const gpu = (ok: boolean): DeviceProbes => ({ driverNode: () => true, gpuInfo: () => ({ loaded: true, devices: 1, device: 'Test GPU', selftest: 'ok' }) as never, selfCheck: () => check(ok) });
const NO_DRIVER: DeviceProbes = { driverNode: () => false, gpuInfo: () => { throw new Error('not asked'); }, selfCheck: () => { throw new Error('not asked'); } };
const GPU_OK = gpu(true), GPU_BAD = gpu(false);

describe('engineConfig', () => {
  it('fills the defaults and keeps what is given', () => {
    expect(engineConfig({}, 'x', NO_DRIVER)).toEqual({ method: 'egogeo', frames: null, scale: 'road', photometric: 'pair', device: 'cpu', resolution: 'auto' });
    expect(engineConfig({ frames: 10, photometric: 'gain', scale: undefined }, 'x', NO_DRIVER)).toEqual({ ...ENGINE_DEFAULTS, device: 'cpu', frames: 10, photometric: 'gain' });
  });
  it('device: auto by default, as the CLI says; decided like --device auto (the GPU only when its self-check passes)', async () => {
    expect(ENGINE_DEFAULTS.device).toBe('auto');
    expect(engineConfig({}, 'x', NO_DRIVER).device).toBe('cpu');
    expect(engineConfig({}, 'x', GPU_OK).device).toBe('gpu');
    expect(engineConfig({ device: 'auto' }, 'x', GPU_BAD).device).toBe('cpu');
    expect(engineConfig({ device: 'cpu' }, 'x', GPU_OK).device).toBe('cpu');
    expect(engineFromFlags({}, 'cpu').device).toBe('cpu');
    const help = await cli('run', '--help');
    expect(help.out.replace(/\s+/g, ' ')).toContain(`(default: ${ENGINE_DEFAULTS.device}; with --queue: cpu`);
    expect((await cli('baseline', '--help')).out.replace(/\s+/g, ' ')).toContain(`(default: ${ENGINE_DEFAULTS.device}; with --queue: cpu`);
  });
  it('refuses an unknown field or a bad value with one line naming it', () => {
    expect(() => engineConfig({ photometrics: 'pair' } as never)).toThrow(/unknown field 'photometrics'/);
    expect(() => engineConfig({ photometric: 'hdr' as never })).toThrow(`engine configuration: photometric must be one of ${PHOTOMETRIC.join(', ')}, got "hdr"`);
    expect(() => engineConfig({ frames: 1 })).toThrow(/frames must be null \(all\) or an integer >= 2, got 1/);
    expect(() => engineConfig({ device: 'tpu' as never })).toThrow('engine configuration: device must be one of auto, cpu, gpu, got "tpu"');
    expect(() => engineConfig({ method: 'orb-slam' as never })).toThrow(InputError);
    expect(() => engineConfig({ resolution: 'quarter' as never })).toThrow('engine configuration: resolution must be one of auto, half, full, got "quarter"');
  });
  it('from command-line flags: the flag names the error', () => {
    expect(engineFromFlags({ frames: '10', scale: 'none' }, 'gpu')).toEqual({ ...ENGINE_DEFAULTS, frames: 10, scale: 'none', device: 'gpu' });
    expect(engineFromFlags({ frames: 'all' }).frames).toBeNull();
    expect(() => engineFromFlags({ frames: '1' })).toThrow("--frames must be 'all' or an integer >= 2, got '1'");
    expect(() => engineFromFlags({ scale: 'metric' })).toThrow("--scale must be one of road, gt, none, got 'metric'");
    expect(() => engineFromFlags({ photometric: 'x' })).toThrow(/^--photometric must be one of/);
    expect(() => engineFromFlags({ method: 'x' })).toThrow("--method must be one of egogeo, vo-proxy, flow-heuristic, got 'x'");
    expect(engineFromFlags({ resolution: 'full' }).resolution).toBe('full');
    expect(engineFromFlags({ resolution: 'half' }).resolution).toBe('half');
    expect(() => engineFromFlags({ resolution: 'quarter' })).toThrow("--resolution must be one of auto, half, full, got 'quarter'");
  });
  it('the run record names the method, the choices and the wide-baseline rule', () => {
    expect(engineRecord(engineConfig({ frames: 10 }))).toEqual({
      method: 'egogeo', photometric: 'pair', scale: 'road', frames: 10, resolution: 'auto',
      wide_baseline: {
        when: 'median frame interval > 0.15 s (after the frame selection)',
        options: { ...WIDE_BASELINE, ...WIDE_BASELINE_FULL },
        also: { options: { ...WIDE_BASELINE }, kept: "full size where its own quality verdict is ok and the tracked road measured at least half its moving pairs, or its direct road alignments that found the road cover half of them and bear its level out (median within a third); otherwise half size runs too (frames area-averaged from the full-size decode) and full size is kept unless its scale failed or the two sizes' distances travelled differ by more than a third: then the estimate with the smaller mean relative speed uncertainty (scale road)" },
      },
    });
    expect(engineRecord(engineConfig({ frames: 10, resolution: 'half' })).wide_baseline).toEqual({ when: expect.any(String), options: { ...WIDE_BASELINE } });
    expect(engineRecord(engineConfig({ frames: 10, resolution: 'full' })).wide_baseline.options).toEqual({ ...WIDE_BASELINE, ...WIDE_BASELINE_FULL });
    // Other scales track at half size alone under 'auto'.
    expect(engineRecord(engineConfig({ frames: 10, scale: 'none' })).wide_baseline).toEqual({ when: expect.any(String), options: { ...WIDE_BASELINE } });
  });
});

describe('what a clip hands the engine', () => {
  const ts = (dt: number, n = 31) => Float64Array.from({ length: n }, (_, i) => i * dt);
  const clip: Clip = { id: 'c', source: 'synthetic', index: 0, qa: [], camera: { height: 1.4, roadNormal: [0, 1, 0] }, frames: Array.from({ length: 31 }, () => ({ data: new Uint8Array(4), width: 2, height: 2 })), timestamps: ts(0.1) };

  it('the camera, the photometric default, the wide-baseline preset only for frames far apart, the caller last', () => {
    expect(clipOptions(clip, ts(0.1))).toEqual({ cameraHeight: 1.4, roadNormal: [0, 1, 0], photometric: 'pair' });
    expect(clipOptions(clip, ts(0.33, 10))).toEqual({ cameraHeight: 1.4, roadNormal: [0, 1, 0], photometric: 'pair', ...WIDE_BASELINE });
    expect(clipOptions(clip, ts(0.33, 10), { downsample: 1, photometric: 'none', cameraHeight: undefined })).toMatchObject({ downsample: 1, photometric: 'none', cameraHeight: 1.4 });
  });

  it('engineInput selects the configuration\u2019s frames and passes its choices', () => {
    const full = loadFrames(clip);
    const { clip: sel, options } = engineInput(full, engineConfig({ frames: 10, photometric: 'none' }));
    expect(Array.from(sel.timestamps).map((t) => Math.round(t * 10))).toEqual([0, 3, 7, 10, 13, 17, 20, 23, 27, 30]);
    // Frames far apart, resolution 'auto': full size first (half size is the alternative).
    expect(options).toEqual({ scale: 'road', photometric: 'none', device: 'cpu', gtSpeeds: undefined, ...WIDE_BASELINE_FULL });
    expect(() => engineInput(full, engineConfig({ scale: 'gt' }))).toThrow(/scale 'gt' needs the clip's ground-truth trajectory/);
  });

  it("resolution 'full' tracks frames far apart at their own size, and changes nothing for dense frames", () => {
    const full = loadFrames(clip);
    const wide = engineInput(full, engineConfig({ frames: 10, resolution: 'full' }));
    expect(wide.options).toEqual({ scale: 'road', photometric: 'pair', device: 'cpu', gtSpeeds: undefined, ...WIDE_BASELINE_FULL });
    // What the addon gets: the preset's model choices, the full-size pixel options over its half-size ones.
    expect(clipOptions(clip, wide.clip.timestamps, wide.options)).toMatchObject({ ...WIDE_BASELINE, downsample: 1, kltWindow: 13, kltLevels: 4, minDistance: 8 });
    expect(engineInput(full, engineConfig({ resolution: 'full' })).options).toEqual(engineInput(full, engineConfig()).options);
    expect(wide.alternative).toBeUndefined();
  });

  it("resolution 'auto' (the default) hands frames far apart to the engine at both sizes, full size first, with the road scale only", () => {
    const full = loadFrames(clip);
    const auto = engineInput(full, engineConfig({ frames: 10 }));
    const half = engineInput(full, engineConfig({ frames: 10, resolution: 'half' }));
    expect(auto.options).toEqual(engineInput(full, engineConfig({ frames: 10, resolution: 'full' })).options);
    expect(auto.alternative).toEqual(half.options);
    expect(half.alternative).toBeUndefined();
    // Dense frames: one size; other scales: half size only (their speeds carry no uncertainty to compare).
    expect(engineInput(full, engineConfig()).alternative).toBeUndefined();
    expect(engineInput(full, engineConfig({ frames: 10, scale: 'none' })).alternative).toBeUndefined();
  });
  it("photometric: the addon's default is 'none', a run's 'pair', and every run passes its own, so the addon's never reaches a run", () => {
    // The addon's: a raw processClip call changes no pixel unless asked (native/vo/types.h).
    expect(optionTable().find((o) => o.name === 'photometric')?.default).toBe('none');
    expect(ENGINE_DEFAULTS.photometric).toBe('pair');
    const full = loadFrames(clip);
    for (const frames of [null, 10]) for (const resolution of RESOLUTIONS) for (const scale of ['road', 'none'] as const) for (const photometric of ['pair', 'none', 'gain'] as const) {
      const e = engineInput(full, engineConfig({ frames, resolution, scale, photometric }));
      expect(e.options.photometric).toBe(photometric);
      if (e.alternative) expect(e.alternative.photometric).toBe(photometric);
    }
    expect(clipOptions(clip, ts(0.1)).photometric).toBe(ENGINE_DEFAULTS.photometric);
  });
});
