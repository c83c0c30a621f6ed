/**
 * One clip of a benchmark run, start to finish: frames (image paths, or the frames of an mp4,
 * which the engine decodes itself in this worker) → native VO → the oracle over the estimate → one prediction record per QA
 * item, plus the estimate in TUM format. Runs inside a pool worker (src/run/worker.ts), for
 * tests in-process, and for the clip viewer (src/view/) with `inspect`, which also returns what the
 * answers rest on: the page then shows what the run wrote. A clip whose data is missing or
 * unreadable throws `ClipDataError`; the run records it in the errors file and goes on.
 */
import { existsSync } from 'node:fs';
import type { Clip, LoadedClip, QaItem, VideoFrame } from '../core/clip.js';
import { resample, type Trajectory } from '../core/trajectory.js';
import { CancelledError, ClipDataError, firstLine, InputError, InternalError, NATIVE_INTERNAL } from '../core/errors.js';
import { groundTruthArrays, readNpzArrays } from '../datasets/groundtruth.js';
import { type ClipQuality, formatQualityLine, formatTum } from '../io/trajectories.js';
import type { Prediction } from '../core/prediction.js';
import { clipData, type DynamicsArrays, labelClip, loadQuestions, questionsFromDocument, runOracle, summaryFeatures } from '../oracle/index.js';
import { GEOMETRIC_SUBSET, predictionRecords } from '../baseline/baseline.js';
import { flowHeuristicAnswers, REFERENCE_FRAMES, type ReferenceMethod, voProxyAnswers } from '../baseline/reference.js';
import { baselineSignals, baselineSignalsAsync, type BaselineRequest, type BaselineSignals, type NativeResult } from '../native/index.js';
import { type EngineConfig, engineInput } from '../vo/config.js';
import { type EngineRun, estimateClip, estimateClipAsync } from '../vo/estimate.js';
import { scaleFree } from '../vo/quality.js';
import { checkTiming, evenFrames, loadFrames } from '../vo/frames.js';

export interface ClipTask {
  clip: Clip;
  /** The QA items to answer, in file order (already filtered to the answered questions). */
  qa: QaItem[];
  /** What the engine computes (the run's one configuration). */
  engine: EngineConfig;
  /** Question file. */
  config: string;
  /** Its parsed YAML (QuestionSet.document), when the caller has it: the worker then parses nothing. */
  questionsDoc?: unknown;
  /** Question ids to answer when the clip has no QA items (records numbered from `qaBase`). */
  questionIds: string[];
  qaBase: number;
  /** Shared flag: non-zero once the run is interrupted; queued tasks then return at once. */
  cancel?: Int32Array;
  /** `--abstain`: a clip whose scale failed leaves its scale-dependent answers null (default: it answers them from its estimate). */
  abstain?: boolean;
}

export interface ClipOutput {
  id: string;
  index: number;
  /** This clip's prediction records (structured-cloned from the worker; written by the caller). */
  records: Prediction[];
  /** The estimated planar trajectory (TUM, camera convention, absolute times), its speed profile and quality verdict as comment lines (method egogeo). */
  tum?: string;
  /** A published baseline's per-pair signals (JSON), what its answers rest on (methods vo-proxy, flow-heuristic). */
  signals?: string;
  /** The ground truth at the same frames and times (TUM), when the clip has one. */
  gtTum?: string;
  /** What the engine could measure (vo/quality.ts; method egogeo); with `abstain`, a 'failed' clip's scale-dependent answers are null. */
  quality?: ClipQuality;
  width: number;
  height: number;
  framesUsed: number;
  /** Milliseconds: frame loading (file checks, video probe; frames decode inside VO), VO, whole task. */
  ms: { load: number; vo: number; total: number };
  /** Method egogeo: each engine run's tracking size and stage times (two with resolution 'auto' on frames far apart; `egogeo bench`). */
  engineRuns?: EngineRun[];
  /** With `inspect` only (the viewer; runs never ask for it). */
  inspection?: ClipInspection;
}

/** What a clip's answers rest on, for the viewer: the frames used and, for method egogeo, the engine's result and the oracle's series. */
export interface ClipInspection {
  /** Indices into the clip's frames of the frames the method used. */
  frameIndices: number[];
  /** Their timestamps (seconds, the clip's clock). */
  timestamps: number[];
  /** Method egogeo: the engine's result with each pair's tracks and inlier flags (and a video's decoded frames). */
  native?: NativeResult;
  /** Method egogeo: the oracle's dynamics series of the estimate. */
  arrays?: DynamicsArrays;
}

export interface ClipTaskOptions {
  /** The engine runs on libuv's thread pool (the event loop stays free: one-worker runs on the main thread). */
  async?: boolean;
  /** Also return `inspection` (the engine keeps its tracks, and a video's decoded frames): the viewer. */
  inspect?: boolean;
}

