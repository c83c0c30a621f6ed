/**
 * The reference's labeling rule families (`labeling_rules.py`), registered by name and instantiated
 * from the question file's params, so a new question is configuration, not code. Each factory
 * validates its params once and returns a fast labeler.
 */
import { npMean, npPercentile } from '../core/numeric.js';
import { InputError } from '../core/errors.js';

/** What a rule sees of a clip: the summary features and the uniform arrays by reference name. */
export interface ClipData {
  features: Readonly<Record<string, number>>;
  arrays: Readonly<Record<string, Float64Array>>;
}

export type Labeler = (clip: ClipData) => string;
export type Params = Record<string, unknown>;
type RuleFactory = (p: ParamReader) => Labeler;

/** Reads and type-checks params, naming the question in every error. */
export class ParamReader {
  constructor(readonly params: Params, readonly where: string) {}
  private fail(key: string, expected: string): never {
    throw new InputError(`${this.where}: rule param '${key}' must be ${expected}, got ${typeof this.params[key] === "number" ? String(this.params[key]) : JSON.stringify(this.params[key])}`);
  }
  num(key: string, dflt?: number): number {
    const v = this.params[key];
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(key, 'a finite number');
    return v;
  }
  optNum(key: string): number | null {
    const v = this.params[key];
    if (v === undefined || v === null) return null;
    return this.num(key);
  }
  str(key: string, dflt?: string): string {
    const v = this.params[key];
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v !== 'string') this.fail(key, 'a string');
    return v;
  }
  nums(key: string): number[] {
    const v = this.params[key];
    if (!Array.isArray(v) || v.some((e) => typeof e !== 'number' || !Number.isFinite(e))) this.fail(key, 'a list of finite numbers');
    return v as number[];
  }
  strs(key: string): string[] {
    const v = this.params[key];
    if (!Array.isArray(v)) this.fail(key, 'a list of labels');
    return (v as unknown[]).map(String);
  }
  sub(key: string): ParamReader {
    const v = this.params[key];
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(key, 'a mapping');
    return new ParamReader(v as Params, `${this.where}.${key}`);
  }
  list(key: string): ParamReader[] {
    const v = this.params[key];
    if (!Array.isArray(v)) this.fail(key, 'a list of mappings');
    return (v as Params[]).map((e, i) => new ParamReader(e, `${this.where}.${key}[${i}]`));
  }
}

/** `aggregate_array`: NaN-free arrays make NumPy's nan-variants equal to the plain ones. */
export type Aggregator = (a: Float64Array, start?: number, end?: number) => number;

export function aggregator(name: string, where = 'aggregation'): Aggregator {
  switch (name) {
    case 'mean':
      return (a, s = 0, e = a.length) => npMean(a, s, e);
    case 'min':
      return (a, s = 0, e = a.length) => {
        let m = Infinity;
        for (let i = s; i < e; i++) if (a[i] < m) m = a[i];
        return m;
      };
    case 'max':
      return (a, s = 0, e = a.length) => {
        let m = -Infinity;
        for (let i = s; i < e; i++) if (a[i] > m) m = a[i];
        return m;
      };
    case 'rms':
      return (a, s = 0, e = a.length) => {
        const sq = exact(SLOT_RMS, e - s);
        for (let i = s; i < e; i++) sq[i - s] = a[i] * a[i];
        return Math.sqrt(npMean(sq));
      };
    case 'abs_max':
      return (a, s = 0, e = a.length) => {
        let best = s;
        for (let i = s + 1; i < e; i++) if (Math.abs(a[i]) > Math.abs(a[best])) best = i;
        return a[best];
      };
    case 'max_abs':
      return (a, s = 0, e = a.length) => {
        let m = -Infinity;
        for (let i = s; i < e; i++) if (Math.abs(a[i]) > m) m = Math.abs(a[i]);
        return m;
      };
    default: {
      const m = /^p(\d+)$/.exec(name);
      if (m) {
        const q = Number(m[1]);
        return (a, s = 0, e = a.length) => npPercentile(a.subarray(s, e), q);
      }
      throw new InputError(`${where}: unknown aggregation '${name}' (expected mean, min, max, rms, abs_max, max_abs or pNN)`);
    }
  }
}

