/**
 * One clip of a benchmark run, start to finish: frames (image paths, or the frames of an mp4,
 * which the engine decodes itself in this worker) → native VO → the oracle over the estimate → one prediction record per QA
 * item, plus the estimate in TUM format. Runs inside a pool worker (src/run/worker.ts) and, for
 * tests, in-process. A clip whose data is missing or unreadable throws `ClipDataError`; the run
 * records it in the errors file and goes on.
 */
import { existsSync } from 'node:fs';
import { evenFrames, type Prediction, predictionRecords, selectFrames } from '../baseline/baseline.js';
import type { Trajectory } from '../core/trajectory.js';
import type { Clip } from '../core/clip.js';
import { CancelledError, ClipDataError, firstLine, InputError, InternalError, NATIVE_INTERNAL } from '../core/errors.js';
import type { BenchmarkClip, QaItem } from '../datasets/benchmark.js';
import { formatTum } from '../io/trajectories.js';
import { type Device, type Photometric, probeVideo, type VideoFrame, type VoOptions } from '../native/index.js';
import { groundTruthArrays, readNpzArrays } from '../datasets/groundtruth.js';
import { clipData, type DynamicsArrays, labelClip, loadQuestions, questionsFromDocument, runOracle, summaryFeatures } from '../oracle/index.js';
import { estimateClip, estimateClipAsync } from '../vo/estimate.js';

export interface ClipTask {
  clip: BenchmarkClip;
  /** The QA items to answer, in file order (already filtered to the answered questions). */
  qa: QaItem[];
  /** Frames the estimator sees, spread evenly; null = all. */
  frames: number | null;
  /** Question file. */
  config: string;
  /** Its parsed YAML (QuestionSet.document), when the caller has it: the worker then parses nothing. */
  questionsDoc?: unknown;
  /** Question ids to answer when the clip has no QA items (records numbered from `qaBase`). */
  questionIds: string[];
  qaBase: number;
  /** 'gt': ground-truth speeds from the clip's resolved trajectory (diagnosis). */
  scale: 'road' | 'gt' | 'none';
  /** The tracker's photometric stage (VoOptions.photometric). */
  photometric?: Photometric;
  /** Where pyramids, FAST and KLT run (VoOptions.device; default cpu). */
  device?: Device;
  /** Shared flag: non-zero once the run is interrupted; queued tasks then return at once. */
  cancel?: Int32Array;
}

export interface ClipOutput {
  id: string;
  index: number;
  /** This clip's prediction records (structured-cloned from the worker; written by the caller). */
  records: Prediction[];
  /** The estimated planar trajectory (TUM, camera convention). */
  tum: string;
  width: number;
  height: number;
  framesUsed: number;
  /** Milliseconds: frame loading (file checks, video probe; frames decode inside VO), VO, whole task. */
  ms: { load: number; vo: number; total: number };
}


/**
 * The clip's frames and timestamps (all of them): image paths as they are, a video's frames as
 * references into it — the engine decodes both in this worker. A video's frame count and frame
 * rate come from its container (probeVideo; the engine checks the count when it decodes).
 */
export function loadFrames(c: BenchmarkClip): { frames: (string | VideoFrame)[]; timestamps: number[] } {
  if (c.problem) throw new ClipDataError(c.problem);
  if (c.frames) {
    for (const f of c.frames) if (!existsSync(f)) throw new ClipDataError(`missing frame ${f}`);
    return { frames: c.frames, timestamps: c.timestamps! };
  }
  const video = c.video!;
  if (!existsSync(video)) throw new ClipDataError(`missing video ${video}`);
  let info;
  try {
    info = probeVideo(video);
  } catch (e) {
    throw new ClipDataError(`unreadable video ${video} (${(e as Error).message.split('\n')[0].replace(/^probeVideo: /, '')})`);
  }
  const n = info.frames;
  if (!(n > 0)) throw new ClipDataError(`unreadable video ${video} (its container gives no frame count)`);
  let timestamps = c.timestamps;
  if (timestamps && timestamps.length !== n) {
    throw new ClipDataError(`video ${video} has ${n} frames but the record gives ${timestamps.length} frame_timestamps`);
  }
  if (!timestamps) {
    const fps = c.fps ?? info.fps;
    if (!(fps > 0)) throw new ClipDataError(`video ${video}: no frame rate (give 'fps' or 'frame_timestamps' in the record)`);
    timestamps = Array.from({ length: n }, (_, i) => i / fps);
  }
  return { frames: Array.from({ length: n }, (_, index) => ({ video, index })), timestamps };
}

/**
 * A dataset clip as the engine takes it: its frames loaded (file checks, a video's frame count and
 * rate) and its camera. The one place a BenchmarkClip becomes a Clip (runs, the viewer).
 */
