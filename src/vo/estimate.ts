/** Clip → estimated planar trajectory in the oracle's frame, through the native engine. */
import type { Clip } from '../core/clip.js';
import type { Trajectory } from '../core/trajectory.js';
import type { SpeedProfile } from '../io/trajectories.js';
import { type NativeResult, type Photometric, type PixelFrame, processClip, processClipAsync, type VoOptions } from '../native/index.js';
import { planarFromCameraPoses } from './planar.js';

export interface Estimate {
  /** The planar trajectory, carrying the engine's per-frame speed and acceleration with their uncertainty. */
  trajectory: Trajectory & { speedProfile: SpeedProfile };
  native: NativeResult;
}

function withSpeed(traj: Trajectory, nat: NativeResult): Estimate['trajectory'] {
  const p = nat.speedProfile;
  return Object.assign(traj, { speedProfile: { speed: p.speed, speed_sigma: p.speedSigma, accel: p.accel, accel_sigma: p.accelSigma } });
}

/**
 * Frames far apart (the published baselines' 10 frames over 3 s are 0.33 s apart) move corners by
 * 100+ px. Three times the baseline of dense 10 Hz frames gives each pair three times the flow, so
 * the tracker works at half resolution (decoded so by libjpeg) and still has 1.5× the flow per
 * pixel of noise that dense full-resolution frames have; everything in pixels halves with it
 * (corner spacing 4; three pyramid levels reach the coarsest scale four did at full size), the KLT
 * window (9) stays wider than half of 13 so that large displacements still converge. It costs
 * half the CPU or less (bench/vo-vs-proxy.mjs). The speed smoother (the engine's default on every
 * clip) needs no change: its motion model is in seconds, not frames.
 */
export const WIDE_BASELINE: VoOptions = { downsample: 2, kltWindow: 9, kltLevels: 3, minDistance: 4 };
/** Seconds: a clip whose median frame interval exceeds this gets WIDE_BASELINE (10 Hz frames do not). */
export const WIDE_BASELINE_INTERVAL = 0.15;

/**
 * The tracker's photometric stage unless a caller chooses another: gain-compensated KLT per frame
 * pair, so exposure changes and restyled video (per-frame gain, tone, blur, noise) do not break
 * tracks, at no cost where brightness is constant (bench/photometric.mjs, README).
 */
export const DEFAULT_PHOTOMETRIC: Photometric = 'pair';

function medianInterval(ts: ArrayLike<number>): number {
  const d = Array.from({ length: ts.length - 1 }, (_, i) => ts[i + 1] - ts[i]).sort((a, b) => a - b);
  return d[Math.floor(d.length / 2)] ?? 0;
}

function request(clip: Clip, opts: VoOptions) {
  const preset = medianInterval(clip.timestamps) > WIDE_BASELINE_INTERVAL ? WIDE_BASELINE : {};
  const options: VoOptions = {
    cameraHeight: clip.cameraHeight,
    photometric: DEFAULT_PHOTOMETRIC,
    ...(clip.roadNormal ? { roadNormal: clip.roadNormal } : {}),
    ...preset,
    ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)),
  };
  const input = { ...frameInput(clip.frames), timestamps: clip.timestamps, intrinsics: clip.intrinsics, ...(clip.intrinsics ? {} : { hfovDeg: clip.hfovDeg }) };
  return [input, options] as const;
}

/** Frames of one video go to the engine as the video and the frame indices (it decodes them itself). */
function frameInput(frames: Clip['frames']): { frames: (string | PixelFrame)[] } | { video: string; frameIndices: number[] } {
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

export function estimateClip(clip: Clip, opts: VoOptions = {}): Estimate {
  const nat = processClip(...request(clip, opts));
  return { trajectory: withSpeed(planarFromCameraPoses(clip.id, clip.timestamps, nat.rotations, nat.positions), nat), native: nat };
}

export async function estimateClipAsync(clip: Clip, opts: VoOptions = {}): Promise<Estimate> {
  const nat = await processClipAsync(...request(clip, opts));
  return { trajectory: withSpeed(planarFromCameraPoses(clip.id, clip.timestamps, nat.rotations, nat.positions), nat), native: nat };
}
