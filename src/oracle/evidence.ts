/**
 * What each rule saw when it labelled a clip: the reference rules' evidence dicts
 * (`labeling_rules.py`, same keys in the same order), which the benchmark stores in `qa.jsonl`.
 * Computed on demand from the same clip data the labelers read; the labelers themselves stay lean
 * for throughput.
 */
import { aggregator, lateral, stopGoCycles, type ClipData } from './rules.js';
import type { Question } from './questions.js';

const num = (p: Record<string, unknown>, k: string, d?: number): number => {
  const v = p[k];
  if (typeof v === 'number') return v;
  if (d === undefined) throw new Error(`missing parameter '${k}'`);
  return d;
};
const str = (p: Record<string, unknown>, k: string, d: string): string => (typeof p[k] === 'string' ? (p[k] as string) : d);

/** A feature value the way the rule looks it up (features or arrays first). */
function lookup(c: ClipData, feature: string, agg: string, prefer: 'features' | 'arrays'): number {
  const f = c.features[feature];
  const a = c.arrays[feature];
  if (prefer === 'features' ? f !== undefined : a === undefined && f !== undefined) return f;
  if (a !== undefined) return aggregator(agg)(a);
  if (f !== undefined) return f;
  throw new Error(`feature '${feature}' not found`);
}

