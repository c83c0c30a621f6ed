/**
 * The published protocol's sampling ceiling: a clip's ground-truth poses kept only at the frames a
 * K-frame estimator sees (`evenFrames`: round(i·(n−1)/(K−1)), the reference baselines' choice)
 * and put back on the clip's frames by an interpolant, then labelled by the oracle. What the
 * labels lose there is lost by sampling alone, with perfect poses: the best a K-frame estimator
 * that interpolates that way can expect. Two interpolants:
 * - `spline`: a natural cubic spline through the kept poses (x, y and unwrapped yaw against time),
 *   evaluated at every frame of the clip;
 * - `densify`: the engine's own (vo/densify.ts), as an estimate at those frames with exact
 *   speeds reaches the oracle (the distance through the spline, direction and yaw rates linear
 *   between the pairs' midpoints).
 * Pure: no I/O.
 */
import { unwrap } from '../core/numeric.js';
import { naturalCubic } from '../core/spline.js';
import type { Trajectory } from '../core/trajectory.js';
import { DEFAULT_DYNAMICS } from '../oracle/dynamics.js';
import { densify } from '../vo/densify.js';
import { evenFrames } from '../vo/frames.js';

export const INTERPOLANTS = ['spline', 'densify'] as const;
export type Interpolant = (typeof INTERPOLANTS)[number];

/** A frame count of the protocol: K evenly spread frames, or every frame. */
export type FrameCount = number | 'all';

/** The ground truth at the frames a `frames`-frame estimator sees (every frame for 'all' or K ≥ n). */
export function keptFrames(truth: Trajectory, frames: FrameCount): Trajectory {
  const n = truth.t.length;
  const idx = evenFrames(n, frames === 'all' ? n : frames);
  const pick = (a: Float64Array) => Float64Array.from(idx, (i) => a[i]);
  return { id: truth.id, t: pick(truth.t), x: pick(truth.x), y: pick(truth.y), yaw: pick(truth.yaw) };
}

/** The trajectory the oracle sees when only `kept`'s poses are known and `how` fills in the clip's frames `times`. */
export function interpolated(kept: Trajectory, times: Float64Array, how: Interpolant): Trajectory {
  if (how === 'densify') return densify(kept, DEFAULT_DYNAMICS.hz).trajectory;
  const yaw = unwrap(kept.yaw);
  return { id: kept.id, t: times, x: naturalCubic(kept.t, kept.x, times), y: naturalCubic(kept.t, kept.y, times), yaw: naturalCubic(kept.t, yaw, times) };
}

/** `truth` (the poses at a clip's frames) as a `frames`-frame protocol leaves it to `how`. */
export function sampledTruth(truth: Trajectory, frames: FrameCount, how: Interpolant): Trajectory {
  return interpolated(keptFrames(truth, frames), truth.t, how);
}
