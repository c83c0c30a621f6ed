/** Clip → estimated planar trajectory in the oracle's frame, through the native engine. */
import type { Clip, LoadedClip } from '../core/clip.js';
import { pathLength, type Trajectory } from '../core/trajectory.js';
import type { SpeedProfile } from '../io/trajectories.js';
import { type NativeResult, type PixelFrame, processClip, processClipAsync, type VoOptions } from '../native/index.js';
import { clipOptions, GROSS_DISAGREEMENT } from './config.js';
import { loadFrames } from './frames.js';
import { planarFromCameraPoses } from './planar.js';
import { type ClipQuality, clipQuality, speedUncertainty } from './quality.js';

// Where it lived before the verdict read it (bench scripts import it from here).
export { speedUncertainty } from './quality.js';
import { DEFAULT_DYNAMICS } from '../oracle/dynamics.js';
import { densify, profileAt } from './densify.js';

export interface Estimate {
  /**
   * The planar trajectory, carrying the engine's speed and acceleration with their uncertainty.
   * Where the frames are sparser than the oracle's grid (the published 10-frame protocol) it also
   * holds the motion between them on that grid (vo/densify.ts): what the oracle answers from.
   */
  trajectory: Trajectory & { speedProfile: SpeedProfile };
  native: NativeResult;
  /**
   * Every engine run over the clip, in order (the options, then the alternative where it ran): the
   * tracking size it ran at (the addon's `downsample`: 1 full, 2 half) and its stage times. With
   * both sizes the kept estimate's `native.timing` is one of them; this is the clip's whole cost.
   */
  runs: EngineRun[];
  /**
   * Where both sizes ran (`alternative`, `needsSecond`): the first size's distance travelled over
   * the second's, what `kept` compared; the quality verdict flags a gross disagreement (vo/quality.ts).
   */
  sizeRatio?: number;
  /** The quality verdict (vo/quality.ts), computed once: of the kept run, with the sizes' ratio where both ran. */
  quality: ClipQuality;
}

export interface EngineRun {
  downsample: number;
  timing: NativeResult['timing'];
}

function withSpeed(traj: Trajectory, nat: NativeResult, quality: ClipQuality): Estimate['trajectory'] {
  const p = nat.speedProfile;
  const profile: SpeedProfile = { speed: p.speed, speed_sigma: p.speedSigma, accel: p.accel, accel_sigma: p.accelSigma };
  const hz = DEFAULT_DYNAMICS.hz;
  const { trajectory, times } = densify(traj, hz, quality.speed_uncertainty ?? Infinity);
  return Object.assign(trajectory, { speedProfile: times ? profileAt(traj.t, profile, times) : profile });
}

/** A clip given with its frames and timestamps is used as it is; a video clip left to its container is opened first. */
function loaded(clip: Clip): LoadedClip {
  return clip.frames && clip.timestamps ? { ...clip, frames: clip.frames, timestamps: Float64Array.from(clip.timestamps) } : loadFrames(clip);
}

/** The addon's request for a clip: its frames (images, buffers, or one video's frame indices), timestamps, camera, options. */
function request(clip: LoadedClip, opts: VoOptions) {
  const cam = clip.camera;
  const input = { ...frameInput(clip.frames), timestamps: clip.timestamps, intrinsics: cam.intrinsics, ...(cam.intrinsics ? {} : { hfovDeg: cam.hfovDeg }) };
  return [input, clipOptions(clip, clip.timestamps, opts)] as const;
}

/** Frames of one video go to the engine as the video and the frame indices (it decodes them itself). */
function frameInput(frames: LoadedClip['frames']): { frames: (string | PixelFrame)[] } | { video: string; frameIndices: number[] } {
  const first = frames[0];
  if (typeof first !== 'object' || !('video' in first)) {
    if (frames.some((f) => typeof f === 'object' && 'video' in f)) throw new Error('a clip mixes video frames with images');
    return { frames: frames as (string | PixelFrame)[] };
  }
  const video = first.video;
  const frameIndices = frames.map((f, i) => {
    if (typeof f !== 'object' || !('video' in f) || f.video !== video) throw new Error(`frame ${i}: a clip's video frames must all come from ${video}`);
    return f.index;
  });
  return { video, frameIndices };
}