/** How many frames a method uses: `frames` (the published baselines: 10 unless the run says otherwise); null: all. */
export function taskFrames(engine: EngineConfig): number | null {
  return engine.frames ?? (engine.method === 'egogeo' ? null : REFERENCE_FRAMES);
}

/** The frames of a clip of `count` frames a method uses: `taskFrames` spread evenly, else all. */
export function taskFrameIndices(count: number, engine: EngineConfig): number[] {
  const n = taskFrames(engine);
  return n === null ? Array.from({ length: count }, (_, i) => i) : evenFrames(count, n);
}

const shifted = (t: ArrayLike<number>, by: number): Float64Array => Float64Array.from(t, (v) => v + by);

/**
 * The clip's ground truth at the estimate's timestamps `ts` (the frames the engine used, and with
 * sparse frames the oracle's grid points between them), so that an exported estimate and its truth
 * share every timestamp (evo pairs poses within 0.01 s; nuScenes frames
 * at ~12 Hz never meet the arrays' 10 Hz grid): the dataset's trajectory (KITTI poses, same clock
 * as the frames), else the oracle arrays, whose grid starts at the clip's first frame.
 */
function groundTruthAt(c: Clip, gt: DynamicsArrays | null, ts: Float64Array): Trajectory | null {
  if (c.groundTruth) return resample(c.groundTruth, ts);
  if (!gt) return null;
  const g: Trajectory = { id: c.id, t: gt.timestamps, x: gt.x, y: gt.y, yaw: gt.yaw };
  const end = gt.timestamps[gt.timestamps.length - 1];
  // Frames a few milliseconds past the arrays' 3 s end take its last pose.
  const rel = Float64Array.from(ts, (t) => Math.min(end, Math.max(gt.timestamps[0], t - ts[0])));
  return { ...resample(g, rel), t: ts };
}

/**
 * A published baseline (vo-proxy, flow-heuristic) on the clip: its frames chosen as the reference
 * chooses them (`evenFrames`, 10 unless the run says otherwise), its signals (native, as the
 * reference computes them), its answers to the six questions it supports (baseline/reference.ts).
 */
async function referenceTask(task: ClipTask, full: LoadedClip, gt: DynamicsArrays | null, t0: number, o: ClipTaskOptions): Promise<ClipOutput> {
  const c = task.clip;
  const method = task.engine.method as ReferenceMethod;
  const idx = taskFrameIndices(full.frames.length, task.engine);
  const frames = idx.map((i) => full.frames[i]);
  let req: BaselineRequest;
  if (frames.every((f): f is string => typeof f === 'string')) req = { method, frames };
  else if (frames.every((f): f is VideoFrame => typeof f === 'object' && 'video' in f)) req = { method, video: frames[0].video, frameIndices: frames.map((f) => f.index) };
  else throw new ClipDataError(`method ${method} reads image files or a video, not in-memory frames`);
  const t1 = performance.now();
  let sig: BaselineSignals;
  try {
    sig = o.async ? await baselineSignalsAsync(req) : baselineSignals(req);
  } catch (e) {
    if ((e as { code?: string }).code === NATIVE_INTERNAL) throw new InternalError(`clip ${c.id}: ${method} failed: ${firstLine(e)}`);
    throw new ClipDataError(`${method} failed: ${firstLine(e)}`);
  }
  const t2 = performance.now();
  const labels = method === 'vo-proxy' ? voProxyAnswers({ yawDeg: sig.yawDeg!, dispMag: sig.dispMag! }) : flowHeuristicAnswers({ turnScore: sig.turnScore!, expScore: sig.expScore!, motionMag: sig.motionMag! });
  const questions = task.questionsDoc === undefined ? loadQuestions(task.config) : questionsFromDocument(task.questionsDoc, task.config);
  const supported = new Set<string>(GEOMETRIC_SUBSET); // SUPPORTED_QUESTIONS of both scripts
  let records: Prediction[];
  const qa = task.qa.filter((q) => supported.has(q.question_id));
  if (task.qa.length > 0) {
    records = predictionRecords(c, questions, labels, { qa });
  } else {
    const g = gt ?? groundTruthArrays(c, null)?.arrays ?? null;
    const truth = g ? clipOracle(() => labelClip(clipData(g, summaryFeatures(g, 'its ground truth')), questions)) : null;
    records = predictionRecords(c, questions, labels, { truth, answer: new Set(task.questionIds.filter((q) => supported.has(q))), qaBase: task.qaBase });
  }
  const perPair = Object.fromEntries(Object.entries(sig).filter(([k]) => k !== 'frames').map(([k, v]) => [k, Array.from(v as Float64Array)]));
  return {
    id: c.id,
    index: c.index,
    records,
    signals: `${JSON.stringify({ method, frame_indices: idx, ...perPair, answers: labels })}\n`,
    width: 0,
    height: 0,
    framesUsed: idx.length,
    ms: { load: t1 - t0, vo: t2 - t1, total: performance.now() - t0 },
    ...(o.inspect ? { inspection: { frameIndices: idx, timestamps: idx.map((i) => full.timestamps[i]) } } : {}),
  };
}

