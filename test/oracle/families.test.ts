/**
 * The rule families' registry (oracle/families/): every family the reference registers is
 * defined once with its labeler, evidence, decision values and comparisons; an unknown name is one
 * error; the two families the default question file does not use give the reference's evidence.
 */
import { describe, expect, it } from 'vitest';
import { FAMILIES, FAMILY_NAMES, familyOf } from '../../src/oracle/families/index.js';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { clipData, computeDynamics, loadQuestions, summaryFeatures } from '../../src/oracle/index.js';
import { type ClipData, ParamReader } from '../../src/oracle/rules.js';

const grid = Float64Array.from({ length: 31 }, (_, i) => i / 10);
const clip: ClipData = {
  features: { mean_speed: 7.5, mean_abs_jerk: 1.4 },
  arrays: { timestamps: grid, speed: grid.map((t) => 5 + t), accel: grid.map((t) => (t < 1.5 ? -2.5 : 0.5)), yaw_rate: grid.map(() => 0.1), jerk: grid.map(() => 0), yaw: grid.map((t) => 0.1 * t) },
};

// A real clip's data (braking through a bend) for the default questions, which read every feature.
const t = Array.from({ length: 31 }, (_, i) => i / 10);
const v = (s: number) => 10 - 2 * s;
const arrays = computeDynamics(makeTrajectory('bend', { t, x: t.map((s) => 10 * s - s * s), y: t.map((s) => 0.05 * s * s * v(s)), yaw: t.map((s) => 0.1 * s) }));
const real = clipData(arrays, summaryFeatures(arrays));

describe('rule families', () => {
  it('every registered name has all four facets', () => {
    expect(Object.keys(FAMILIES).sort()).toEqual([...FAMILY_NAMES].sort());
    for (const name of FAMILY_NAMES) for (const facet of ['label', 'evidence', 'decisionValues', 'comparisons'] as const) expect(typeof FAMILIES[name][facet], `${name}.${facet}`).toBe('function');
  });

  it('an unknown rule is one error naming the known ones', () => {
    expect(() => familyOf('threshold_evnt', 'q')).toThrow(/^q: unknown rule 'threshold_evnt' \(known: yaw_rate_sign_with_deadzone, threshold_event, .*multi_threshold_classification\)$/);
  });

  it("every question of the default file gets values to calibrate and comparisons to measure (no family falls through)", () => {
    for (const q of loadQuestions().questions) {
      const p = new ParamReader(q.params, q.id);
      const f = familyOf(q.ruleName);
      expect(f.decisionValues(p).length, q.id).toBeGreaterThan(0);
      expect(f.comparisons(p).comparisons.length, q.id).toBeGreaterThan(0);
      expect(f.evidence(q.params, real), q.id).not.toBeNull();
    }
  });

  it('threshold_event and range_check: the label and the reference evidence dict', () => {
    const te = { feature: 'accel', threshold: -2, operator: 'less_than' };
    expect(FAMILIES.threshold_event.label(new ParamReader(te, 'te'))(clip)).toBe('yes');
    expect(FAMILIES.threshold_event.evidence(te, clip)).toEqual({ min_accel: -2.5, threshold: -2, operator: 'less_than' });
    const rc = { feature: 'mean_speed', min_value: 5, max_value: 7 };
    expect(FAMILIES.range_check.label(new ParamReader(rc, 'rc'))(clip)).toBe('no');
    expect(FAMILIES.range_check.evidence(rc, clip)).toEqual({ value_mean_speed: 7.5, min_value: 5, max_value: 7, in_range: false });
    expect(Object.keys(FAMILIES.range_check.evidence(rc, clip)!)).toEqual(['value_mean_speed', 'min_value', 'max_value', 'in_range']); // the reference's key order
  });
});
