/**
 * The engine configuration: everything that decides what a run computes for a clip — the method,
 * the frames it sees, the metric scale, the photometric stage, the device — named, defaulted and
 * validated here once. The CLI builds it from its flags (cli/options.ts `engineFromFlags`), the runner hands it to
 * every clip task, the run record stores it (`engineRecord`), a resume compares it, the queue ships
 * it, the viewer re-runs clips with it and the library passes it. `clipOptions` turns it into the
 * addon's options for one clip (the camera's height and road normal, the wide-baseline preset),
 * the one place those are decided. The addon's own option defaults live in the addon
 * (`optionTable()`); this file names only what a run chooses on top of them.
 */
import type { Clip, LoadedClip } from '../core/clip.js';
import { ClipDataError, InputError } from '../core/errors.js';
import type { Trajectory } from '../core/trajectory.js';
import { DEFAULT_DEVICE, decideDevice, type DeviceProbes, MACHINE } from '../native/device.js';
import { type Device, type DeviceChoice, DEVICES, type Photometric, PHOTOMETRIC, type VoOptions } from '../native/index.js';
import { evenFrames, medianInterval, selectFrames } from './frames.js';

/**
 * How a clip is answered: egogeo's engine, or one of the published geometric baselines computed as
 * the reference computes them (vo-proxy, flow-heuristic: baseline/reference.ts, native/baselines/).
 */
export const METHODS = ['egogeo', 'vo-proxy', 'flow-heuristic'] as const;
export type Method = (typeof METHODS)[number];

/** Metric scale: 'road' (camera height over the road plane), 'gt' (ground-truth speeds, diagnosis), 'none' (unit steps). */
export const SCALES = ['road', 'gt', 'none'] as const;
export type Scale = (typeof SCALES)[number];

/**
 * The tracker's resolution for frames far apart (WIDE_BASELINE): 'half' tracks them at half size,
 * 'full' at the frames' own size (WIDE_BASELINE_FULL), 'auto' both, keeping full size's estimate
 * unless its scale failed or the two disagree grossly on the distance travelled, when the one
 * whose speeds the smoother is surer of is kept (vo/estimate.ts `kept`; with the road scale only:
 * other scales keep half size). Full size is the more precise where both track; half size catches
 * the clips where full size loses the road (bench/RESULTS.md, "Full size first at 10 frames").
 * Dense frames are always tracked at full size.
 */
