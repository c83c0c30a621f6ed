/**
 * baseline/ — the geometric baseline: an estimated trajectory goes through the benchmark's own
 * oracle and its labels become the answers, written as benchmark prediction records.
 * May import: core/, oracle/, vo/, datasets/.
 */
import type { Clip } from '../core/clip.js';
import type { Trajectory } from '../core/trajectory.js';
import { runOracle, type QuestionSet } from '../oracle/index.js';

/** The 6 questions every published geometric baseline answers (SPEC.md). */
export const GEOMETRIC_SUBSET = [
  'yaw_rate_turn_direction', 'speed_trend', 'stop_and_go', 'brake_then_turn', 'significant_heading_change', 'high_lateral_accel',
] as const;

export interface Prediction {
  qa_id: string;
  clip_id: string;
  question_id: string;
  category: string;
  oracle_label: string | null;
  model_answer: string;
  source: string;
}

/** `count` frame indices spread evenly over `n` frames (the published baselines use 10). */
export function evenFrames(n: number, count: number): number[] {
  if (count >= n) return Array.from({ length: n }, (_, i) => i);
  return Array.from({ length: count }, (_, i) => Math.round((i * (n - 1)) / (count - 1)));
}

/** A clip reduced to the given frame indices. */
export function selectFrames(clip: Clip, idx: number[]): Clip {
  const pick = <T>(a: ArrayLike<T>) => idx.map((i) => a[i]);
  const gt = clip.groundTruth;
  return {
    ...clip,
    frames: pick(clip.frames),
    timestamps: Float64Array.from(pick(clip.timestamps)),
    // Labels come from the full ground truth; the subset only changes what the estimator sees.
    groundTruth: gt,
  };
}

/**
 * Benchmark prediction records for one clip's answers (and oracle labels, when known), numbered
 * like the benchmark's QA generator (clip-major, question-file order from `qaBase`) whichever
 * subset `answer` keeps.
 */
export function predictionRecords(
  clipId: string,
  source: string,
  questions: QuestionSet,
  answers: Readonly<Record<string, string>>,
  truth: Readonly<Record<string, string>> | null,
  answer: ReadonlySet<string> | null,
  qaBase: number,
): Prediction[] {
  const out: Prediction[] = [];
  questions.questions.forEach((q, i) => {
    if (answer && !answer.has(q.id)) return;
    out.push({
      qa_id: `qa_${String(qaBase + i).padStart(8, '0')}`,
      clip_id: clipId,
      question_id: q.id,
      category: q.category,
      oracle_label: truth ? truth[q.id] : null,
      model_answer: answers[q.id],
      source,
    });
  });
  return out;
}

/** Prediction records for a clip: answers from the estimated trajectory, labels from the ground truth. */
export function predictClip(
  clip: Clip,
  estimated: Trajectory,
  questions: QuestionSet,
  answer: ReadonlySet<string> | null,
  qaBase: number,
): Prediction[] {
  const est = runOracle(estimated, questions).labels;
  const gt = clip.groundTruth ? runOracle(clip.groundTruth, questions).labels : null;
  return predictionRecords(clip.id, clip.source, questions, est, gt, answer, qaBase);
}
