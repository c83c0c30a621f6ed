/**
 * Calibration on trajectories with known feature values: constant-speed straight runs at
 * 1.25..20.25 m/s (max and mean speed = v to 1e-9, see scenarios.test.ts; the quarter keeps every
 * value off the 5 m/s and 13.9 m/s thresholds), and a set whose mean |jerk| is set by hand.
 */
import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../../src/core/trajectory.js';
import {
  applyThresholds,
  calibrate,
  distribution,
  equalFrequencyThresholds,
} from '../../src/oracle/calibrate.js';
import { clipData, labelClip, loadQuestions, runOracle, type OracleResult } from '../../src/oracle/index.js';

const Q = loadQuestions();
const grid = Array.from({ length: 31 }, (_, i) => i / 10);
const straight = (v: number): OracleResult =>
  runOracle(makeTrajectory(`v${v}`, { t: grid, x: grid.map((t) => v * t), y: grid.map(() => 0), yaw: grid.map(() => 0) }), Q);
const speeds = Array.from({ length: 20 }, (_, i) => i + 1);
const runs = speeds.map((v) => straight(v + 0.25));

describe('distribution', () => {
  it('matches NumPy (mean, population std, linear percentiles) on 1..20', () => {
    const d = distribution(speeds);
    expect(d.n).toBe(20);
    expect(d.mean).toBe(10.5);
    expect(d.std).toBeCloseTo(Math.sqrt((20 * 20 - 1) / 12), 12);
    expect([d.min, d.max]).toEqual([1, 20]);
    // np.percentile(1..20, q) = 1 + q/100·19
    expect(d.p5).toBeCloseTo(1.95, 12);
    expect(d.p25).toBeCloseTo(5.75, 12);
    expect(d.p50).toBeCloseTo(10.5, 12);
    expect(d.p75).toBeCloseTo(15.25, 12);
    expect(d.p95).toBeCloseTo(19.05, 12);
  });

  it('skips non-finite values (undefined for that trajectory)', () => {
    expect(distribution([NaN, 1, 3]).n).toBe(2);
    expect(distribution([NaN]).n).toBe(0);
    expect(distribution([]).mean).toBeNaN();
  });

  it('equal-frequency thresholds are the percentiles 100·i/k; applyThresholds takes the first threshold above', () => {
    expect(equalFrequencyThresholds([1, 2, 3, 4, 5], 2)).toEqual([3]);
    expect(equalFrequencyThresholds([10, 20, 30, 40, 50], 4)).toEqual([20, 30, 40]);
    expect(applyThresholds(1, [0.5, 5, 13.9], ['stopped', 'slow', 'urban', 'highway'])).toBe('slow');
    expect(applyThresholds(5, [0.5, 5, 13.9], ['stopped', 'slow', 'urban', 'highway'])).toBe('urban'); // v < t, strict
    expect(applyThresholds(99, [0.5, 5, 13.9], ['stopped', 'slow', 'urban', 'highway'])).toBe('highway');
  });
});

