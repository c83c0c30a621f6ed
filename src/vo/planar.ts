/**
 * Camera poses (x right, y down, z forward; camera-to-world) → the oracle's planar frame
 * (X forward, Y left, yaw counter-clockwise), the same mapping SPEC.md gives for KITTI poses:
 * X = t_z, Y = −t_x, yaw = atan2(−R[0,2], R[2,2]).
 */
import { makeTrajectory, type Trajectory } from '../core/trajectory.js';

export function planarFromCameraPoses(
  id: string,
  timestamps: ArrayLike<number>,
  rotations: ArrayLike<number>,
  positions: ArrayLike<number>,
): Trajectory {
  const n = timestamps.length;
  const x = new Float64Array(n), y = new Float64Array(n), yaw = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[i] = positions[i * 3 + 2];
    y[i] = -positions[i * 3];
    yaw[i] = Math.atan2(-rotations[i * 9 + 2], rotations[i * 9 + 8]);
  }
  return makeTrajectory(id, { t: Float64Array.from(timestamps), x, y, yaw });
}