export function engineClip(c: BenchmarkClip): Clip {
  const loaded = loadFrames(c);
  return {
    id: c.id,
    source: c.source,
    frames: loaded.frames,
    timestamps: Float64Array.from(loaded.timestamps),
    intrinsics: c.intrinsics,
    hfovDeg: c.hfovDeg,
    cameraHeight: c.cameraHeight,
    roadNormal: c.roadNormal,
  };
}

/**
 * `--frames`: 'all' (every frame: null, the one representation of "all" a run and its record use)
 * or a count of at least 2 spread evenly. One parser for every command that takes the option.
 */
export function parseFrames(s: string | undefined, flag = '--frames'): number | null {
  if (s === undefined || s === 'all') return null;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 2) throw new InputError(`${flag} must be 'all' or an integer >= 2, got '${s}'`);
  return n;
}

/** The engine settings a run applies to every clip (its run key's): frame count, scale, photometric stage, device. */
export type EngineSettings = Pick<ClipTask, 'frames' | 'scale' | 'photometric' | 'device'>;

/**
 * A clip as a run hands it to the engine: the frames it selects (`frames` evenly spread) and the
 * options it passes. The one place both are decided: a run's workers and `egogeo view` use it.
 */
export function engineInput(c: BenchmarkClip, s: EngineSettings, full: Clip = engineClip(c)): { clip: Clip; options: VoOptions } {
  const clip = s.frames === null || s.frames === undefined ? full : selectFrames(full, evenFrames(full.frames.length, s.frames));
  const gtSpeeds = s.scale === 'gt' ? pairSpeeds(c.truth, clip.timestamps) : undefined;
  return { clip, options: { scale: s.scale, photometric: s.photometric, device: s.device, gtSpeeds } };
}

/** `async`: the engine runs on libuv's thread pool (the event loop stays free: one-worker runs on the main thread). */
export async function runClipTask(task: ClipTask, o: { async?: boolean } = {}): Promise<ClipOutput> {
  if (task.cancel && Atomics.load(task.cancel, 0) !== 0) throw new CancelledError();
  const t0 = performance.now();
  const c = task.clip;
  const full = engineClip(c);
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
  const t1 = performance.now();
  const { clip, options } = engineInput(c, task, full);
  let est;
  try {
    est = o.async ? await estimateClipAsync(clip, options) : estimateClip(clip, options);
  } catch (e) {
    // The engine names unreadable images and bad input: this clip cannot be answered. Its own
    // failure (tagged by the addon) is a bug: the run stops rather than filing it under the clip.
    if ((e as { code?: string }).code === NATIVE_INTERNAL) throw new InternalError(`clip ${c.id}: the engine failed: ${firstLine(e)}`);
    throw new ClipDataError(`VO failed: ${firstLine(e)}`);
  }
  const t2 = performance.now();

  const questions = task.questionsDoc === undefined ? loadQuestions(task.config) : questionsFromDocument(task.questionsDoc, task.config);
  const labels = runOracle(est.trajectory, questions).labels;
  let records: Prediction[];
  if (task.qa.length > 0) {
    records = predictionRecords(c, questions, labels, { qa: task.qa });
  } else {
    // No QA items: answer the questions; the oracle labels come from the ground truth — the
    // arrays, else the trajectory the dataset resolved (null without either).
    const g = gt ?? groundTruthArrays(c, null)?.arrays ?? null;
    const truth = g ? labelClip(clipData(g, summaryFeatures(g)), questions) : null;
    records = predictionRecords(c, questions, labels, { truth, answer: new Set(task.questionIds), qaBase: task.qaBase });
  }
  return {
    id: c.id,
    index: c.index,
    records,
    tum: formatTum(est.trajectory),
    width: est.native.width,
    height: est.native.height,
    framesUsed: clip.frames.length,
    ms: { load: t1 - t0, vo: t2 - t1, total: performance.now() - t0 },
  };
}

/** Ground-truth speed (m/s) per frame pair, from the clip's trajectory (for `scale: 'gt'`). */
export function pairSpeeds(truth: Trajectory | undefined, ts: ArrayLike<number>): number[] {
  if (!truth) throw new ClipDataError("scale 'gt' needs the clip's ground-truth trajectory (KITTI poses)");
  const g = truth;
  const at = (t: number) => {
    let i = 0;
    while (i < g.t.length - 2 && g.t[i + 1] < t) i++;
    const f = (t - g.t[i]) / (g.t[i + 1] - g.t[i]);
    return [g.x[i] + f * (g.x[i + 1] - g.x[i]), g.y[i] + f * (g.y[i + 1] - g.y[i])];
  };
  return Array.from({ length: ts.length - 1 }, (_, k) => {
    const a = at(ts[k]), b = at(ts[k + 1]);
    return Math.hypot(b[0] - a[0], b[1] - a[1]) / (ts[k + 1] - ts[k]);
  });
}
