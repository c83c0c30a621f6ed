/**
 * The rule families, by the name the question file gives (`rule.name`): every family the
 * reference's `labeling_rules.py` registers, each defined once in its own module (family.ts says
 * what a definition holds). `FAMILIES` is typed over `FAMILY_NAMES`, so a name without a
 * definition, or a definition without one of its facets, fails to compile.
 */
import { InputError } from '../../core/errors.js';
import { dominantAxisComparison } from './dominant_axis.js';
import type { RuleFamily } from './family.js';
import { halfComparison } from './half_comparison.js';
import { lateralAccelThreshold } from './lateral_accel.js';
import { multiThresholdClassification } from './multi_threshold.js';
import { orThresholdEvent } from './or_threshold_event.js';
import { peakHalfDetection } from './peak_half.js';
import { rangeCheck } from './range_check.js';
import { sequentialEvent } from './sequential_event.js';
import { stopAndGoDetection } from './stop_and_go.js';
import { thresholdClassification } from './threshold_classification.js';
import { thresholdEvent } from './threshold_event.js';
import { trendClassification } from './trend_classification.js';
import { yawRateSignWithDeadzone } from './yaw_rate_sign.js';

export type { Comparison, ComparisonPlan, DecisionValue, RuleFamily } from './family.js';

export const FAMILY_NAMES = [
  'yaw_rate_sign_with_deadzone',
  'threshold_event',
  'or_threshold_event',
  'threshold_classification',
  'trend_classification',
  'range_check',
  'dominant_axis_comparison',
  'lateral_accel_threshold',
  'sequential_event',
  'peak_half_detection',
  'stop_and_go_detection',
  'half_comparison',
  'multi_threshold_classification',
] as const;
export type FamilyName = (typeof FAMILY_NAMES)[number];

export const FAMILIES: { readonly [K in FamilyName]: RuleFamily } = {
  yaw_rate_sign_with_deadzone: yawRateSignWithDeadzone,
  threshold_event: thresholdEvent,
  or_threshold_event: orThresholdEvent,
  threshold_classification: thresholdClassification,
  trend_classification: trendClassification,
  range_check: rangeCheck,
  dominant_axis_comparison: dominantAxisComparison,
  lateral_accel_threshold: lateralAccelThreshold,
  sequential_event: sequentialEvent,
  peak_half_detection: peakHalfDetection,
  stop_and_go_detection: stopAndGoDetection,
  half_comparison: halfComparison,
  multi_threshold_classification: multiThresholdClassification,
};

export const isFamilyName = (name: string): name is FamilyName => (FAMILY_NAMES as readonly string[]).includes(name);

/** The family a question's rule names; an unknown name is one error listing the known ones. */
export function familyOf(name: string, where = 'rule'): RuleFamily {
  if (!isFamilyName(name)) throw new InputError(`${where}: unknown rule '${name}' (known: ${FAMILY_NAMES.join(', ')})`);
  return FAMILIES[name];
}