export async function runClipTask(task: ClipTask, o: ClipTaskOptions = {}): Promise<ClipOutput> {
  if (task.cancel && Atomics.load(task.cancel, 0) !== 0) throw new CancelledError();
  const t0 = performance.now();
  const c = task.clip;
  const full = loadFrames(c);
  let gt: DynamicsArrays | null = null;
  if (c.arrays) {
    if (!existsSync(c.arrays)) throw new ClipDataError(`missing array file ${c.arrays}`);
    try {
      gt = readNpzArrays(c.arrays);
    } catch (e) {
      throw new ClipDataError(`unreadable array file ${(e as Error).message.split('\n')[0]}`);
    }
  }
  if (full.frames.length < 2) throw new ClipDataError(`only ${full.frames.length} frame(s); VO needs at least 2`);
  const truthT = gt?.timestamps ?? c.groundTruth?.t;
  checkTiming(full, truthT && truthT.length > 1 ? truthT[truthT.length - 1] - truthT[0] : undefined);
  if (task.engine.method !== 'egogeo') return referenceTask(task, full, gt, t0, o);
  const t1 = performance.now();
  const input = engineInput(full, task.engine);
  const { clip } = input;
  let { options, alternative } = input;
  if (o.inspect) {
    // The page draws each pair's tracks, and a video's frames as the engine decoded them.
    const keep = { keepMatches: true, keepFrames: !c.frames };
    options = { ...options, ...keep };
    alternative = alternative && { ...alternative, ...keep };
  }
  let est;
  try {
    est = o.async ? await estimateClipAsync(clip, options, alternative) : estimateClip(clip, options, alternative);
  } catch (e) {
    // The engine names unreadable images and bad input: this clip cannot be answered. Its own
    // failure (tagged by the addon) is a bug: the run stops rather than filing it under the clip.
    if ((e as { code?: string }).code === NATIVE_INTERNAL) throw new InternalError(`clip ${c.id}: the engine failed: ${firstLine(e)}`);
    throw new ClipDataError(`VO failed: ${firstLine(e)}`);
  }
  const t2 = performance.now();

  const questions = task.questionsDoc === undefined ? loadQuestions(task.config) : questionsFromDocument(task.questionsDoc, task.config);
  const quality = est.quality;
  const oracle = clipOracle(() => runOracle(est.trajectory, questions));
  const labels: Record<string, string> = { ...oracle.labels };
  // Every question is answered from the estimate by default, the verdict beside it (the trajectory
  // file, the run record): the grader leaves unanswered items out, so withholding would raise the
  // score. Abstaining is asked for: then what depends on a collapsed scale is left unanswered.
  if (task.abstain && quality.verdict === 'failed') for (const q of questions.questions) if (!scaleFree(q)) delete labels[q.id];
  let records: Prediction[];
  if (task.qa.length > 0) {
    records = predictionRecords(c, questions, labels, { qa: task.qa });
  } else {
    // No QA items: answer the questions; the oracle labels come from the ground truth — the
    // arrays, else the trajectory the dataset resolved (null without either).
    const g = gt ?? groundTruthArrays(c, null)?.arrays ?? null;
    const truth = g ? clipOracle(() => labelClip(clipData(g, summaryFeatures(g, 'its ground truth')), questions)) : null;
    records = predictionRecords(c, questions, labels, { truth, answer: new Set(task.questionIds), qaBase: task.qaBase });
  }
  const origin = c.timeOrigin ?? 0;
  // The frames' times, shifted as the poses' are (the same doubles: densify keeps each frame's time as it is).
  const measured = shifted(clip.timestamps, origin);
  let truthAt: Trajectory | null = null;
  try {
    truthAt = groundTruthAt(c, gt, est.trajectory.t);
  } catch {
    // A truth that does not span the frames is not exported; the answers do not depend on it.
  }
  return {
    id: c.id,
    index: c.index,
    records,
    // Both files mark which poses are the frames' own (the rest: grid points between sparse frames).
    tum: formatTum({ ...est.trajectory, t: shifted(est.trajectory.t, origin) }, 'camera', measured) + formatQualityLine(quality),
    ...(truthAt ? { gtTum: formatTum({ ...truthAt, t: shifted(truthAt.t, origin) }, 'camera', measured) } : {}),
    quality,
    width: est.native.width,
    height: est.native.height,
    framesUsed: clip.frames.length,
    ms: { load: t1 - t0, vo: t2 - t1, total: performance.now() - t0 },
    engineRuns: est.runs,
    ...(o.inspect ? { inspection: { frameIndices: taskFrameIndices(full.frames.length, task.engine), timestamps: Array.from(clip.timestamps), native: est.native, arrays: oracle.arrays } } : {}),
  };
}

/** The oracle on one clip's data: dynamics it cannot label (not finite) fail that clip, not the run. */
function clipOracle<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof InputError) throw new ClipDataError(e.message);
    throw e;
  }
}
