/**
 * A clip, the unit every engine call and every worker task works on: frames + timestamps +
 * intrinsics (+ what a dataset knows about it). Datasets produce clips; VO consumes them.
 */
import type { Trajectory } from './trajectory.js';

/** A pinhole camera's intrinsics in pixels. */
export interface Intrinsics {
  fx: number;
  fy: number;
  cx: number;
  cy: number;
}

/** A greyscale frame held in memory (8-bit, row-major). */
export interface PixelFrame {
  data: Uint8Array;
  width: number;
  height: number;
}

/** One frame of a video file (a clip's frames may be these: the engine decodes the video once). */
export interface VideoFrame {
  video: string;
  index: number;
}

export type Source = 'nuscenes' | 'carla-sim' | 'carla-transferred' | 'kitti' | 'synthetic' | string;

export interface Clip {
  id: string;
  source: Source;
  /** File paths (JPEG/PNG), greyscale buffers, or frames of one video file (decoded by the engine). */
  frames: (string | PixelFrame | VideoFrame)[];
  /** Seconds, one per frame. */
  timestamps: Float64Array;
  intrinsics?: Intrinsics;
  /** Without intrinsics: horizontal field of view (degrees), principal point at the centre. */
  hfovDeg?: number;
  /** Camera height above the road in metres, when the dataset knows it. */
  cameraHeight?: number;
  /** The road's downward normal in camera coordinates (x right, y down, z forward), from a calibrated mount. */
  roadNormal?: [number, number, number];
  /** Ground-truth planar trajectory at the frame timestamps, when known. */
  groundTruth?: Trajectory;
}
