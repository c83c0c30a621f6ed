/** Clip → estimated planar trajectory in the oracle's frame, through the native engine. */
import type { Clip } from '../core/clip.js';
import type { Trajectory } from '../core/trajectory.js';
import { type NativeResult, processClip, processClipAsync, type VoOptions } from '../native/index.js';
import { planarFromCameraPoses } from './planar.js';

export interface Estimate {
  trajectory: Trajectory;
  native: NativeResult;
}

function request(clip: Clip, opts: VoOptions) {
  const options = { cameraHeight: clip.cameraHeight, ...opts };
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