/**
 * The engine over a clip; `opts` override what the clip and the run's defaults give (vo/config.ts
 * `clipOptions`). With `alternative` (engineInput's half size beside full size, frames far apart)
 * the alternative runs only where the first estimate's own quality verdict is not 'ok' (`needsSecond`);
 * then the two are compared and one kept (`kept`).
 */
export function estimateClip(clip: Clip, opts: VoOptions = {}, alternative?: VoOptions): Estimate {
  const c = loaded(clip);
  const [input, first] = request(c, opts);
  const [nat, decoded] = detachFrames(processClip(input, firstRun(first, alternative, input)), first);
  const a = estimate(c, nat, first);
  if (!alternative || !needsSecond(a)) return a;
  const second = secondOptions(c, alternative);
  return both(c.timestamps, a, estimate(c, processClip(secondInput(input, decoded), second), second));
}

export async function estimateClipAsync(clip: Clip, opts: VoOptions = {}, alternative?: VoOptions): Promise<Estimate> {
  const c = loaded(clip);
  const [input, first] = request(c, opts);
  const [nat, decoded] = detachFrames(await processClipAsync(input, firstRun(first, alternative, input)), first);
  const a = estimate(c, nat, first);
  if (!alternative || !needsSecond(a)) return a;
  const second = secondOptions(c, alternative);
  return both(c.timestamps, a, estimate(c, await processClipAsync(secondInput(input, decoded), second), second));
}

/**
 * With a second size in reserve, the first run over a video returns the frames it decoded, so the
 * second decodes nothing. Image files need nothing of the kind: the second run reads them through
 * the addon's decoded-frame cache (VoOptions.frameCache), which the first run filled.
 */
function firstRun(first: VoOptions, alternative: VoOptions | undefined, input: EngineInput): VoOptions {
  return alternative && 'video' in input ? { ...first, keepFrames: true } : first;
}

/** The first run's decoded frames as pixels, taken off its result unless its caller asked for them. */
function detachFrames(nat: NativeResult, asked: VoOptions): [NativeResult, PixelFrame[] | null] {
  const frames = nat.frames;
  if (!frames) return [nat, null];
  const pixels = frames.map((data) => ({ data, width: nat.width, height: nat.height }));
  if (!asked.keepFrames) delete nat.frames;
  return [nat, pixels.every((p) => p.data.length === p.width * p.height) ? pixels : null];
}

/**
 * The second size's input: the first run's decoded frames where it returned them (a video's; the
 * engine area-averages pixels it is given, as it does, with areaShrink, image files), else the
 * same files (decoded once, kept in the addon's frame cache) or video.
 */
function secondInput(input: EngineInput, decoded: PixelFrame[] | null): EngineInput {
  if (!decoded || decoded.length !== input.timestamps.length) return input;
  const { timestamps, intrinsics } = input;
  return { frames: decoded, timestamps, intrinsics, ...('hfovDeg' in input ? { hfovDeg: input.hfovDeg } : {}) };
}

type EngineInput = ReturnType<typeof request>[0];

/**
 * Whether the second tracking size is worth running: where the first estimate itself says it may
 * be wrong (its verdict without the sizes' comparison: scale failed, speeds uncertain), or where
 * its metric level rests on the tracked road of fewer than half its moving pairs and the clip's
 * own direct road alignments do not bear that level out (those that found the road cover fewer
 * than half the moving pairs, or their median distance is more than GROSS_DISAGREEMENT from the
 * fused one): a level the smoother can be sure of and
 * still have wrong, which only another size's reading shows. Where the direct alignments agree
 * with the level, half size was never kept on any ../shared or rendered set at 10 frames (88 such
 * clips: no gross disagreement but one, where full size was right and half size 26% short;
 * bench/second-size.mjs, bench/RESULTS.md "The second size where the road is thin"), and it cost
 * most of a highway clip's time. Elsewhere `kept` kept the first on every set (the second size was
 * kept on 4 of 324 clips at 10 frames, each with a first estimate not 'ok'), and the sizes' gross
 * disagreements left unchecked were stationary clips, whose distances are noise.
 */
