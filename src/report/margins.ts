/**
 * How far a clip's deciding value sits from a question's threshold — the measure that tells a
 * near-threshold disagreement (the oracle label flips with a small threshold change, so a small
 * trajectory error flips it too) from a real estimation error. Both sides are measured: the
 * ground truth's value and the estimate's (`rel`, `estimate_rel`).
 *
 * Every rule family is described by the comparisons it makes (a value, its thresholds, whether the
 * condition holds). For one comparison the relevant threshold is the first one crossed on the way
 * from the ground-truth value to the estimate's value (else the nearest), and the margin is the
 * relative distance `|value − threshold| / |threshold|`. Rules with several comparisons combine
 * them as the rule does: an OR rule that says "yes" flips only when every satisfied condition
 * fails (the largest margin among them decides); one that says "no" flips when any condition is
 * met (the smallest decides); AND rules the other way round. An argmax rule (which half holds the
 * peak) compares the two halves' maxima: its margin is their difference relative to the peak.
 * Pure: no I/O.
 */
import { npMean } from '../core/numeric.js';
import { FEATURE_NAMES } from '../oracle/features.js';
import type { Question } from '../oracle/questions.js';
import { aggregator, type ClipData, lateral, needArray, ParamReader, valueOf } from '../oracle/rules.js';

export interface Margin {
  /** What is compared, e.g. `abs_max(yaw_rate)` or `mean_abs_jerk`. */
  feature: string;
  /** On the ground truth. */
  value: number;
  /** The same quantity on the estimated trajectory (when given). */
  estimate: number | null;
  threshold: number;
  /** |value − threshold| / |threshold| (absolute distance when the threshold is 0). */
  rel: number;
  /** The same distance for the estimate's value (null without an estimate). */
  estimate_rel: number | null;
}

interface Comparison {
  feature: string;
  get: (c: ClipData) => number;
  thresholds: number[];
  /** Whether the condition holds for a value (AND/OR rules). */
  holds?: (v: number) => boolean;
}

/**
 * How the comparisons decide: one value; AND / OR of conditions; or `gated`: the first comparison
 * is a gate (peak prominence, both axes inside their dead zones) that decides while it holds for
 * either side, else the second comparison does.
 */
type Plan = { combine: 'one' | 'and' | 'or' | 'gated'; comparisons: Comparison[] };

const FEATURES = new Set<string>(FEATURE_NAMES);
const ARRAYS = new Set(['timestamps', 'yaw', 'speed', 'accel', 'yaw_rate', 'jerk']);
const relDist = (v: number, t: number): number => (Math.abs(t) > 1e-12 ? Math.abs(v - t) / Math.abs(t) : Math.abs(v - t));

/** A scalar as `valueOf` reads it, named as a reader would write it. */
function scalar(feature: string, agg: string, prefer: 'features' | 'arrays', where: string): Pick<Comparison, 'feature' | 'get'> {
  const isFeature = prefer === 'features' ? FEATURES.has(feature) || !ARRAYS.has(feature) : !ARRAYS.has(feature);
  return { feature: isFeature ? feature : `${agg}(${feature})`, get: valueOf(feature, agg, prefer, where) };
}