/** The reference rule's evidence dict for one question (null for rule families it has none for). */
export function evidenceFor(q: Question, c: ClipData): Record<string, unknown> | null {
  const p = q.params as Record<string, unknown>;
  switch (q.ruleName) {
    case 'yaw_rate_sign_with_deadzone': {
      const agg = str(p, 'aggregation', 'mean');
      return {
        [`${agg}_yaw_rate`]: aggregator(agg)(c.arrays.yaw_rate),
        threshold_positive: p.threshold_positive,
        threshold_negative: p.threshold_negative,
        positive_label: str(p, 'positive_label', 'left'),
        negative_label: str(p, 'negative_label', 'right'),
      };
    }
    case 'or_threshold_event': {
      const conditions = (p.conditions as Record<string, unknown>[]).map((k) => {
        const feature = String(k.feature);
        const agg = str(k, 'aggregation', 'max');
        const value = lookup(c, feature, agg, 'arrays');
        const thr = num(k, 'threshold');
        const met = k.operator === 'less_than' ? value < thr : value > thr;
        return { feature, [`${agg}_${feature}`]: value, threshold: k.threshold, operator: k.operator, met };
      });
      return { conditions };
    }
    case 'threshold_classification': {
      const feature = String(p.feature);
      return { [`value_${feature}`]: lookup(c, feature, str(p, 'aggregation', 'mean'), 'features'), threshold: p.threshold };
    }
    case 'trend_classification': {
      const feature = String(p.feature);
      const agg = str(p, 'aggregation', 'mean');
      return { [`${agg}_${feature}`]: lookup(c, feature, agg, 'arrays'), threshold_positive: p.threshold_positive, threshold_negative: p.threshold_negative };
    }
    case 'multi_threshold_classification': {
      const feature = String(p.feature);
      const agg = str(p, 'aggregation', 'mean');
      return { [`${agg}_${feature}`]: lookup(c, feature, agg, 'features'), thresholds: p.thresholds, labels: p.labels };
    }
    case 'dominant_axis_comparison': {
      const agg = aggregator(str(p, 'aggregation', 'rms'));
      const aggName = str(p, 'aggregation', 'rms');
      const used = c.arrays.accel_long ? 'accel_long' : str(p, 'longitudinal_feature', 'accel');
      const longArr = Float64Array.from(c.arrays[used], Math.abs);
      const longAgg = agg(longArr);
      const latAgg = agg(Float64Array.from(lateral(c)));
      return {
        [`${aggName}_longitudinal_accel`]: longAgg,
        [`${aggName}_lateral_accel`]: latAgg,
        ratio_threshold: p.ratio_threshold ?? 1.0,
        longitudinal_feature_used: used,
        deadzone_long: p.deadzone_long ?? 0.2,
        deadzone_lat: p.deadzone_lat ?? 0.2,
      };
    }
    case 'lateral_accel_threshold': {
      const aggName = str(p, 'aggregation', 'max');
      return { [`${aggName}_lateral_accel`]: aggregator(aggName)(Float64Array.from(lateral(c))), threshold: p.threshold };
    }
    case 'sequential_event': {
      const t = c.arrays.timestamps;
      const mask = (cfg: Record<string, unknown>) => {
        const a = c.arrays[String(cfg.feature)];
        const thr = num(cfg, 'threshold');
        return Array.from(a, (v) => (cfg.operator === 'less_than' ? v < thr : cfg.operator === 'greater_than' ? v > thr : Math.abs(v) > thr));
      };
      const m1 = mask(p.first_event as Record<string, unknown>);
      const m2 = mask(p.second_event as Record<string, unknown>);
      const minGap = Math.max(num(p, 'min_gap_seconds', 0), 1e-6);
      const maxGap = num(p, 'max_gap_seconds', Infinity);
      const second = m2.flatMap((m, i) => (m ? [i] : []));
      let found: [number, number] | null = null;
      for (let i = 0; i < m1.length && !found && second.length > 0; i++) {
        if (!m1[i]) continue;
        const lo = t[i] + minGap, hi = t[i] + maxGap;
        const k = second.findIndex((j) => t[j] >= lo);
        if (k >= 0 && t[second[k]] <= hi) found = [i, second[k]];
      }
      const ev: Record<string, unknown> = {
        first_event_count: m1.filter(Boolean).length,
        second_event_count: m2.filter(Boolean).length,
        sequence_found: found !== null,
      };
      if (found) {
        ev.first_event_index = found[0];
        ev.second_event_index = found[1];
        ev.first_event_time = t[found[0]];
        ev.second_event_time = t[found[1]];
        ev.gap_seconds = t[found[1]] - t[found[0]];
      }
      return ev;
    }
    case 'peak_half_detection': {
      const feature = String(p.feature);
      const arr = c.arrays[feature];
      if (arr.length === 0) return { error: 'empty_array' };
      const mid = Math.floor(arr.length / 2);
      let peak = 0;
      for (let i = 1; i < arr.length; i++) if (arr[i] > arr[peak]) peak = i;
      const mean = aggregator('mean')(arr);
      const prominence = num(p, 'prominence_ratio', 0.05);
      const prominent = Math.abs(mean) > 1e-6 ? (arr[peak] - mean) / Math.abs(mean) >= prominence : !(arr[peak] < prominence);
      const ev: Record<string, unknown> = { peak_index: peak, midpoint_index: mid, peak_value: arr[peak], mean_value: mean, is_prominent: prominent, feature_name: feature };
      if (p.min_peak_value !== undefined && p.min_peak_value !== null) ev.min_peak_value = p.min_peak_value;
      return ev;
    }
    case 'stop_and_go_detection': {
      const cycles = stopGoCycles(c.arrays.speed, num(p, 'stop_speed_threshold'), num(p, 'go_speed_threshold'));
      return { stop_go_cycles: cycles, min_stops: p.min_stops ?? 1, stop_speed_threshold: p.stop_speed_threshold, go_speed_threshold: p.go_speed_threshold };
    }
    case 'half_comparison': {
      const aggName = str(p, 'aggregation', 'rms');
      const agg = aggregator(aggName);
      const arr = c.arrays[String(p.feature)];
      const mid = Math.floor(arr.length / 2);
      return {
        [`${aggName}_first_half`]: agg(arr.slice(0, mid)),
        [`${aggName}_second_half`]: agg(arr.slice(mid)),
        similarity_threshold: p.similarity_threshold ?? 0.2,
      };
    }
    default:
      return null;
  }
}

