/**
 * How far a clip's deciding value sits from a question's threshold — the measure that tells a
 * near-threshold disagreement (the oracle label flips with a small threshold change, so a small
 * trajectory error flips it too) from a real estimation error. Both sides are measured: the
 * ground truth's value and the estimate's (`rel`, `estimate_rel`).
 *
 * Every rule family is described by the comparisons it makes (a value, its thresholds, whether the
 * condition holds: oracle/families/). For one comparison the relevant threshold is the first one crossed on the way
 * from the ground-truth value to the estimate's value (else the nearest), and the margin is the
 * relative distance `|value − threshold| / |threshold|`. Rules with several comparisons combine
 * them as the rule does: an OR rule that says "yes" flips only when every satisfied condition
 * fails (the largest margin among them decides); one that says "no" flips when any condition is
 * met (the smallest decides); AND rules the other way round. An argmax rule (which half holds the
 * peak) compares the two halves' maxima: its margin is their difference relative to the peak.
 * Pure: no I/O.
 */
import { type ComparisonPlan, familyOf } from '../oracle/families/index.js';
import type { Question } from '../oracle/questions.js';
import { type ClipData, ParamReader } from '../oracle/rules.js';

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

const relDist = (v: number, t: number): number => (Math.abs(t) > 1e-12 ? Math.abs(v - t) / Math.abs(t) : Math.abs(v - t));

/** The comparisons a question's rule makes (its family's `comparisons`, oracle/families/). */
function plan(q: Question): ComparisonPlan {
  return familyOf(q.ruleName, `question '${q.id}'`).comparisons(new ParamReader(q.params, `question '${q.id}'`));
}

/** The default relative distance from a threshold within which a disagreement is near-threshold (`--near`). */
export const NEAR_THRESHOLD = 0.15;

/** A near-threshold margin: the ground truth's or the estimate's value within `near` (relative) of the threshold. */
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