function plan(q: Question): Plan {
  const p = new ParamReader(q.params, `question '${q.id}'`);
  const one = (c: Comparison): Plan => ({ combine: 'one', comparisons: [c] });
  switch (q.ruleName) {
    case 'yaw_rate_sign_with_deadzone': {
      const name = p.str('aggregation', 'mean');
      const agg = aggregator(name);
      return one({ feature: `${name}(yaw_rate)`, get: (c) => agg(needArray(c, 'yaw_rate')), thresholds: [p.num('threshold_positive'), p.num('threshold_negative')] });
    }
    case 'multi_threshold_classification':
      return one({ ...scalar(p.str('feature'), p.str('aggregation', 'mean'), 'features', p.where), thresholds: p.nums('thresholds') });
    case 'threshold_classification':
      return one({ ...scalar(p.str('feature'), p.str('aggregation', 'mean'), 'features', p.where), thresholds: [p.num('threshold')] });
    case 'range_check':
      return one({ ...scalar(p.str('feature'), p.str('aggregation', 'mean'), 'features', p.where), thresholds: [p.num('min_value', -Infinity), p.num('max_value', Infinity)] });
    case 'trend_classification':
      return one({ ...scalar(p.str('feature'), p.str('aggregation', 'mean'), 'arrays', p.where), thresholds: [p.num('threshold_positive'), p.num('threshold_negative')] });
    case 'threshold_event':
      return one({ ...scalar(p.str('feature'), p.str('aggregation', 'min'), 'arrays', p.where), thresholds: [p.num('threshold')] });
    case 'lateral_accel_threshold': {
      const name = p.str('aggregation', 'max');
      const agg = aggregator(name);
      return one({ feature: `${name}(speed*|yaw_rate|)`, get: (c) => agg(lateral(c)), thresholds: [p.num('threshold')] });
    }
    case 'or_threshold_event':
      return {
        combine: 'or',
        comparisons: p.list('conditions').map((k) => {
          const t = k.num('threshold');
          const less = k.str('operator') === 'less_than';
          return { ...scalar(k.str('feature'), k.str('aggregation', 'max'), 'arrays', k.where), thresholds: [t], holds: (v: number) => (less ? v < t : v > t) };
        }),
      };
    case 'sequential_event':
      // The timing window aside, "yes" needs both events: an AND of their extremes.
      return {
        combine: 'and',
        comparisons: (['first_event', 'second_event'] as const).map((key) => {
          const e = p.sub(key);
          const feature = e.str('feature');
          const op = e.str('operator');
          const t = e.num('threshold');
          const name = op === 'less_than' ? 'min' : op === 'abs_greater_than' ? 'max_abs' : 'max';
          const agg = aggregator(name);
          return { feature: `${name}(${feature})`, get: (c: ClipData) => agg(needArray(c, feature)), thresholds: [t], holds: (v: number) => (op === 'less_than' ? v < t : v > t) };
        }),
      };
    case 'stop_and_go_detection': {
      const stop = p.num('stop_speed_threshold');
      const go = p.num('go_speed_threshold');
      const min = aggregator('min'), max = aggregator('max');
      return {
        combine: 'and',
        comparisons: [
          { feature: 'min(speed)', get: (c) => min(needArray(c, 'speed')), thresholds: [stop], holds: (v) => v < stop },
          { feature: 'max(speed)', get: (c) => max(needArray(c, 'speed')), thresholds: [go], holds: (v) => v > go },
        ],
      };
    }
    case 'peak_half_detection': {
      // "no_peak" below the prominence; else the half the peak falls in.
      const feature = p.str('feature');
      const prominence = p.num('prominence_ratio', 0.05);
      const prom = (c: ClipData) => {
        const a = needArray(c, feature);
        const m = npMean(a);
        const peak = Math.max(...a);
        return Math.abs(m) > 1e-6 ? (peak - m) / Math.abs(m) : peak;
      };
      // Which half holds the peak is an argmax: its boundary is a tie between the two halves'
      // maxima, so the distance to it is their difference relative to the peak (a U-shaped
      // profile with nearly equal ends is a near-tie, whatever index the argmax lands on).
      const halves = (c: ClipData) => {
        const a = needArray(c, feature);
        const mid = Math.floor(a.length / 2);
        if (mid === 0) return NaN;
        const m1 = Math.max(...a.slice(0, mid)), m2 = Math.max(...a.slice(mid));
        return (m1 - m2) / Math.max(Math.abs(m1), Math.abs(m2), 1e-9);
      };
      return {
        combine: 'gated',
        comparisons: [
          { feature: `${feature} peak prominence`, get: prom, thresholds: [prominence], holds: (v) => v < prominence },
          { feature: `${feature} (max 1st half − max 2nd half)/peak`, get: halves, thresholds: [0] },
        ],
      };
    }
    case 'half_comparison': {
      const feature = p.str('feature');
      const agg = aggregator(p.str('aggregation', 'rms'));
      return one({
        feature: `${feature} |1st−2nd half|/max`,
        get: (c) => {
          const a = needArray(c, feature);
          const mid = Math.floor(a.length / 2);
          const x = Math.abs(agg(a, 0, mid)), y = Math.abs(agg(a, mid, a.length));
          const m = Math.max(x, y);
          return m < 1e-9 ? 0 : Math.abs(x - y) / m;
        },
        thresholds: [p.num('similarity_threshold', 0.2)],
      });
    }
    case 'dominant_axis_comparison': {
      const agg = aggregator(p.str('aggregation', 'rms'));
      const longName = p.str('longitudinal_feature', 'accel');
      const lon = (c: ClipData) => agg((c.arrays.accel_long ?? needArray(c, longName)).map(Math.abs));
      const lat = (c: ClipData) => agg(lateral(c));
      const dzLong = p.num('deadzone_long', 0.2), dzLat = p.num('deadzone_lat', 0.2);
      // The gate ("none": both inside their dead zones) as one value: max of the two normalised
      // magnitudes against 1.
      return {
        combine: 'gated',
        comparisons: [
          { feature: 'max(rms long/dead zone, rms lat/dead zone)', get: (c) => Math.max(lon(c) / dzLong, lat(c) / dzLat), thresholds: [1], holds: (v) => v < 1 },
          {
            feature: 'lateral/longitudinal',
            get: (c) => {
              const lo = lon(c);
              return lo > 1e-9 ? lat(c) / lo : Infinity;
            },
            thresholds: [p.num('ratio_threshold', 1.0)],
          },
        ],
      };
    }
    default:
      return { combine: 'one', comparisons: [] };
  }
}