function emptyGuard(agg: Aggregator, name: string): Aggregator {
  return (a, s = 0, e = a.length) => {
    if (e - s <= 0) throw new Error(`cannot aggregate an empty array with '${name}'`);
    return agg(a, s, e);
  };
}

/** A scalar source: a pre-computed feature or an aggregated array, in the order the rule prefers. */
export function valueOf(feature: string, aggName: string, prefer: 'features' | 'arrays', where: string): (c: ClipData) => number {
  const agg = emptyGuard(aggregator(aggName, where), aggName);
  return (c) => {
    const f = c.features[feature];
    const arr = c.arrays[feature];
    if (prefer === 'features') {
      if (f !== undefined) return f;
      if (arr !== undefined) return agg(arr);
    } else {
      if (arr !== undefined) return agg(arr);
      if (f !== undefined) return f;
    }
    throw new Error(`feature '${feature}' not found in arrays or features`);
  };
}

export function needArray(c: ClipData, name: string): Float64Array {
  const a = c.arrays[name];
  if (!a) throw new Error(`required array '${name}' not found in clip arrays`);
  return a;
}

/** Event operators; `abs_greater_than` exists only for the sequential rule, as in the reference. */
function comparator(op: string, where: string, allowAbs = false): (v: number, thr: number) => boolean {
  if (op === 'less_than') return (v, t) => v < t;
  if (op === 'greater_than') return (v, t) => v > t;
  if (op === 'abs_greater_than' && allowAbs) return (v, t) => Math.abs(v) > t;
  throw new InputError(`${where}: unknown operator '${op}'`);
}

/**
 * The reference's lateral acceleration array: speed · |yaw rate|. Returns a reused buffer, valid
 * until the next call.
 */
export function lateral(c: ClipData): Float64Array {
  const speed = needArray(c, 'speed');
  const yr = needArray(c, 'yaw_rate');
  const out = exact(SLOT_LATERAL, speed.length);
  for (let i = 0; i < out.length; i++) out[i] = speed[i] * Math.abs(yr[i]);
  return out;
}

const SLOT_RMS = 0, SLOT_LATERAL = 1, SLOT_ABS = 2;
const exactBufs: Float64Array[] = [new Float64Array(0), new Float64Array(0), new Float64Array(0)];

/** A reused buffer of exactly `n` values for slot `k` (labelers run one at a time). */
function exact(k: number, n: number): Float64Array {
  let b = exactBufs[k];
  if (b.length !== n) {
    b = new Float64Array(n);
    exactBufs[k] = b;
  }
  return b;
}

/** Stop→go cycles of a speed series: the reference's stop-and-go state machine. */
export function stopGoCycles(s: Float64Array, stopThr: number, goThr: number): number {
  let cycles = 0;
  let stopped = s[0] < stopThr;
  for (let i = 1; i < s.length; i++) {
    if (!stopped && s[i] < stopThr) stopped = true;
    else if (stopped && s[i] > goThr) {
      cycles++;
      stopped = false;
    }
  }
  return cycles;
}

