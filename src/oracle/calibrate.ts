/**
 * Threshold calibration over a set of labelled trajectories, after the reference's
 * `dataset/scripts/calibrate_thresholds.py`: distributions of the 12 summary features and of the
 * scalar each question's rule decides on, label balance at the configured thresholds, and for
 * multi-threshold questions the equal-frequency thresholds (k classes → the k−1 percentiles at
 * 100·i/k, NumPy's linear method) with the balance they give. Pure: no I/O.
 */
import { npMean, npPercentile } from '../core/numeric.js';
import { FEATURE_NAMES } from './features.js';
import { clipData, type OracleResult } from './oracle.js';
import type { Question } from './questions.js';
import { type DecisionValue, familyOf } from './families/index.js';
import { ParamReader } from './rules.js';

export type { DecisionValue } from './families/index.js';

export interface Distribution {
  n: number;
  mean: number;
  /** Population standard deviation (`np.std`, ddof 0). */
  std: number;
  min: number;
  p5: number;
  p25: number;
  p50: number;
  p75: number;
  p95: number;
  max: number;
}

export const DISTRIBUTION_KEYS = ['n', 'mean', 'std', 'min', 'p5', 'p25', 'p50', 'p75', 'p95', 'max'] as const;

/** Distribution of the finite values (NaN marks "not defined for this trajectory" and is skipped). */
export function distribution(values: ArrayLike<number>): Distribution {
  const v = Float64Array.from(Array.prototype.filter.call(values, (x: number) => Number.isFinite(x)) as number[]);
  const n = v.length;
  if (n === 0) return { n, mean: NaN, std: NaN, min: NaN, p5: NaN, p25: NaN, p50: NaN, p75: NaN, p95: NaN, max: NaN };
  const mean = npMean(v);
  const sq = new Float64Array(n);
  for (let i = 0; i < n; i++) sq[i] = (v[i] - mean) ** 2;
  let min = Infinity, max = -Infinity;
  for (const x of v) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  return {
    n,
    mean,
    std: Math.sqrt(npMean(sq)),
    min,
    p5: npPercentile(v, 5),
    p25: npPercentile(v, 25),
    p50: npPercentile(v, 50),
    p75: npPercentile(v, 75),
    p95: npPercentile(v, 95),
    max,
  };
}

/** The scalars a question's rule decides on (its family's `decisionValues`), read from its (possibly scaled) params. */
export function decisionValues(q: Question): DecisionValue[] {
  return familyOf(q.ruleName, `question '${q.id}'`).decisionValues(new ParamReader(q.params, `question '${q.id}'`));
}

export interface ThresholdBalance {
  thresholds: number[];
  /** Fraction of trajectories per label, in label order. */
  balance: Record<string, number>;
}

export interface QuestionCalibration {
  id: string;
  rule: string;
  labels: string[];
  values: { name: string; distribution: Distribution }[];
  /** Fraction per label of the oracle's labels at the configured thresholds. */
  balance: Record<string, number>;
  /** Multi-threshold questions: the configured vs the equal-frequency thresholds. */
  multiThreshold?: { value: string; published: ThresholdBalance; equalFrequency: ThresholdBalance };
}

export interface CalibrationReport {
  n: number;
  features: Record<string, Distribution>;
  questions: QuestionCalibration[];
}

/** The reference's `_apply_multi_threshold`: first threshold the value is below, else the last label. */
export function applyThresholds(v: number, thresholds: readonly number[], labels: readonly string[]): string {
  for (let i = 0; i < thresholds.length; i++) if (v < thresholds[i]) return labels[i];
  return labels[labels.length - 1];
}

/** The reference's `suggest_equal_freq` thresholds: percentiles 100·i/k for i = 1..k−1. */
export function equalFrequencyThresholds(values: ArrayLike<number>, k: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < k - 1; i++) out.push(npPercentile(values, (100 * (i + 1)) / k));
  return out;
}

function fractions(labels: readonly string[], order: readonly string[]): Record<string, number> {
  const counts = new Map<string, number>(order.map((l) => [l, 0]));
  for (const l of labels) counts.set(l, (counts.get(l) ?? 0) + 1);
  const out: Record<string, number> = {};
  for (const [l, c] of counts) out[l] = labels.length ? c / labels.length : NaN;
  return out;
}

/** Calibration report over oracle results (the labels must come from `questions`' own set). */
export function calibrate(results: readonly OracleResult[], questions: readonly Question[]): CalibrationReport {
  const clips = results.map((r) => clipData(r.arrays, r.features));
  const features: Record<string, Distribution> = {};
  for (const f of FEATURE_NAMES) features[f] = distribution(results.map((r) => r.features[f]));
  const out: QuestionCalibration[] = [];
  for (const q of questions) {
    const values = decisionValues(q).map((d) => ({ name: d.name, vals: clips.map((c) => d.get(c)) }));
    const observed = results.map((r) => r.labels[q.id]);
    const order = q.choices ?? [...new Set(observed)].sort();
    const qc: QuestionCalibration = {
      id: q.id,
      rule: q.ruleName,
      labels: [...order],
      values: values.map((v) => ({ name: v.name, distribution: distribution(v.vals) })),
      balance: fractions(observed, order),
    };
    if (q.ruleName === 'multi_threshold_classification') {
      const p = new ParamReader(q.params, `question '${q.id}'`);
      const thresholds = p.nums('thresholds');
      const labels = p.strs('labels').map((l) => l.toLowerCase());
      const vals = values[0].vals.filter((v) => Number.isFinite(v));
      const eq = vals.length ? equalFrequencyThresholds(vals, labels.length) : thresholds.map(() => NaN);
      qc.multiThreshold = {
        value: values[0].name,
        published: { thresholds: [...thresholds], balance: fractions(vals.map((v) => applyThresholds(v, thresholds, labels)), labels) },
        equalFrequency: { thresholds: eq, balance: fractions(vals.map((v) => applyThresholds(v, eq, labels)), labels) },
      };
    }
    out.push(qc);
  }
  return { n: results.length, features, questions: out };
}