export const RESOLUTIONS = ['auto', 'half', 'full'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export interface EngineConfig {
  method: Method;
  /** Frames the estimator sees, spread evenly over the clip; null = every frame. */
  frames: number | null;
  scale: Scale;
  /** The tracker's photometric stage (VoOptions.photometric). */
  photometric: Photometric;
  /** Where pyramids, FAST and KLT run (`--device auto` is resolved to one of these by native/device.ts first). */
  device: Device;
  /** The tracker's resolution for frames far apart ('auto': full size, half size too where full size doubts itself, full size's estimate kept unless one failed; 'half'; 'full'). */
  resolution: Resolution;
}

/** A configuration as a caller gives it: the device may still be `auto` (engineConfig resolves it). */
export type EngineChoice = Omit<EngineConfig, 'device'> & { device: DeviceChoice };

/**
 * A run's defaults, the CLI's and the library's. device 'auto' (native/device.ts DEFAULT_DEVICE):
 * the GPU where it passes its self-check, else the CPU. photometric 'pair': gain-compensated KLT per frame pair, so exposure changes
 * and restyled video (per-frame gain, tone, blur, noise) do not break tracks, at no cost where
 * brightness is constant (bench/photometric.mjs, docs/vo.md). The addon's own default is 'none'
 * (a raw processClip call changes no pixel unless asked).
 */
export const ENGINE_DEFAULTS: Readonly<EngineChoice> = Object.freeze({ method: 'egogeo', frames: null, scale: 'road', photometric: 'pair', device: DEFAULT_DEVICE, resolution: 'auto' });

const FIELDS = Object.keys(ENGINE_DEFAULTS) as (keyof EngineConfig)[];

function oneOf<T extends string>(list: readonly T[], v: unknown, what: string): T {
  if (typeof v !== 'string' || !(list as readonly string[]).includes(v)) throw new InputError(`${what} must be one of ${list.join(', ')}, got ${JSON.stringify(v)}`);
  return v as T;
}

/**
 * A complete, checked configuration from a partial one (library callers, run records): missing
 * fields take ENGINE_DEFAULTS, an unknown field or a bad value is one InputError naming it. A
 * device 'auto' is decided here (native/device.ts `decideDevice`, with `probes`): the GPU when it
 * passes the self-check, else the CPU (the CLI prints decideDevice's note; here it is not printed).
 */
export function engineConfig(given: Partial<EngineChoice> = {}, where = 'engine configuration', probes: DeviceProbes = MACHINE): EngineConfig {
  for (const k of Object.keys(given)) if (!FIELDS.includes(k as keyof EngineConfig)) throw new InputError(`${where}: unknown field '${k}' (fields: ${FIELDS.join(', ')})`);
  const g = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as Partial<EngineConfig>;
  const c = { ...ENGINE_DEFAULTS, ...g };
  if (c.frames !== null && !(Number.isInteger(c.frames) && c.frames >= 2)) throw new InputError(`${where}: frames must be null (all) or an integer >= 2, got ${JSON.stringify(c.frames)}`);
  return {
    method: oneOf(METHODS, c.method, `${where}: method`),
    frames: c.frames,
    scale: oneOf(SCALES, c.scale, `${where}: scale`),
    photometric: oneOf(PHOTOMETRIC, c.photometric, `${where}: photometric`),
    device: resolveDevice(oneOf(DEVICES, c.device, `${where}: device`), probes),
    resolution: oneOf(RESOLUTIONS, c.resolution, `${where}: resolution`),
  };
}

/** This machine's answer to 'auto', decided once per process (the GPU self-check tracks a clip twice). */
let machineAuto: Device | undefined;
function resolveDevice(d: DeviceChoice, probes: DeviceProbes): Device {
  if (d !== 'auto') return d;
  if (probes !== MACHINE) return decideDevice(d, probes).device;
  return (machineAuto ??= decideDevice(d, probes).device);
}

/**
 * Frames far apart (the published baselines' 10 frames over 3 s are 0.33 s apart) move corners by
 * 100+ px. Three times the baseline of dense 10 Hz frames gives each pair three times the flow, so
 * the tracker works at half resolution (decoded so by libjpeg) and still has 1.5× the flow per
 * pixel of noise that dense full-resolution frames have; everything in pixels halves with it
 * (corner spacing 4; three pyramid levels reach the coarsest scale four did at full size), the KLT
 * window (9) stays wider than half of 13 so that large displacements still converge. It costs
 * half the CPU or less (bench/vo-vs-proxy.mjs). The speed smoother's motion model is in seconds,
 * not frames, but its model of the relative scales' errors is not: the share of a ratio's
 * variance that accumulates along the chain is 1 + 2 x (lag-1 correlation of consecutive ratios'
 * errors), -0.4 for dense KITTI frames (ratioDrift 0.2), -0.2 at 10 frames (KITTI 00 / 01+06:
 * -0.18 / -0.35; 421 ratios), hence ratioDrift 0.6 (bench/RESULTS.md "The ratios' error model at
 * 10 frames"). Guided tracking stays off:
 * 0.33 s apart the previous pair's motion predicts the next one too loosely (KITTI 01+06 at 10
 * frames: 6-question BAcc 0.913 → 0.834 with it; bench/RESULTS.md "Guided tracking"). Every pair's
 * tracked road is checked against its direct alignment (directCheck): road texture moved by metres
 * can match a repeat of itself, and such tracks read a fraction of the distance with no warning
 * (rendered highway at 10 frames, bench/RESULTS.md "Aliased road tracks at 10 frames").
 */
export const WIDE_BASELINE: Readonly<VoOptions> = Object.freeze({ downsample: 2, kltWindow: 9, kltLevels: 3, minDistance: 4, guidedTracking: false, directCheck: true, ratioDrift: 0.6 });
/**
 * `resolution: 'full'`: frames far apart tracked at their own size. The pixel options WIDE_BASELINE
 * halves are the addon's own again (corner spacing 8, KLT window 13), with one pyramid level more
 * than its default: three times the flow of dense frames. The rest of WIDE_BASELINE (the ratios'
 * model, the direct check, no guided tracking) stays. Kept tracks are refined with the patch's
 * scale change (kltScale): 0.33 s apart near patches grow by 10-30%, and KLT's translation-only
 * window misplaces them by an error the pair's points share, which the relative scales inherit
 * (bench/RESULTS.md "Tracks on growing patches"). At half size its 9-px window holds too little of
 * a patch's growth: road distances there got worse (test/vo/synthetic.test.ts, 37% on one pair);
 * dense frames keep plain KLT too (their patches grow by a few percent). About twice the tracking time; at the
 * published 10 frames alone it answers more of the 14 questions on KITTI 01+06 and both rendered
 * sets, and fewer of the 6 on KITTI 00 (bench/RESULTS.md, "Full resolution at 10 frames"); 'auto'
 * runs it beside half size.
 */
export const WIDE_BASELINE_FULL: Readonly<VoOptions> = Object.freeze({ downsample: 1, kltWindow: 13, kltLevels: 4, minDistance: 8, kltScale: true });
/** Seconds: a clip whose median frame interval exceeds this gets WIDE_BASELINE (10 Hz frames do not). */
export const WIDE_BASELINE_INTERVAL = 0.15;

/** True when the clip's (selected) frames are far enough apart for WIDE_BASELINE. */
export function isWideBaseline(timestamps: ArrayLike<number>): boolean {
  return medianInterval(timestamps) > WIDE_BASELINE_INTERVAL;
}

/**
 * The addon's options for one clip, in order of precedence: the caller's `overrides` (undefined
 * values ignored), the wide-baseline preset when the frames are far apart, the clip's camera
 * (height, road normal), the run's photometric default. `timestamps` are the frames the engine sees.
 */
export function clipOptions(clip: Pick<Clip, 'camera'>, timestamps: ArrayLike<number>, overrides: VoOptions = {}): VoOptions {
  return {
    cameraHeight: clip.camera.height,
    photometric: ENGINE_DEFAULTS.photometric,
    ...(clip.camera.roadNormal ? { roadNormal: clip.camera.roadNormal } : {}),
    ...(isWideBaseline(timestamps) ? WIDE_BASELINE : {}),
    ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)),
  };
}

