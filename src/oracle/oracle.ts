/** Trajectory → arrays → features → labels: the benchmark's oracle as one call. */
import { checkTrajectory, type Trajectory } from '../core/trajectory.js';
import { computeDynamics, type DynamicsArrays, type DynamicsOptions } from './dynamics.js';
import { summaryFeatures, type SummaryFeatures } from './features.js';
import type { Question, QuestionSet } from './questions.js';
import type { ClipData } from './rules.js';

export interface OracleResult {
  arrays: DynamicsArrays;
  features: SummaryFeatures;
  labels: Record<string, string>;
}

/** The arrays under the names the reference's rules look up (its npz keys, position aside). */
export function clipData(arrays: DynamicsArrays, features: SummaryFeatures): ClipData {
  return {
    features: features as unknown as Record<string, number>,
    arrays: {
      timestamps: arrays.timestamps,
      yaw: arrays.yaw,
      speed: arrays.speed,
      accel: arrays.accel,
      yaw_rate: arrays.yaw_rate,
      jerk: arrays.jerk,
    },
  };
}

/** Labels every question of the set; a rule that cannot run names the question in its error. */
export function labelClip(clip: ClipData, questions: QuestionSet): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const q of questions.questions) {
    let raw: string;
    try {
      raw = q.label(clip);
    } catch (e) {
      throw new Error(`question '${q.id}': ${(e as Error).message}`);
    }
    labels[q.id] = checkedAnswer(q, raw);
  }
  return labels;
}

/** Validated, lower-cased answers per question, memoised (a rule returns a handful of labels). */
const answerMemo = new WeakMap<Question, Map<string, string>>();

function checkedAnswer(q: Question, raw: string): string {
  let memo = answerMemo.get(q);
  if (!memo) {
    memo = new Map();
    answerMemo.set(q, memo);
  }
  const hit = memo.get(raw);
  if (hit !== undefined) return hit;
  const answer = String(raw).toLowerCase();
  if (q.choices && (q.answerType === 'binary' || q.answerType === 'multiclass') && !q.choices.includes(answer)) {
    throw new Error(`question '${q.id}': rule '${q.ruleName}' returned '${answer}', not one of ${q.choices.join('/')}`);
  }
  if (typeof raw === 'string' && memo.size < 64) memo.set(raw, answer);
  return answer;
}

export function runOracle(traj: Trajectory, questions: QuestionSet, opts: DynamicsOptions = {}): OracleResult {
  const arrays = computeDynamics(checkTrajectory(traj), opts);
  const features = summaryFeatures(arrays, `trajectory '${traj.id}'`);
  return { arrays, features, labels: labelClip(clipData(arrays, features), questions) };
}