/** A near-threshold margin: the ground truth's or the estimate's value within `near` (relative) of the threshold. */
/** The default relative distance from a threshold within which a disagreement is near-threshold (`--near`). */
export const NEAR_THRESHOLD = 0.15;

export const isNearThreshold = (m: Margin, near: number): boolean => m.rel <= near || (m.estimate_rel !== null && m.estimate_rel <= near);

/** The threshold first crossed from `v` towards `toward` (else the nearest to `v`). */
function pickThreshold(v: number, toward: number | null, thresholds: number[]): number {
  const ts = thresholds.filter(Number.isFinite);
  if (ts.length === 0) return NaN;
  if (toward !== null && Number.isFinite(toward)) {
    const lo = Math.min(v, toward), hi = Math.max(v, toward);
    const crossed = ts.filter((t) => t >= lo && t <= hi).sort((a, b) => Math.abs(a - v) - Math.abs(b - v));
    if (crossed.length > 0) return crossed[0];
  }
  return ts.slice().sort((a, b) => Math.abs(a - v) - Math.abs(b - v))[0];
}

/**
 * The deciding margin of question `q` for a clip: its ground truth `gt`, optionally the estimate
 * `est` (picks the threshold between the two and reports the estimate's value).
 */
export function decisionMargin(q: Question, gt: ClipData, est?: ClipData): Margin {
  const pl = plan(q);
  if (pl.comparisons.length === 0) return { feature: q.ruleName, value: NaN, estimate: null, threshold: NaN, rel: Infinity, estimate_rel: null };
  const ms = pl.comparisons.map((c) => {
    const value = c.get(gt);
    const e = est ? c.get(est) : null;
    const threshold = pickThreshold(value, e, c.thresholds);
    return { feature: c.feature, value, estimate: e, threshold, rel: relDist(value, threshold), estimate_rel: e === null ? null : relDist(e, threshold), met: c.holds?.(value) ?? true };
  });
  const strip = ({ met: _, ...m }: (typeof ms)[number]): Margin => m;
  const byRel = (a: { rel: number }, b: { rel: number }) => a.rel - b.rel;
  if (pl.combine === 'one') return strip(ms[0]);
  if (pl.combine === 'gated') {
    const gate = pl.comparisons[0];
    const gated = gate.holds!(ms[0].value) || (ms[0].estimate !== null && gate.holds!(ms[0].estimate));
    return strip(gated ? ms[0] : ms[1]);
  }
  if (pl.combine === 'or') {
    const met = ms.filter((m) => m.met).sort(byRel);
    return strip(met.length > 0 ? met[met.length - 1] : ms.slice().sort(byRel)[0]);
  }
  // AND: "yes" (all met) flips when any fails; "no" flips only when every unmet one is met.
  const unmet = ms.filter((m) => !m.met).sort(byRel);
  if (unmet.length === 0) return strip(ms.slice().sort(byRel)[0]);
  return strip(unmet[unmet.length - 1]);
}