describe('calibrate on constant-speed runs at 1.25..20.25 m/s', () => {
  const report = calibrate(runs, Q.questions);
  const q = (id: string) => report.questions.find((x) => x.id === id)!;

  it('feature distributions: max speed and mean speed are 1.25..20.25', () => {
    expect(report.n).toBe(20);
    const d = report.features.max_speed;
    expect(d.mean).toBeCloseTo(10.75, 9);
    expect(d.p25).toBeCloseTo(6, 9);
    expect(report.features.mean_speed.p75).toBeCloseTo(15.5, 9);
    expect(report.features.total_heading_change.max).toBe(0);
    expect(Object.keys(report.features)).toHaveLength(12);
  });

  it('speed_regime: equal-frequency thresholds [6, 10.75, 15.5] give 25 % per class', () => {
    const m = q('speed_regime').multiThreshold!;
    expect(m.value).toBe('max_speed');
    expect(m.equalFrequency.thresholds[0]).toBeCloseTo(6, 9);
    expect(m.equalFrequency.thresholds[1]).toBeCloseTo(10.75, 9);
    expect(m.equalFrequency.thresholds[2]).toBeCloseTo(15.5, 9);
    expect(m.equalFrequency.balance).toEqual({ stopped: 0.25, slow: 0.25, urban: 0.25, highway: 0.25 });
    // published [0.5, 5, 13.9]: slow 1.25..4.25, urban 5.25..13.25, highway 14.25..20.25
    expect(m.published.thresholds).toEqual([0.5, 5.0, 13.9]);
    expect(m.published.balance).toEqual({ stopped: 0, slow: 0.2, urban: 0.45, highway: 0.35 });
    // ... which are the oracle's own labels
    expect(q('speed_regime').balance).toEqual(m.published.balance);
  });

  it('label balance of the other questions', () => {
    expect(q('mean_speed_low').balance).toEqual({ yes: 0.2, no: 0.8 }); // 1.25..4.25 m/s
    expect(q('yaw_rate_turn_direction').balance).toEqual({ left: 0, right: 0, straight: 1 });
    expect(q('stop_and_go').balance).toEqual({ yes: 0, no: 1 });
  });

  it('decision values: the scalar each rule compares with its thresholds', () => {
    const names = (id: string): string[] => q(id).values.map((v) => v.name);
    expect(names('braking_intensity')).toEqual(['min(accel)']);
    expect(names('speed_trend')).toEqual(['mean(accel)']);
    expect(names('yaw_rate_turn_direction')).toEqual(['abs_max(yaw_rate)']);
    expect(names('high_lateral_accel')).toEqual(['max(speed*|yaw_rate|)']);
    expect(names('extreme_maneuver')).toEqual(['max_abs_jerk', 'min(accel)']);
    expect(names('brake_then_turn')).toEqual(['1st: min(accel)', '2nd: max_abs(yaw_rate)']);
    expect(q('mean_speed_low').values[0].distribution.p50).toBeCloseTo(10.75, 9);
    expect(q('stop_and_go').values.find((v) => v.name === 'max(speed)')!.distribution.max).toBeCloseTo(20.25, 9);
    expect(q('yaw_rate_turn_direction').values[0].distribution.max).toBe(0);
  });
});

describe('calibrate with three classes (driving_smoothness) on hand-set mean |jerk|', () => {
  // mean |jerk| = 0.5, 1.0, ..., 4.5 (n = 9). Percentile 100/3: index 8/3 → 1.5 + (2/3)·0.5 = 1.8333;
  // percentile 200/3: index 16/3 → 3.0 + (1/3)·0.5 = 3.1667. Published [1.25, 2.15]: 2 smooth
  // (0.5, 1.0), 2 moderate (1.5, 2.0), 5 aggressive.
  const base = runs[9];
  const items: OracleResult[] = Array.from({ length: 9 }, (_, i) => {
    const features = { ...base.features, mean_abs_jerk: 0.5 * (i + 1) };
    return { arrays: base.arrays, features, labels: labelClip(clipData(base.arrays, features), Q) };
  });
  const sm = calibrate(items, [Q.byId.get('driving_smoothness')!]).questions[0];

  it('thresholds and balance', () => {
    const m = sm.multiThreshold!;
    expect(m.equalFrequency.thresholds[0]).toBeCloseTo(1.5 + 0.5 * (2 / 3), 12);
    expect(m.equalFrequency.thresholds[1]).toBeCloseTo(3 + 0.5 / 3, 12);
    for (const f of Object.values(m.equalFrequency.balance)) expect(f).toBeCloseTo(1 / 3, 12);
    expect(m.published.balance).toEqual({ smooth: 2 / 9, moderate: 2 / 9, aggressive: 5 / 9 });
    expect(sm.balance).toEqual(m.published.balance);
  });
});