function needsSecond(first: Estimate): boolean {
  const q = first.quality;
  return q.verdict !== 'ok' || (2 * q.road_pairs < q.moving_pairs && !directBearsOut(first.native, q.moving_pairs));
}

/** A direct alignment the engine accepts as a road reading correlates at least this well (native/vo/scale/road_scale.cc kMinDirectScore). */
const DIRECT_MIN_SCORE = 0.5;

/**
 * Whether the moving pairs' direct road alignments that found the road (score ≥ DIRECT_MIN_SCORE)
 * bear out the fused distances: at least half of the `moving` pairs have one, and their median
 * ratio to the fused distance is within GROSS_DISAGREEMENT.
 */
export function directBearsOut(nat: Pick<NativeResult, 'pairs'>, moving: number): boolean {
  const r = nat.pairs.filter((p) => p.quality === 'ok' && p.directDistance > 0 && p.directScore >= DIRECT_MIN_SCORE && p.distance > 0).map((p) => p.directDistance / p.distance).sort((a, b) => a - b);
  if (r.length === 0 || 2 * r.length < moving) return false;
  const m = r.length % 2 ? r[(r.length - 1) / 2] : Math.sqrt(r[r.length / 2 - 1] * r[r.length / 2]);
  return m <= GROSS_DISAGREEMENT && m >= 1 / GROSS_DISAGREEMENT;
}

/** The second size's options: frames area-averaged from their full-size decode, as the first run saw them (no frames returned twice). */
function secondOptions(c: LoadedClip, alternative: VoOptions): VoOptions {
  return { ...request(c, alternative)[1], areaShrink: true, keepFrames: undefined };
}

function estimate(c: LoadedClip, nat: NativeResult, opts: VoOptions): Estimate {
  const runs = [{ downsample: opts.downsample ?? 1, timing: nat.timing }];
  const quality = clipQuality(nat, { timestamps: c.timestamps });
  return { trajectory: withSpeed(planarFromCameraPoses(c.id, c.timestamps, nat.rotations, nat.positions), nat, quality), native: nat, runs, quality };
}

/** The kept one of two sizes' estimates, carrying both runs' costs and the sizes' ratio. */
function both(timestamps: ArrayLike<number>, first: Estimate, second: Estimate): Estimate {
  const k = kept(timestamps, first, second);
  const ratio = sizeRatio(first, second);
  return { ...k, runs: [...first.runs, ...second.runs], sizeRatio: ratio, quality: clipQuality(k.native, { timestamps, sizeRatio: ratio }) };
}

/** The first estimate's distance travelled over the second's. */
function sizeRatio(first: Estimate, second: Estimate): number {
  return pathLength(first.trajectory) / pathLength(second.trajectory);
}

/**
 * The first estimate (full size: its relative scales err half as much as half size's, which the
 * smoother's uncertainty does not see because the errors a size's pairs share are not in its
 * model), unless its scale failed or the two disagree grossly on the distance travelled: then one
 * of them failed, and the one whose speeds the smoother is surer of is kept (the first on a tie).
 */
export function kept(timestamps: ArrayLike<number>, first: Estimate, second: Estimate): Estimate {
  const ratio = sizeRatio(first, second);
  const agree = ratio <= GROSS_DISAGREEMENT && ratio >= 1 / GROSS_DISAGREEMENT;
  if (agree && first.quality.verdict !== 'failed') return first;
  return speedUncertainty(second.native, timestamps) < speedUncertainty(first.native, timestamps) ? second : first;
}
