/**
 * baseline/ — the geometric baseline: an estimated trajectory goes through the benchmark's own
 * oracle and its labels become the answers, written as benchmark prediction records (io/predictions.ts).
 * May import: core/, io/, oracle/.
 */
import type { Clip, QaItem } from '../core/clip.js';
import type { Trajectory } from '../core/trajectory.js';
import { oracleText, type Prediction } from '../core/prediction.js';
import { runOracle, type QuestionSet } from '../oracle/index.js';

/** The 6 questions every published geometric baseline answers (SPEC.md). */
export const GEOMETRIC_SUBSET = [
  'yaw_rate_turn_direction', 'speed_trend', 'stop_and_go', 'brake_then_turn', 'significant_heading_change', 'high_lateral_accel',
] as const;

/**
 * The one prediction-record builder. With the dataset's QA items: one record per item, in file
 * order, its answer as the oracle label. Without: one record per question (the `answer` subset,
 * all when null), numbered like the benchmark's QA generator (clip-major, question-file order
 * from `qaBase`), oracle labels from the ground truth's labels when known.
 */
export function predictionRecords(
  clip: Pick<Clip, 'id' | 'source'>,
  questions: QuestionSet,
  answers: Readonly<Record<string, string>>,
  from: { qa: readonly QaItem[] } | { truth: Readonly<Record<string, string>> | null; answer: ReadonlySet<string> | null; qaBase: number },
): Required<Prediction>[] {
  const record = (qa_id: string, question_id: string, category: string, oracle_label: string | null): Required<Prediction> => ({
    qa_id, clip_id: clip.id, question_id, category, oracle_label, model_answer: answers[question_id] ?? null, source: clip.source,
  });
  if ('qa' in from) return from.qa.map((q) => record(q.qa_id, q.question_id, q.category, oracleText(q.answer)));
  const out: Required<Prediction>[] = [];
  questions.questions.forEach((q, i) => {
    if (from.answer && !from.answer.has(q.id)) return;
    out.push(record(`qa_${String(from.qaBase + i).padStart(8, '0')}`, q.id, q.category, from.truth ? (from.truth[q.id] ?? null) : null));
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
): Required<Prediction>[] {
  const est = runOracle(estimated, questions).labels;
  const gt = clip.groundTruth ? runOracle(clip.groundTruth, questions).labels : null;
  return predictionRecords(clip, questions, est, { truth: gt, answer, qaBase });
}
