/**
 * Labels drawn several times (a noisy ground truth's relabellings, one per draw) graded as
 * `evaluate` grades answers: per draw, each clip's drawn labels as the answers to its reference
 * labels; the metrics averaged over the draws. The label audit's ceilings and the report's check
 * of a run against them over the run's own clips are both this.
 */
import type { Prediction } from '../core/prediction.js';
import type { QuestionSet } from '../oracle/questions.js';
import { evaluate } from './metrics.js';

export interface DrawnClip {
  id: string;
  source: string;
  /** The labels graded against, per question (a question absent here is not graded). */
  reference: Readonly<Record<string, string>>;
}

export interface DrawnGrade {
  /** Balanced accuracy per question, mean over draws. */
  per_question: Record<string, number>;
  /** Pooled over every question as the grader pools them, and over `subset` (NaN when it has none). */
  all: number;
  subset: number;
  /** The same, the upper end of their spread over the draws (the 97.5th percentile; the value itself for one draw). */
  hi: { per_question: Record<string, number>; all: number; subset: number };
}

/** The share of draws under the spread's upper end. */
export const DRAW_QUANTILE = 0.975;

function upper(v: number[]): number {
  const s = v.slice().sort((a, b) => a - b);
  const x = DRAW_QUANTILE * (s.length - 1), lo = Math.floor(x);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (x - lo);
}

/** See the module comment. `labelsOf(i, k)`: clip i's labels in draw k. */
export function gradeDraws(clips: readonly DrawnClip[], draws: number, labelsOf: (i: number, k: number) => Readonly<Record<string, string>>, questions: QuestionSet, subset: ReadonlySet<string>): DrawnGrade {
  const byQ: Record<string, number[]> = {};
  const all: number[] = [], sub: number[] = [];
  for (let k = 0; k < draws; k++) {
    const recs: Prediction[] = [];
    clips.forEach((c, i) => {
      const got = labelsOf(i, k);
      for (const q of questions.questions) {
        const y = c.reference[q.id];
        if (y !== undefined) recs.push({ clip_id: c.id, question_id: q.id, source: c.source, oracle_label: y, model_answer: got[q.id] ?? null });
      }
    });
    const m = evaluate(recs, questions);
    for (const [q, g] of Object.entries(m.per_question)) (byQ[q] ??= []).push(g.balanced_acc);
    all.push(m.global.balanced_acc);
    const rs = recs.filter((r) => subset.has(r.question_id));
    sub.push(rs.length ? evaluate(rs, questions).global.balanced_acc : Number.NaN);
  }
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / draws;
  const perQ = (f: (v: number[]) => number) => Object.fromEntries(Object.entries(byQ).map(([q, v]) => [q, f(v)]));
  return { per_question: perQ(mean), all: mean(all), subset: mean(sub), hi: { per_question: perQ(upper), all: upper(all), subset: upper(sub) } };
}
