/**
 * A clip, the unit every engine call and every worker task works on: frames + timestamps +
 * intrinsics (+ what a dataset knows about it). Datasets produce clips; VO consumes them.
 */
import type { Intrinsics, PixelFrame } from '../native/index.js';
import type { Trajectory } from './trajectory.js';

export type Source = 'nuscenes' | 'carla-sim' | 'carla-transferred' | 'kitti' | 'synthetic' | string;

export interface Clip {
  id: string;
  source: Source;
  /** File paths (JPEG/PNG) or greyscale buffers. */
  frames: (string | PixelFrame)[];
  /** Seconds, one per frame. */
  timestamps: Float64Array;
  intrinsics?: Intrinsics;
  /** Camera height above the road in metres, when the dataset knows it. */
  cameraHeight?: number;
  /** Ground-truth planar trajectory at the frame timestamps, when known. */
  groundTruth?: Trajectory;
}
