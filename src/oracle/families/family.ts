/**
 * What a rule family is: everything egogeo knows about one of the reference's rule families
 * (`labeling_rules.py`), in one place: its labeler, the evidence dict the reference stores in
 * `qa.jsonl`, the scalars it decides on (calibration) and the comparisons that measure how far a
 * clip sits from its thresholds (the report's margins). The registry (`index.ts`) requires every
 * family to give all four, so a family left out, or a facet left out of one, does not compile.
 */
import { FEATURE_NAMES } from '../features.js';
import { aggregator, type ClipData, type Labeler, type Params, type ParamReader, valueOf } from '../rules.js';

/** A scalar a question's rule decides on, e.g. `min(accel)` for braking intensity. */
export interface DecisionValue {
  name: string;
  get: (c: ClipData) => number;
}

/** One comparison a rule makes: a value, its thresholds, and (AND/OR rules) whether its condition holds. */
export interface Comparison {
  feature: string;
  get: (c: ClipData) => number;
  thresholds: number[];
  holds?: (v: number) => boolean;
}

/**
 * How the comparisons decide: one value; AND / OR of conditions; or `gated`: the first comparison
 * is a gate (peak prominence, both axes inside their dead zones) that decides while it holds for
 * either side, else the second comparison does.
 */
export type ComparisonPlan = { combine: 'one' | 'and' | 'or' | 'gated'; comparisons: Comparison[] };

export interface RuleFamily {
  /** The labeler for validated params (a fast closure: the oracle's hot path). */
  label(p: ParamReader): Labeler;
  /** The reference's evidence dict for a clip (same keys, same order); null where the reference stores none. */
  evidence(p: Params, c: ClipData): Record<string, unknown> | null;
  /** The scalars the rule decides on, read from the (possibly scaled) params. */
  decisionValues(p: ParamReader): DecisionValue[];
  /** The comparisons it makes, for the decision margin. */
  comparisons(p: ParamReader): ComparisonPlan;
}

/** The one-comparison plan. */
export const one = (c: Comparison): ComparisonPlan => ({ combine: 'one', comparisons: [c] });

/** A numeric param as the evidence dicts read it (the reference's `params.get(k, d)`). */
export const num = (p: Params, k: string, d?: number): number => {
  const v = p[k];
  if (typeof v === 'number') return v;
  if (d === undefined) throw new Error(`missing parameter '${k}'`);
  return d;
};
export const str = (p: Params, k: string, d: string): string => (typeof p[k] === 'string' ? (p[k] as string) : d);

/** A feature value the way the rule looks it up (features or arrays first), for the evidence. */
export function lookup(c: ClipData, feature: string, agg: string, prefer: 'features' | 'arrays'): number {
  const f = c.features[feature];
  const a = c.arrays[feature];
  if (prefer === 'features' ? f !== undefined : a === undefined && f !== undefined) return f;
  if (a !== undefined) return aggregator(agg)(a);
  if (f !== undefined) return f;
  throw new Error(`feature '${feature}' not found`);
}

const ARRAY_NAMES = new Set(['timestamps', 'yaw', 'speed', 'accel', 'yaw_rate', 'jerk']);
const FEATURES = new Set<string>(FEATURE_NAMES);

/** A scalar as `valueOf` reads it, named as a reader would write it (a feature, else `agg(array)`). */
export function scalar(p: ParamReader, dfltAgg: string, prefer: 'features' | 'arrays'): DecisionValue {
  const feature = p.str('feature');
  const agg = p.str('aggregation', dfltAgg);
  const asFeature = prefer === 'features' ? FEATURES.has(feature) || !ARRAY_NAMES.has(feature) : !ARRAY_NAMES.has(feature);
  return { name: asFeature ? feature : `${agg}(${feature})`, get: valueOf(feature, agg, prefer, p.where) };
}

/** `scalar` as a comparison's value. */
export const compared = (p: ParamReader, dfltAgg: string, prefer: 'features' | 'arrays'): Pick<Comparison, 'feature' | 'get'> => {
  const s = scalar(p, dfltAgg, prefer);
  return { feature: s.name, get: s.get };
};

/** The extreme an event's operator looks for. */
export function extremeFor(op: string): 'min' | 'max' | 'max_abs' {
  return op === 'less_than' ? 'min' : op === 'abs_greater_than' ? 'max_abs' : 'max';
}
