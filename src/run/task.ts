/**
 * One clip of a benchmark run, start to finish: frames (image paths, or the frames of an mp4,
 * which the engine decodes itself in this worker) → native VO → the oracle over the estimate → one prediction record per QA
 * item, plus the estimate in TUM format. Runs inside a pool worker (src/run/worker.ts) and, for
 * tests, in-process. A clip whose data is missing or unreadable throws `ClipDataError`; the run
 * records it in the errors file and goes on.
 */
import { existsSync } from 'node:fs';
import { evenFrames, predictionRecords, selectFrames } from '../baseline/baseline.js';
import type { Clip } from '../core/clip.js';
import { type BenchmarkClip, ClipDataError, type QaItem } from '../datasets/benchmark.js';
import { formatTum } from '../io/trajectories.js';
import { type Photometric, probeVideo, type VideoFrame } from '../native/index.js';
import { groundTruthArrays, readNpzArrays } from '../datasets/groundtruth.js';
import { clipData, type DynamicsArrays, labelClip, loadQuestions, runOracle, summaryFeatures } from '../oracle/index.js';
import { estimateClip } from '../vo/estimate.js';

export interface ClipTask {
  clip: BenchmarkClip;
  /** The QA items to answer, in file order (already filtered to the answered questions). */
  qa: QaItem[];
  /** Frames the estimator sees, spread evenly; null = all. */
  frames: number | null;
  /** Question file. */
  config: string;
  /** Question ids to answer when the clip has no QA items (records numbered from `qaBase`). */
  questionIds: string[];
  qaBase: number;
  scale: 'road' | 'none';
  /** The tracker's photometric stage (VoOptions.photometric). */
  photometric?: Photometric;
  /** Shared flag: non-zero once the run is interrupted; queued tasks then return at once. */
  cancel?: Int32Array;
}

export interface ClipOutput {
  id: string;
  index: number;
  /** This clip's prediction records as JSONL, every line '\n'-terminated. */
  lines: string;
  count: number;
  /** The estimated planar trajectory (TUM, camera convention). */
  tum: string;
  width: number;
  height: number;
  framesUsed: number;
  /** Milliseconds: frame loading (file checks, video probe; frames decode inside VO), VO, whole task. */
  ms: { load: number; vo: number; total: number };
}

export const CANCELLED = 'cancelled: the run was interrupted';

/** A prediction record, in the field order `egogeo baseline` writes. */
export interface PredictionRecord {
  qa_id: string;
  clip_id: string;
  question_id: string;
  category: string;
  oracle_label: unknown;
  model_answer: string | null;
  source: string;
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

export async function runClipTask(task: ClipTask): Promise<ClipOutput> {
  if (task.cancel && Atomics.load(task.cancel, 0) !== 0) throw new Error(CANCELLED);
  const t0 = performance.now();
  const c = task.clip;
  const loaded = loadFrames(c);
  let gt: DynamicsArrays | null = null;
  if (c.arrays) {
    if (!existsSync(c.arrays)) throw new ClipDataError(`missing array file ${c.arrays}`);
    try {
      gt = readNpzArrays(c.arrays);
    } catch (e) {
      throw new ClipDataError(`unreadable array file ${(e as Error).message.split('\n')[0]}`);
    }
  }
  if (loaded.frames.length < 2) throw new ClipDataError(`only ${loaded.frames.length} frame(s); VO needs at least 2`);
  const t1 = performance.now();

  const full: Clip = {
    id: c.id,
    source: c.source,
    frames: loaded.frames,
    timestamps: Float64Array.from(loaded.timestamps),
    intrinsics: c.intrinsics,
    hfovDeg: c.hfovDeg,
    cameraHeight: c.cameraHeight,
    roadNormal: c.roadNormal,
  };
  const clip = task.frames === null ? full : selectFrames(full, evenFrames(full.frames.length, task.frames));
  let est;
  try {
    est = estimateClip(clip, { scale: task.scale, photometric: task.photometric });
  } catch (e) {
    // The engine names unreadable images and bad input; either way this clip cannot be answered.
    throw new ClipDataError(`VO failed: ${(e as Error).message.split('\n')[0]}`);
  }
  const t2 = performance.now();

  const questions = loadQuestions(task.config);
  const labels = runOracle(est.trajectory, questions).labels;
  const records: PredictionRecord[] = [];
  if (task.qa.length > 0) {
    for (const q of task.qa) {
      records.push({
        qa_id: q.qa_id,
        clip_id: c.id,
        question_id: q.question_id,
        category: q.category,
        oracle_label: q.answer,
        model_answer: labels[q.question_id] ?? null,
        source: c.source,
      });
    }
  } else {
    // No QA items: answer the questions; the oracle labels come from the ground truth — the
    // arrays, else the KITTI poses under the frames (null without either).
    const g = gt ?? groundTruthArrays(c, null)?.arrays ?? null;
    const truth = g ? labelClip(clipData(g, summaryFeatures(g)), questions) : null;
    records.push(...predictionRecords(c.id, c.source, questions, labels, truth, new Set(task.questionIds), task.qaBase));
  }
  const lines = records.map((r) => `${JSON.stringify(r)}\n`).join('');
  return {
    id: c.id,
    index: c.index,
    lines,
    count: records.length,
    tum: formatTum(est.trajectory),
    width: est.native.width,
    height: est.native.height,
    framesUsed: clip.frames.length,
    ms: { load: t1 - t0, vo: t2 - t1, total: performance.now() - t0 },
  };
}
