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
import { aggregator, type ClipData, lateral, needArray, ParamReader, valueOf } from './rules.js';

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

/** A scalar a question's rule decides on, e.g. `min(accel)` for braking intensity. */
export interface DecisionValue {
  name: string;
  get: (c: ClipData) => number;
}

const ARRAY_NAMES = new Set(['timestamps', 'yaw', 'speed', 'accel', 'yaw_rate', 'jerk']);
const FEATURES = new Set<string>(FEATURE_NAMES);

function scalar(p: ParamReader, dfltAgg: string, prefer: 'features' | 'arrays'): DecisionValue {
  const feature = p.str('feature');
  const agg = p.str('aggregation', dfltAgg);
  const asFeature = prefer === 'features' ? FEATURES.has(feature) || !ARRAY_NAMES.has(feature) : !ARRAY_NAMES.has(feature);
  return { name: asFeature ? feature : `${agg}(${feature})`, get: valueOf(feature, agg, prefer, p.where) };
}

function extremeFor(op: string): 'min' | 'max' | 'max_abs' {
  return op === 'less_than' ? 'min' : op === 'abs_greater_than' ? 'max_abs' : 'max';
}

/** The scalars each rule family decides on, read from the question's (possibly scaled) params. */
export function decisionValues(q: Question): DecisionValue[] {
  const p = new ParamReader(q.params, `question '${q.id}'`);
  switch (q.ruleName) {
    case 'multi_threshold_classification':
    case 'threshold_classification':
    case 'range_check':
      return [scalar(p, 'mean', 'features')];
    case 'trend_classification':
      return [scalar(p, 'mean', 'arrays')];
    case 'threshold_event':
      return [scalar(p, 'min', 'arrays')];
    case 'or_threshold_event':
      return p.list('conditions').map((c) => scalar(c, 'max', 'arrays'));
    case 'yaw_rate_sign_with_deadzone': {
      const name = p.str('aggregation', 'mean');
      const agg = aggregator(name);
      return [{ name: `${name}(yaw_rate)`, get: (c) => agg(needArray(c, 'yaw_rate')) }];
    }
    case 'lateral_accel_threshold': {
      const name = p.str('aggregation', 'max');
      const agg = aggregator(name);
      return [{ name: `${name}(speed*|yaw_rate|)`, get: (c) => agg(lateral(c)) }];
    }
    case 'dominant_axis_comparison': {
      const name = p.str('aggregation', 'rms');
      const longName = p.str('longitudinal_feature', 'accel');
      const agg = aggregator(name);
      const absLong = (c: ClipData): Float64Array => needArray(c, longName).map(Math.abs);
      return [
        { name: `${name}(|${longName}|)`, get: (c) => agg(absLong(c)) },
        { name: `${name}(speed*|yaw_rate|)`, get: (c) => agg(lateral(c)) },
        {
          name: 'lateral/longitudinal',
          get: (c) => {
            const lo = agg(absLong(c));
            return lo > 1e-9 ? agg(lateral(c)) / lo : NaN;
          },
        },
      ];
    }
    case 'sequential_event':
      return (['first_event', 'second_event'] as const).map((k) => {
        const e = p.sub(k);
        const feature = e.str('feature');
        const name = extremeFor(e.str('operator'));
        const agg = aggregator(name);
        return { name: `${k === 'first_event' ? '1st' : '2nd'}: ${name}(${feature})`, get: (c: ClipData) => agg(needArray(c, feature)) };
      });
    case 'peak_half_detection': {
      const feature = p.str('feature');
      return [
        {
          name: `argmax(${feature})/(n-1)`,
          get: (c) => {
            const a = needArray(c, feature);
            let k = 0;
            for (let i = 1; i < a.length; i++) if (a[i] > a[k]) k = i;
            return a.length > 1 ? k / (a.length - 1) : NaN;
          },
        },
        {
          name: `(max-mean)/|mean| of ${feature}`,
          get: (c) => {
            const a = needArray(c, feature);
            const m = npMean(a);
            return Math.abs(m) > 1e-6 ? (Math.max(...a) - m) / Math.abs(m) : NaN;
          },
        },
      ];
    }
    case 'stop_and_go_detection': {
      const stop = p.num('stop_speed_threshold');
      const go = p.num('go_speed_threshold');
      const min = aggregator('min'), max = aggregator('max');
      return [
        { name: 'min(speed)', get: (c) => min(needArray(c, 'speed')) },
        { name: 'max(speed)', get: (c) => max(needArray(c, 'speed')) },
        {
          name: 'stop-go cycles',
          get: (c) => {
            const s = needArray(c, 'speed');
            let cycles = 0;
            let stopped = s[0] < stop;
            for (let i = 1; i < s.length; i++) {
              if (!stopped && s[i] < stop) stopped = true;
              else if (stopped && s[i] > go) {
                cycles++;
                stopped = false;
              }
            }
            return cycles;
          },
        },
      ];
    }
    case 'half_comparison': {
      const feature = p.str('feature');
      const name = p.str('aggregation', 'rms');
      const agg = aggregator(name);
      const halves = (c: ClipData): [number, number] => {
        const a = needArray(c, feature);
        const mid = Math.floor(a.length / 2);
        return [Math.abs(agg(a, 0, mid)), Math.abs(agg(a, mid, a.length))];
      };
      return [
        { name: `${name}(${feature}) 1st half`, get: (c) => halves(c)[0] },
        { name: `${name}(${feature}) 2nd half`, get: (c) => halves(c)[1] },
        {
          name: '|1st-2nd|/max',
          get: (c) => {
            const [a, b] = halves(c);
            return Math.abs(a - b) / Math.max(a, b, 1e-9);
          },
        },
      ];
    }
    default:
      return [];
  }
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
