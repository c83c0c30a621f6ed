/**
 * The clip model: the one shape every dataset reader produces (datasets/), every run task carries
 * (run/, queue/) and the engine consumes (vo/): frames + timestamps + a camera, with what the
 * dataset knows about the clip (ground truth, QA items). A video clip may leave its frame count and
 * timestamps to its container: vo/frames.ts resolves them when the engine opens it.
 */
import type { Trajectory } from './trajectory.js';

/** A pinhole camera's intrinsics in pixels. */
export interface Intrinsics {
  fx: number;
  fy: number;
  cx: number;
  cy: number;
}

/**
 * The camera the engine assumes for a clip with neither intrinsics nor a field of view (the
 * reference baselines' assumption): fx = fy = DEFAULT_FOCAL_PER_WIDTH × the image width, the
 * principal point at the image centre. The addon computes it itself (native/vo/pose/camera.cc,
 * `clip_intrinsics`); test/vo/camera-default.test.ts holds the two equal.
 */
export const DEFAULT_FOCAL_PER_WIDTH = 0.9;

/** DEFAULT_FOCAL_PER_WIDTH's camera for a `width` × `height` image. */
export function defaultIntrinsics(width: number, height: number): Intrinsics {
  const f = DEFAULT_FOCAL_PER_WIDTH * width;
  return { fx: f, fy: f, cx: width / 2, cy: height / 2 };
}

/** The default camera in words (run manifests, help). */
export const DEFAULT_CAMERA_TEXT = `fx = fy = ${DEFAULT_FOCAL_PER_WIDTH} W, principal point at the centre`;

/** A clip's camera: intrinsics or a field of view, height above the road, road normal, and where they came from. */
export interface Camera {
  /** Absent (and no hfovDeg): the engine's default (`defaultIntrinsics`). */
  intrinsics?: Intrinsics;
  /** Horizontal field of view (degrees) when no intrinsics are known: fx = (W/2)/tan(hfov/2), centred. */
  hfovDeg?: number;
  /** Metres above the road. */
  height?: number;
  /** The road's downward normal in camera coordinates (x right, y down, z forward), from a calibrated mount. */
  roadNormal?: [number, number, number];
  /** Where it came from, for the run manifest (e.g. "nuScenes calibrated_sensor 1d31…", "--cameras", "CARLA default"). */
  from?: string;
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

/** One QA item of a dataset's `qa.jsonl` (the fields a prediction record needs). */
export interface QaItem {
  qa_id: string;
  clip_id: string;
  question_id: string;
  category: string;
  /** The oracle's answer as the file gives it (string, number or boolean). */
  answer: unknown;
  /** The question as the benchmark asks it, when the record carries it (VLM prompts: prompts/). */
  question?: string;
  choices?: unknown[] | null;
  answer_type?: string;
  units?: string | null;
}

export type Source = 'nuscenes' | 'carla-sim' | 'carla-transferred' | 'kitti' | 'synthetic' | string;

export interface Clip {
  id: string;
  source: Source;
  /** Position in its dataset's canonical order (the clip list's order when one is given). */
  index: number;
  /**
   * Image paths (JPEG/PNG), greyscale buffers, or frames of one video file (decoded by the engine).
   * Absent for a video clip (`video`) whose frames its container gives.
   */
  frames?: (string | PixelFrame | VideoFrame)[];
  /** A video file (mp4) holding the clip's frames. */
  video?: string;
  /** Seconds, one per frame; absent for a video clip timed by its frame rate. */
  timestamps?: ArrayLike<number>;
  /** Frame rate of a video clip without timestamps (else the container's). */
  fps?: number;
  /**
   * Absolute time (s) of `timestamps`' zero when they are relative (nuScenes: the first frame's
   * sample_data timestamp): exported trajectories carry absolute times, as evo pairs them.
   */
  timeOrigin?: number;
  camera: Camera;
  /** The ground-truth planar trajectory at the frames, when the dataset has one (KITTI poses). */
  groundTruth?: Trajectory;
  /** Absolute path of the clip's ground-truth arrays (`array_ref`), when the record names one. */
  arrays?: string;
  /** The record's summary features (`features`), when it carries them (the summary prompt embedding). */
  features?: Record<string, unknown>;
  /** The dataset's QA items for this clip, in file order (none: the questions are answered from the question file). */
  qa: QaItem[];
  /** Why this clip cannot run, known before decoding anything (e.g. listed but not indexed). */
  problem?: string;
}

/** A clip whose frames and timestamps are known (what the engine runs on). */
export type LoadedClip = Clip & { frames: NonNullable<Clip['frames']>; timestamps: Float64Array };
