/** Trajectory → arrays → features → labels: the benchmark's oracle as one call. */
import type { Trajectory } from '../core/trajectory.js';
import { computeDynamics, type DynamicsArrays, type DynamicsOptions } from './dynamics.js';
import { summaryFeatures, type SummaryFeatures } from './features.js';
import type { QuestionSet } from './questions.js';
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
    let answer: string;
    try {
      answer = String(q.label(clip)).toLowerCase();
    } catch (e) {
      throw new Error(`question '${q.id}': ${(e as Error).message}`);
    }
    if (q.choices && (q.answerType === 'binary' || q.answerType === 'multiclass') && !q.choices.includes(answer)) {
      throw new Error(`question '${q.id}': rule '${q.ruleName}' returned '${answer}', not one of ${q.choices.join('/')}`);
    }
    labels[q.id] = answer;
  }
  return labels;
}

export function runOracle(traj: Trajectory, questions: QuestionSet, opts: DynamicsOptions = {}): OracleResult {
  const arrays = computeDynamics(traj, opts);
  const features = summaryFeatures(arrays);
  return { arrays, features, labels: labelClip(clipData(arrays, features), questions) };
}