export const RULES: Record<string, RuleFactory> = {
  yaw_rate_sign_with_deadzone(p) {
    const pos = p.num('threshold_positive');
    const neg = p.num('threshold_negative');
    const agg = emptyGuard(aggregator(p.str('aggregation', 'mean'), p.where), 'aggregation');
    const posLabel = p.str('positive_label', 'left');
    const negLabel = p.str('negative_label', 'right');
    return (c) => {
      const v = agg(needArray(c, 'yaw_rate'));
      return v > pos ? posLabel : v < neg ? negLabel : 'straight';
    };
  },

  threshold_event(p) {
    const value = valueOf(p.str('feature'), p.str('aggregation', 'min'), 'arrays', p.where);
    const thr = p.num('threshold');
    const cmp = comparator(p.str('operator'), p.where);
    return (c) => (cmp(value(c), thr) ? 'yes' : 'no');
  },

  or_threshold_event(p) {
    const conds = p.list('conditions').map((q) => ({
      value: valueOf(q.str('feature'), q.str('aggregation', 'max'), 'arrays', q.where),
      thr: q.num('threshold'),
      cmp: comparator(q.str('operator'), q.where),
    }));
    const yes = p.str('above_label', 'yes');
    const no = p.str('below_label', 'no');
    return (c) => {
      let any = false;
      for (const k of conds) if (k.cmp(k.value(c), k.thr)) any = true;
      return any ? yes : no;
    };
  },

  threshold_classification(p) {
    const value = valueOf(p.str('feature'), p.str('aggregation', 'mean'), 'features', p.where);
    const thr = p.num('threshold');
    const below = p.str('below_label');
    const above = p.str('above_label');
    return (c) => (value(c) < thr ? below : above);
  },

  trend_classification(p) {
    const value = valueOf(p.str('feature'), p.str('aggregation', 'mean'), 'arrays', p.where);
    const pos = p.num('threshold_positive');
    const neg = p.num('threshold_negative');
    return (c) => {
      const v = value(c);
      return v > pos ? 'accelerating' : v < neg ? 'decelerating' : 'steady';
    };
  },

  range_check(p) {
    const value = valueOf(p.str('feature'), p.str('aggregation', 'mean'), 'features', p.where);
    const lo = p.num('min_value', -Infinity);
    const hi = p.num('max_value', Infinity);
    const inL = p.str('in_range_label', 'yes');
    const outL = p.str('out_range_label', 'no');
    return (c) => {
      const v = value(c);
      return lo <= v && v <= hi ? inL : outL;
    };
  },

  dominant_axis_comparison(p) {
    const longName = p.str('longitudinal_feature', 'accel');
    if (p.str('lateral_method', 'speed_times_yaw') !== 'speed_times_yaw') {
      throw new InputError(`${p.where}: unknown lateral_method '${p.params.lateral_method}'`);
    }
    const agg = emptyGuard(aggregator(p.str('aggregation', 'rms'), p.where), 'aggregation');
    const ratioThr = p.num('ratio_threshold', 1.0);
    const dzLong = p.num('deadzone_long', 0.2);
    const dzLat = p.num('deadzone_lat', 0.2);
    return (c) => {
      const src = c.arrays.accel_long ?? c.arrays[longName];
      if (!src) throw new Error(`required array '${longName}' (or 'accel_long') not found in clip arrays`);
      const absLong = exact(SLOT_ABS, src.length);
      for (let i = 0; i < src.length; i++) absLong[i] = Math.abs(src[i]);
      const longAgg = agg(absLong);
      const latAgg = agg(lateral(c));
      if (longAgg < dzLong && latAgg < dzLat) return 'none';
      if (longAgg < 1e-9) return 'lateral';
      return latAgg / longAgg > ratioThr ? 'lateral' : 'longitudinal';
    };
  },

  lateral_accel_threshold(p) {
    const thr = p.num('threshold');
    const agg = emptyGuard(aggregator(p.str('aggregation', 'max'), p.where), 'aggregation');
    return (c) => (agg(lateral(c)) > thr ? 'yes' : 'no');
  },

  sequential_event(p) {
    const ev = (q: ParamReader) => ({ feature: q.str('feature'), thr: q.num('threshold'), cmp: comparator(q.str('operator'), q.where, true) });
    const first = ev(p.sub('first_event'));
    const second = ev(p.sub('second_event'));
    const minGap = Math.max(p.num('min_gap_seconds', 0.0), 1e-6);
    const maxGap = p.num('max_gap_seconds', Infinity);
    return (c) => {
      const t = needArray(c, 'timestamps');
      const a1 = needArray(c, first.feature);
      const a2 = needArray(c, second.feature);
      // Second-event times ascend with the grid, so a forward scan is the reference's searchsorted.
      const secondTimes: number[] = [];
      for (let i = 0; i < a2.length; i++) if (second.cmp(a2[i], second.thr)) secondTimes.push(t[i]);
      if (secondTimes.length === 0) return 'no';
      for (let i = 0; i < a1.length; i++) {
        if (!first.cmp(a1[i], first.thr)) continue;
        const lo = t[i] + minGap;
        const hi = t[i] + maxGap;
        // searchsorted(left): earliest second event at or after lo.
        let k = 0;
        while (k < secondTimes.length && secondTimes[k] < lo) k++;
        if (k < secondTimes.length && secondTimes[k] <= hi) return 'yes';
      }
      return 'no';
    };
  },

  peak_half_detection(p) {
    const feature = p.str('feature');
    const minPeak = p.optNum('min_peak_value');
    const prominence = p.num('prominence_ratio', 0.05);
    return (c) => {
      const arr = needArray(c, feature);
      if (arr.length === 0) return 'no_peak';
      const mid = Math.floor(arr.length / 2);
      let peak = 0;
      for (let i = 1; i < arr.length; i++) if (arr[i] > arr[peak]) peak = i;
      const peakValue = arr[peak];
      const mean = npMean(arr);
      let prominent = true;
      if (Math.abs(mean) > 1e-6) {
        if ((peakValue - mean) / Math.abs(mean) < prominence) prominent = false;
      } else if (peakValue < prominence) prominent = false;
      if ((minPeak !== null && peakValue < minPeak) || !prominent) return 'no_peak';
      return peak < mid ? 'first_half' : 'second_half';
    };
  },

  stop_and_go_detection(p) {
    const stopThr = p.num('stop_speed_threshold');
    const goThr = p.num('go_speed_threshold');
    const minStops = p.num('min_stops', 1);
    return (c) => {
      return stopGoCycles(needArray(c, 'speed'), stopThr, goThr) >= minStops ? 'yes' : 'no';
    };
  },

  half_comparison(p) {
    const feature = p.str('feature');
    const agg = emptyGuard(aggregator(p.str('aggregation', 'rms'), p.where), 'aggregation');
    const simThr = p.num('similarity_threshold', 0.2);
    return (c) => {
      const arr = needArray(c, feature);
      const mid = Math.floor(arr.length / 2);
      const a = Math.abs(agg(arr, 0, mid));
      const b = Math.abs(agg(arr, mid, arr.length));
      const m = Math.max(a, b);
      if (m < 1e-9) return 'similar';
      if (Math.abs(a - b) / m < simThr) return 'similar';
      return a > b ? 'first_half' : 'second_half';
    };
  },

  multi_threshold_classification(p) {
    const thresholds = p.nums('thresholds');
    const labels = p.strs('labels');
    if (labels.length !== thresholds.length + 1) {
      throw new InputError(`${p.where}: expected ${thresholds.length + 1} labels for ${thresholds.length} thresholds, got ${labels.length}`);
    }
    const value = valueOf(p.str('feature'), p.str('aggregation', 'mean'), 'features', p.where);
    return (c) => {
      const v = value(c);
      for (let i = 0; i < thresholds.length; i++) if (v < thresholds[i]) return labels[i];
      return labels[labels.length - 1];
    };
  },
};

/** Params that are classification thresholds, scaled by `--scale α` (the reference's sensitivity set). */
const THRESHOLD_KEYS = new Set([
  'threshold', 'threshold_positive', 'threshold_negative', 'stop_speed_threshold', 'go_speed_threshold',
  'similarity_threshold', 'ratio_threshold', 'min_peak_value', 'deadzone_long', 'deadzone_lat',
]);

/** The reference's `perturb_params`: every threshold multiplied by `factor`, recursively. */
export function scaleParams(params: Params, factor: number): Params {
  const out: Params = {};
  for (const [k, v] of Object.entries(params)) {
    if (THRESHOLD_KEYS.has(k) && typeof v === 'number') out[k] = v * factor;
    else if (k === 'thresholds' && Array.isArray(v)) out[k] = v.map((e) => (e as number) * factor);
    else if (k === 'conditions' && Array.isArray(v)) out[k] = v.map((e) => scaleParams(e as Params, factor));
    else if ((k === 'first_event' || k === 'second_event') && v && typeof v === 'object') out[k] = scaleParams(v as Params, factor);
    else out[k] = structuredClone(v);
  }
  return out;
}
