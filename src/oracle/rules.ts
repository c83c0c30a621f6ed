/**
 * What the rule families (`families/`, the reference's `labeling_rules.py`) are built from: the
 * param reader that validates a question's params once, the reference's aggregations and
 * operators, the lateral acceleration, the stop-and-go state machine, and the threshold scaling
 * of the sensitivity analysis.
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

/** `agg` refusing an empty range, as NumPy's reductions do. */
export function emptyGuard(agg: Aggregator, name: string): Aggregator {
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
export function comparator(op: string, where: string, allowAbs = false): (v: number, thr: number) => boolean {
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

const SLOT_RMS = 0, SLOT_LATERAL = 1;
/** The buffer slot a labeler may use for |values| (`exact`). */
export const SLOT_ABS = 2;
const exactBufs: Float64Array[] = [new Float64Array(0), new Float64Array(0), new Float64Array(0)];

/** A reused buffer of exactly `n` values for slot `k` (labelers run one at a time). */
export function exact(k: number, n: number): Float64Array {
  let b = exactBufs[k];
  if (b.length !== n) {
    b = new Float64Array(n);
    exactBufs[k] = b;
  }
  return b;
}

/**
 * Stop→go cycles of a speed series: the reference's stop-and-go state machine (a hysteresis:
 * stopped below `stopThr`, moving again above `goThr`). The oracle's rule and the published
 * baselines' pixel-motion heuristics count with it.
 */
export function stopGoCycles(s: ArrayLike<number>, stopThr: number, goThr: number): number {
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