/**
 * Two sizes' distances travelled that differ by more than this factor (a third) are a failure of
 * one of them, not a disagreement between measurements: where both track, full and half size
 * differ by at most 23% (KITTI 00, 01, 06 and rendered highway at 10 frames); a size that lost the
 * road or the scale read 0.06, 0.47 and 0.66 of the other's distance there (bench/RESULTS.md
 * "Full size first at 10 frames").
 */
export const GROSS_DISAGREEMENT = 4 / 3;

/** How resolution 'auto' chooses between its two estimates (vo/estimate.ts `kept`), as a run record states it. */
const AUTO_KEPT = `full size where its own quality verdict is ok and the tracked road measured at least half its moving pairs, or its direct road alignments that found the road cover half of them and bear its level out (median within a third); otherwise half size runs too (frames area-averaged from the full-size decode) and full size is kept unless its scale failed or the two sizes' distances travelled differ by more than a third: then the estimate with the smaller mean relative speed uncertainty (scale road)`;

/** What a run record stores of its configuration: the values, and the rule that switched clips to the wide-baseline preset. */
export function engineRecord(c: EngineConfig) {
  const both = bothSizes(c);
  return {
    method: c.method,
    photometric: c.photometric,
    scale: c.scale,
    frames: c.frames,
    resolution: c.resolution,
    wide_baseline: {
      when: `median frame interval > ${WIDE_BASELINE_INTERVAL} s (after the frame selection)`,
      options: { ...WIDE_BASELINE, ...(c.resolution === 'full' || both ? WIDE_BASELINE_FULL : {}) },
      ...(both ? { also: { options: { ...WIDE_BASELINE }, kept: AUTO_KEPT } } : {}),
    },
  };
}

/** Whether frames far apart are tracked at both sizes (resolution 'auto' with the road scale: other scales' speeds carry no uncertainty to compare). */
const bothSizes = (c: EngineConfig) => c.resolution === 'auto' && c.scale === 'road';

/**
 * A clip as a run hands it to the engine: the frames the configuration selects (evenly spread), the
 * options it passes and, where it tracks far-apart frames at both sizes (resolution 'auto', road
 * scale), full size's options first and half size's as the `alternative` (`estimateClip` runs it
 * where full size's own verdict is not ok and keeps one, vo/estimate.ts `needsSecond`, `kept`).
 * The one place these are decided: a run's workers and `egogeo view` use it.
 */
export function engineInput(full: LoadedClip, c: EngineConfig): { clip: LoadedClip; options: VoOptions; alternative?: VoOptions } {
  const clip = c.frames === null ? full : selectFrames(full, evenFrames(full.frames.length, c.frames));
  const gtSpeeds = c.scale === 'gt' ? pairSpeeds(full.groundTruth, clip.timestamps) : undefined;
  const wide = isWideBaseline(clip.timestamps);
  const options: VoOptions = { scale: c.scale, photometric: c.photometric, device: c.device, gtSpeeds };
  if (wide && bothSizes(c)) return { clip, options: { ...options, ...WIDE_BASELINE_FULL }, alternative: options };
  return { clip, options: { ...options, ...(c.resolution === 'full' && wide ? WIDE_BASELINE_FULL : {}) } };
}

/** Ground-truth speed (m/s) per frame pair, from the clip's trajectory (for scale 'gt'). */
export function pairSpeeds(truth: Trajectory | undefined, ts: ArrayLike<number>): number[] {
  if (!truth) throw new ClipDataError("scale 'gt' needs the clip's ground-truth trajectory (KITTI poses)");
  const g = truth;
  const at = (t: number) => {
    let i = 0;
    while (i < g.t.length - 2 && g.t[i + 1] < t) i++;
    const f = (t - g.t[i]) / (g.t[i + 1] - g.t[i]);
    return [g.x[i] + f * (g.x[i + 1] - g.x[i]), g.y[i] + f * (g.y[i + 1] - g.y[i])];
  };
  return Array.from({ length: ts.length - 1 }, (_, k) => {
    const a = at(ts[k]), b = at(ts[k + 1]);
    return Math.hypot(b[0] - a[0], b[1] - a[1]) / (ts[k + 1] - ts[k]);
  });
}
