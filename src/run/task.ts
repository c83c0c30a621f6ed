/**
 * One clip of a benchmark run, start to finish: frames (image paths, or an mp4 decoded here to
 * greyscale buffers) → native VO → the oracle over the estimate → one prediction record per QA
 * item, plus the estimate in TUM format. Runs inside a pool worker (src/run/worker.ts) and, for
 * tests, in-process. A clip whose data is missing or unreadable throws `ClipDataError`; the run
 * records it in the errors file and goes on.
 */
import { existsSync } from 'node:fs';
import { evenFrames, predictionRecords, selectFrames } from '../baseline/baseline.js';
import type { Clip } from '../core/clip.js';
import { type BenchmarkClip, ClipDataError, type QaItem } from '../datasets/benchmark.js';
import { decodeVideo } from '../datasets/video.js';
import { requestFrames } from './decoder.js';
import { formatTum } from '../io/trajectories.js';
import type { PixelFrame } from '../native/index.js';
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
  /** BroadcastChannel of the main thread's video decoder (src/run/decoder.ts); none: decode here. */
  decoder?: string;
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
  /** Milliseconds: frame loading (video decode; images decode inside VO), VO, whole task. */
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
 * The clip's frames and timestamps (all of them): image paths as they are (the engine decodes
 * them), video clips decoded to greyscale — by the main thread's decoder when `decoder` names one.
 */
export async function loadFrames(c: BenchmarkClip, decoder?: string): Promise<{ frames: (string | PixelFrame)[]; timestamps: number[] }> {
  if (c.problem) throw new ClipDataError(c.problem);
  if (c.frames) {
    for (const f of c.frames) if (!existsSync(f)) throw new ClipDataError(`missing frame ${f}`);
    return { frames: c.frames, timestamps: c.timestamps! };
  }
  const v = decoder ? await requestFrames(decoder, c.video!) : decodeVideo(c.video!);
  let timestamps = c.timestamps;
  if (timestamps && timestamps.length !== v.frames.length) {
    throw new ClipDataError(`video ${c.video} has ${v.frames.length} frames but the record gives ${timestamps.length} frame_timestamps`);
  }
  if (!timestamps) {
    const fps = c.fps ?? v.fps;
    if (!(fps > 0)) throw new ClipDataError(`video ${c.video}: no frame rate (give 'fps' or 'frame_timestamps' in the record)`);
    timestamps = v.frames.map((_, i) => i / fps);
  }
  return { frames: v.frames, timestamps };
}

export async function runClipTask(task: ClipTask): Promise<ClipOutput> {
  if (task.cancel && Atomics.load(task.cancel, 0) !== 0) throw new Error(CANCELLED);
  const t0 = performance.now();
  const c = task.clip;
  const loaded = await loadFrames(c, task.decoder);
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
    cameraHeight: c.cameraHeight,
  };
  const clip = task.frames === null ? full : selectFrames(full, evenFrames(full.frames.length, task.frames));
  let est;
  try {
    est = estimateClip(clip, { scale: task.scale });
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
