/**
 * egogeo as a library (`import … from 'egogeo'`): the benchmark's oracle, the published grader,
 * clip estimation through the native engine, dataset reading and the benchmark runner, with their
 * types. The native addon loads on first use, so the oracle and grader work where it is not built.
 */

// Trajectories and clips
export { type Trajectory, makeTrajectory } from './core/trajectory.js';
export { CancelledError, ClipDataError, InputError, InternalError } from './core/errors.js';
export type { Camera, Clip, LoadedClip, QaItem, Source } from './core/clip.js';

// The oracle: trajectory → dynamics arrays → 12 summary features → labels (with the question file)
export * from './oracle/index.js';

// The grader: parse cascade, metrics, physics-consistency rules
export * from './grade/index.js';

// Clip estimation (native VO) and trajectory errors
export {
  type NativeClip,
  type NativeVideoClip,
  type NativeResult,
  type PairQuality,
  type VoOptions,
  type VideoInfo,
  type RenderRequest,
  type RenderResult,
  processClip,
  processClipAsync,
  probeVideo,
  renderClip,
  renderClipAsync,
  optionTable,
  smoothSpeed,
  engineVersion,
  type OptionInfo,
} from './native/index.js';
export { decideDevice, gpuSelfCheck, type DeviceDecision, type GpuCheck } from './native/device.js';
export type { Intrinsics, PixelFrame, VideoFrame } from './core/clip.js';
export { type Estimate, estimateClip, estimateClipAsync } from './vo/estimate.js';
export {
  type EngineConfig,
  type Method,
  type Scale,
  ENGINE_DEFAULTS,
  METHODS,
  SCALES,
  engineConfig,
  engineInput,
  clipOptions,
  WIDE_BASELINE,
  WIDE_BASELINE_INTERVAL,
} from './vo/config.js';
export { evenFrames, loadFrames, selectFrames } from './vo/frames.js';
export { planarFromCameraPoses } from './vo/planar.js';
export { associate, ate, rpe, dynamicsRmse, resample, umeyama } from './vo/errors.js';
export { GEOMETRIC_SUBSET, predictClip, predictionRecords } from './baseline/baseline.js';

// Datasets and file formats
export {
  type Benchmark,
  type BenchmarkOptions,
  readDataset,
  readBenchmark,
} from './datasets/benchmark.js';
export { type KittiSequence, readKittiSequence, kittiClips, KITTI_CAMERA_HEIGHT } from './datasets/kitti.js';
export { groundTruthArrays, readNpzArrays } from './datasets/groundtruth.js';
export {
  readTrajectories,
  readKitti,
  readKittiWindows,
  readTum,
  formatTum,
  measuredFromTum,
  writeTum,
  readTrajectoriesJsonl,
  writeTrajectoriesJsonl,
  KITTI_WINDOW,
} from './io/trajectories.js';
export { type Prediction, oracleText, recordSource, referenceSource, sourceFromClipId } from './core/prediction.js';
export { readPredictions, parsePredictionsJsonl, type PredictionsFile } from './io/predictions.js';
export { readNpz, writeNpz } from './io/npz.js';

// The benchmark runner (worker pool, resumable, shardable) and shard merging
export { type RunOptions, type RunSummary, type Shard, runBenchmark } from './run/run.js';
export { type MergeOptions, type MergeSummary, mergeShards } from './run/merge.js';

// Installation checks (`egogeo doctor`)
export { type Check, runChecks, formatChecks } from './doctor/index.js';
