/** Clip → estimated planar trajectory in the oracle's frame, through the native engine. */
import type { Clip } from '../core/clip.js';
import type { Trajectory } from '../core/trajectory.js';
import { type NativeResult, processClip, processClipAsync, type VoOptions } from '../native/index.js';
import { planarFromCameraPoses } from './planar.js';

export interface Estimate {
  trajectory: Trajectory;
  native: NativeResult;
}

/**
 * Frames far apart (the published baselines' 10 frames over 3 s are 0.33 s apart) move corners by
 * 100+ px: track them over one more pyramid level (twice the search range).
 */
export const WIDE_BASELINE: VoOptions = { kltLevels: 4 };

function medianInterval(ts: ArrayLike<number>): number {
  const d = Array.from({ length: ts.length - 1 }, (_, i) => ts[i + 1] - ts[i]).sort((a, b) => a - b);
  return d[Math.floor(d.length / 2)] ?? 0;
}

function request(clip: Clip, opts: VoOptions) {
  const preset = medianInterval(clip.timestamps) > 0.15 ? WIDE_BASELINE : {};
  const options = { cameraHeight: clip.cameraHeight, ...preset, ...opts };
  return [{ frames: clip.frames, timestamps: clip.timestamps, intrinsics: clip.intrinsics }, options] as const;
}

export function estimateClip(clip: Clip, opts: VoOptions = {}): Estimate {
  const nat = processClip(...request(clip, opts));
  return { trajectory: planarFromCameraPoses(clip.id, clip.timestamps, nat.rotations, nat.positions), native: nat };
}

export async function estimateClipAsync(clip: Clip, opts: VoOptions = {}): Promise<Estimate> {
  const nat = await processClipAsync(...request(clip, opts));
  return { trajectory: planarFromCameraPoses(clip.id, clip.timestamps, nat.rotations, nat.positions), native: nat };
}
