/**
 * The geometric baseline on synthetic clips: each rendered clip (JPEG frames on disk) goes
 * through the VO engine with the renderer's own intrinsics and camera height, the estimated
 * trajectory through the oracle, and the answers become benchmark prediction records (with the
 * ground-truth oracle label), ready for the grader. Used by `egogeo demo` and
 * bench/synth-accuracy.mjs.
 */
import { join } from 'node:path';
import { evenFrames, predictClip, selectFrames, type Prediction } from '../baseline/baseline.js';
import type { Clip } from '../core/clip.js';
import { native } from '../native/index.js';
import type { QuestionSet } from '../oracle/index.js';
import { estimateClipAsync } from '../vo/estimate.js';
import { framePath } from './dataset.js';
import { groundTruth, type SynthClip } from './plan.js';
import { PRESETS } from './presets.js';

/** The estimator's view of a written synthetic clip; `source` names the preset for per-source tables. */
export function estimatorClip(c: SynthClip, dir: string): Clip {
  const cam = PRESETS[c.preset].camera;
  return {
    id: c.id,
    source: `synthetic-${c.preset}`,
    frames: c.timestamps.map((_, k) => join(dir, framePath(c.id, k))),
    timestamps: Float64Array.from(c.timestamps),
    intrinsics: { fx: cam.fx, fy: cam.fy, cx: cam.cx, cy: cam.cy },
    cameraHeight: cam.mountHeight,
    groundTruth: groundTruth(c),
  };
}

export interface BaselineRun {
  predictions: Prediction[];
  /** Seconds of wall time. */
  seconds: number;
  /** Per clip: id, VO milliseconds, ok/failed pairs. */
  clips: { id: string; ms: number; okPairs: number; pairs: number }[];
}

/**
 * Runs VO → oracle → answers over every clip, `concurrency` clips at a time (each runs whole
 * inside C++ on the libuv pool). `frames`: how many evenly spaced frames the estimator sees
 * (default all).
 */
export async function runBaseline(
  clips: readonly SynthClip[],
  dir: string,
  questions: QuestionSet,
  opts: { concurrency?: number; frames?: number; onClip?: () => void } = {},
): Promise<BaselineRun> {
  native().setThreads(1);
  const t0 = Date.now();
  const preds: Prediction[][] = new Array(clips.length);
  const info: BaselineRun['clips'] = new Array(clips.length);
  let next = 0;
  const worker = async () => {
    while (next < clips.length) {
      const i = next++;
      const full = estimatorClip(clips[i], dir);
      const clip = opts.frames ? selectFrames(full, evenFrames(full.frames.length, opts.frames)) : full;
      const est = await estimateClipAsync(clip);
      preds[i] = predictClip(clip, est.trajectory, questions, null, i * questions.questions.length);
      info[i] = { id: clip.id, ms: est.native.timing.total, okPairs: est.native.pairs.filter((p) => p.quality === 'ok' || p.quality === 'low_parallax').length, pairs: est.native.pairs.length };
      opts.onClip?.();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 2) }, worker));
  return { predictions: preds.flat(), seconds: (Date.now() - t0) / 1000, clips: info };
}
