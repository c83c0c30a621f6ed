/**
 * The oracle on trajectories built here, with the expected labels derived by hand (no ../shared).
 *
 * Facts the derivations use (default dynamics: 10 Hz grid over 3.0 s = 31 samples, t_k = k/10):
 * - Linear interpolation is exact for inputs linear in t between samples, and on grid-aligned input.
 * - speed = |Δposition|/Δt with central differences inside (one-sided at both ends), then a 5-point
 *   quadratic Savitzky–Golay filter with mirror padding. Central differences are exact for quadratic
 *   x(t), and the filter reproduces quadratics exactly wherever its window avoids the ends, so
 *   indices 3..27 of `speed` equal the analytic speed for a constant-acceleration trajectory;
 *   the end samples are distorted by the one-sided differences and the padding.
 * - accel, yaw_rate and jerk are the same difference+filter stages on speed, yaw and accel.
 * - Thresholds (config/questions.yaml, as published): turn ±0.04 rad/s on abs-max yaw rate; braking
 *   min accel < -1.59 emergency, < -0.89 moderate, < -0.18 low, else none; speed regime max speed
 *   < 0.5 stopped, < 5 slow, < 13.9 urban, else highway; trend mean accel > 0.25 / < -0.25; mean
 *   speed < 5 → mean_speed_low yes; total |Δyaw| ≥ 0.2618 → heading change yes; extreme = max|jerk|
 *   > 20 or min accel < -3.924; lateral = max speed·|yaw rate| > 2.0; stop-and-go = starts (or gets)
 *   below 0.5 m/s and later exceeds 2.0 m/s.
 */
import { describe, expect, it } from 'vitest';
import { makeTrajectory, type Trajectory } from '../../src/core/trajectory.js';
import { FEATURE_NAMES, loadQuestions, runOracle, type OracleResult } from '../../src/oracle/index.js';

const Q = loadQuestions();

function traj(id: string, t: number[], x: (t: number) => number, y: (t: number) => number, yaw: (t: number) => number): Trajectory {
  return makeTrajectory(id, { t, x: t.map(x), y: t.map(y), yaw: t.map(yaw) });
}
const grid = (n: number, dt = 0.1, t0 = 0): number[] => Array.from({ length: n }, (_, i) => t0 + i * dt);
const run = (tr: Trajectory): OracleResult => runOracle(tr, Q);

/** Circle at speed v with yaw rate w (w > 0: left), starting at the origin heading yaw0. */
function circle(id: string, t: number[], v: number, w: number, yaw0 = 0): Trajectory {
  const r = v / w;
  return traj(
    id,
    t,
    (s) => r * (Math.sin(yaw0 + w * s) - Math.sin(yaw0)),
    (s) => r * (Math.cos(yaw0) - Math.cos(yaw0 + w * s)),
    (s) => yaw0 + w * s,
  );
}

/** Wraps an angle to (-π, π]. */
const wrap = (a: number): number => {
  let b = a % (2 * Math.PI);
  if (b > Math.PI) b -= 2 * Math.PI;
  if (b <= -Math.PI) b += 2 * Math.PI;
  return b;
};

describe('constant speed, straight: 10 m/s along X for 3 s', () => {
  const r = run(traj('straight10', grid(31), (s) => 10 * s, () => 0, () => 0));

  it('speed is 10 m/s within 1e-9 everywhere; accel, yaw rate and jerk vanish', () => {
    // x is linear, so every difference (central or one-sided) is 10 up to rounding; the filter
    // coefficients sum to 1, so a constant stays constant.
    for (const v of r.arrays.speed) expect(Math.abs(v - 10)).toBeLessThan(1e-9);
    for (const v of r.arrays.accel) expect(Math.abs(v)).toBeLessThan(1e-9);
    for (const v of r.arrays.jerk) expect(Math.abs(v)).toBeLessThan(1e-6);
    expect(Array.from(r.arrays.yaw_rate)).toEqual(new Array(31).fill(0));
    expect(r.features.total_heading_change).toBe(0);
    expect(Math.abs(r.features.mean_speed - 10)).toBeLessThan(1e-9);
  });

  it('labels', () => {
    expect(r.labels).toEqual({
      yaw_rate_turn_direction: 'straight', // yaw rate 0
      braking_intensity: 'none', //          min accel ≈ 0 > -0.18
      speed_regime: 'urban', //              5 ≤ 10 < 13.9
      driving_smoothness: 'smooth', //       mean |jerk| ≈ 0 < 1.25
      speed_trend: 'steady', //              mean accel ≈ 0
      mean_speed_low: 'no', //               10 ≥ 5
      significant_heading_change: 'no', //   0 rad
      extreme_maneuver: 'no', //             no jerk, no braking
      dominant_motion_axis: 'none', //       rms |accel| and rms lateral both < 0.2 deadzones
      high_lateral_accel: 'no', //           lateral 0
      brake_then_turn: 'no', //              never brakes
      speed_peak_half: 'no_peak', //         peak − mean ≈ 1e-15, far below 5 % of the mean
      stop_and_go: 'no', //                  never below 0.5 m/s
      contrastive_sequence: 'similar', //    rms accel of both halves < 1e-9
    });
  });
});

describe('constant turn: yaw rate 0.2 rad/s at 8 m/s (radius 40 m) for 3 s', () => {
  const r = run(circle('turn8', grid(31), 8, 0.2));

  it('yaw rate 0.2, speed ≈ 8 (chord/arc = sin(0.02)/0.02), heading change 0.6 rad', () => {
    // yaw is linear in t, so its differences are exact.
    for (const v of r.arrays.yaw_rate) expect(Math.abs(v - 0.2)).toBeLessThan(1e-9);
    // Central differences measure chords over 0.2 s: 8·sin(0.02)/0.02 = 7.99947; ends 8·sin(0.01)/0.01.
    for (let i = 3; i <= 27; i++) expect(r.arrays.speed[i]).toBeCloseTo((8 * Math.sin(0.02)) / 0.02, 9);
    expect(r.features.total_heading_change).toBeCloseTo(0.6, 12);
    expect(r.features.max_lateral_accel).toBeGreaterThan(1.59);
    expect(r.features.max_lateral_accel).toBeLessThan(1.61);
  });

  it('labels', () => {
    expect(r.labels).toEqual({
      yaw_rate_turn_direction: 'left', //        abs-max yaw rate +0.2 > 0.04
      braking_intensity: 'none', //              speed varies by < 1e-3 m/s: |accel| < 0.01
      speed_regime: 'urban', //                  ≈ 8 m/s
      driving_smoothness: 'smooth',
      speed_trend: 'steady',
      mean_speed_low: 'no',
      significant_heading_change: 'yes', //      0.6 rad > 0.2618
      extreme_maneuver: 'no',
      dominant_motion_axis: 'lateral', //        rms lateral ≈ 1.6 ≫ rms |accel| ≈ 0
      high_lateral_accel: 'no', //               8·0.2 = 1.6 m/s² < 2.0
      brake_then_turn: 'no', //                  never brakes
      speed_peak_half: 'no_peak', //             speed flat to 1e-4
      stop_and_go: 'no',
      contrastive_sequence: 'similar', //        accel is antisymmetric in time: equal rms halves
    });
  });

  it('at 12 m/s the lateral acceleration 12·0.2 = 2.4 m/s² is high', () => {
    const fast = run(circle('turn12', grid(31), 12, 0.2));
    expect(fast.features.max_lateral_accel).toBeGreaterThan(2.39);
    expect(fast.labels.high_lateral_accel).toBe('yes');
    expect(fast.labels.yaw_rate_turn_direction).toBe('left');
    expect(fast.labels.significant_heading_change).toBe('yes');
  });

  it('a right turn (yaw rate -0.2) mirrors it: right, negative signed yaw rate, same magnitudes', () => {
    const right = run(circle('right8', grid(31), 8, -0.2));
    expect(right.labels.yaw_rate_turn_direction).toBe('right');
    expect(right.features.signed_max_yaw_rate).toBeCloseTo(-0.2, 9);
    expect(right.features.max_abs_yaw_rate).toBeCloseTo(0.2, 9);
    expect(right.features.max_lateral_accel).toBeCloseTo(r.features.max_lateral_accel, 9);
    // everything but the direction is unchanged by the mirror
    expect({ ...right.labels, yaw_rate_turn_direction: 'left' }).toEqual(r.labels);
  });

  it('a slow drift of 0.03 rad/s is inside the ±0.04 dead zone: straight, heading change 0.09 rad: no', () => {
    const drift = run(circle('drift', grid(31), 10, 0.03));
    expect(drift.labels.yaw_rate_turn_direction).toBe('straight');
    expect(drift.labels.significant_heading_change).toBe('no');
  });
});

describe('braking ramp: -3 m/s² from 15 m/s (x = 15t - 1.5t²), straight', () => {
  const r = run(traj('brake', grid(31), (s) => 15 * s - 1.5 * s * s, () => 0, () => 0));

  it('interior speed is 15 - 3t and interior accel is -3 (exact stages away from the ends)', () => {
    for (let i = 3; i <= 27; i++) expect(Math.abs(r.arrays.speed[i] - (15 - 3 * (i / 10)))).toBeLessThan(1e-9);
    for (let i = 6; i <= 24; i++) expect(Math.abs(r.arrays.accel[i] + 3)).toBeLessThan(1e-9);
  });

  it('labels', () => {
    // max speed ≥ speed[3] = 14.1 ≥ 13.9 → highway; min accel ≤ -3 < -1.59 → emergency;
    // mean accel ≈ -3 (ends are softer) → decelerating; mean speed 10.5 → not low.
    // Edge distortion keeps min accel near -3.1 and max |jerk| near 6: far from -3.924 and 20.
    expect(r.features.max_speed).toBeGreaterThanOrEqual(14.1 - 1e-9);
    expect(r.features.min_accel).toBeLessThanOrEqual(-3 + 1e-9);
    expect(r.features.min_accel).toBeGreaterThan(-3.924);
    expect(r.features.mean_speed).toBeCloseTo(10.5, 9);
    const { driving_smoothness, ...rest } = r.labels;
    // mean |jerk| comes only from the ends (≈ 1.27, next to the 1.25 threshold): not asserted.
    expect(['smooth', 'moderate']).toContain(driving_smoothness);
    expect(rest).toEqual({
      yaw_rate_turn_direction: 'straight',
      braking_intensity: 'emergency',
      speed_regime: 'highway',
      speed_trend: 'decelerating',
      mean_speed_low: 'no',
      significant_heading_change: 'no',
      extreme_maneuver: 'no',
      dominant_motion_axis: 'longitudinal', // rms |accel| ≈ 3, no lateral
      high_lateral_accel: 'no',
      brake_then_turn: 'no', //              brakes but never turns
      speed_peak_half: 'first_half', //      peak at t = 0, (15 - 10.5)/10.5 ≫ 5 %
      stop_and_go: 'no',
      contrastive_sequence: 'similar', //    accel is symmetric in time: equal rms halves
    });
  });

  it('braking and then turning left: brake_then_turn yes', () => {
    // Same braking for 3 s while the yaw rate steps to 0.3 rad/s at t = 1.5 s (yaw is piecewise
    // linear, so the turn starts within a second of strong braking: events 0..2 s apart → yes).
    const yaw = (s: number): number => (s < 1.5 ? 0 : 0.3 * (s - 1.5));
    const t = grid(301, 0.01);
    let x = 0, y = 0;
    const xs = [0], ys = [0];
    for (let i = 1; i < t.length; i++) {
      const h = t[i] - t[i - 1];
      const tm = (t[i] + t[i - 1]) / 2;
      const v = 15 - 3 * tm;
      x += v * h * Math.cos(yaw(tm));
      y += v * h * Math.sin(yaw(tm));
      xs.push(x);
      ys.push(y);
    }
    const bt = run(makeTrajectory('brake-turn', { t, x: xs, y: ys, yaw: t.map(yaw) }));
    expect(bt.labels.brake_then_turn).toBe('yes');
    expect(bt.labels.braking_intensity).toBe('emergency');
    expect(bt.labels.yaw_rate_turn_direction).toBe('left');
  });
});

describe('stop-and-go: standing 1 s, then +2 m/s² for 2 s (x = (t-1)² after t = 1)', () => {
  const r = run(traj('stopgo', grid(31), (s) => (s < 1 ? 0 : (s - 1) ** 2), () => 0, () => 0));

  it('labels', () => {
    // speed[0] = 0 < 0.5 (stopped), speed reaches ≈ 2(t-1) → 3.9 m/s > 2.0 → one stop-go cycle.
    expect(r.arrays.speed[0]).toBe(0);
    expect(r.features.max_speed).toBeGreaterThan(3.5);
    expect(r.labels).toEqual({
      yaw_rate_turn_direction: 'straight',
      braking_intensity: 'none', //          only a filter ripple (|accel| < 0.1) at the kink
      speed_regime: 'slow', //               0.5 ≤ ≈3.9 < 5
      driving_smoothness: 'smooth',
      speed_trend: 'accelerating', //        mean accel ≈ (4 - 0)/3 ≈ 1.3 > 0.25
      mean_speed_low: 'yes', //              mean speed ≈ 4/3 < 5
      significant_heading_change: 'no',
      extreme_maneuver: 'no',
      dominant_motion_axis: 'longitudinal',
      high_lateral_accel: 'no',
      brake_then_turn: 'no',
      speed_peak_half: 'second_half', //     peak at the end
      stop_and_go: 'yes',
      contrastive_sequence: 'second_half', // rms accel: first half ≈ 1 (kink only), second ≈ 2
    });
  });

  it('going only to 1.5 m/s (below the 2.0 go threshold) is not stop-and-go', () => {
    const slow = run(traj('stop-creep', grid(31), (s) => (s < 1 ? 0 : 0.375 * (s - 1) ** 2), () => 0, () => 0));
    expect(slow.features.max_speed).toBeLessThan(2);
    expect(slow.labels.stop_and_go).toBe('no');
  });
});

describe('standing still (x = 5, y = -2, yaw = 1 throughout)', () => {
  const r = run(traj('still', grid(31), () => 5, () => -2, () => 1));

  it('all dynamics are exactly zero and every label follows', () => {
    for (const k of ['speed', 'accel', 'yaw_rate', 'jerk'] as const) expect(Array.from(r.arrays[k]).every((v) => v === 0)).toBe(true);
    for (const f of FEATURE_NAMES) expect(r.features[f]).toBe(0);
    expect(r.labels).toEqual({
      yaw_rate_turn_direction: 'straight',
      braking_intensity: 'none', //         0 ≥ -0.18
      speed_regime: 'stopped', //           0 < 0.5
      driving_smoothness: 'smooth',
      speed_trend: 'steady',
      mean_speed_low: 'yes',
      significant_heading_change: 'no',
      extreme_maneuver: 'no',
      dominant_motion_axis: 'none',
      high_lateral_accel: 'no',
      brake_then_turn: 'no',
      speed_peak_half: 'no_peak', //        |mean| ≤ 1e-6 and peak 0 < 0.05
      stop_and_go: 'no', //                 stopped but never goes
      contrastive_sequence: 'similar', //   both halves 0
    });
  });
});

describe('wrapped yaw', () => {
  it('a left turn through ±π gives the same features and labels as its unwrapped yaw', () => {
    // heading from π - 0.3 to π + 0.3: the wrapped input jumps from ≈ +π to ≈ -π at t = 1.5 s.
    const un = circle('unwrapped', grid(31), 8, 0.2, Math.PI - 0.3);
    const wr: Trajectory = { ...un, id: 'wrapped', yaw: un.yaw.map(wrap) };
    expect(wr.yaw.some((v) => v < 0)).toBe(true);
    const a = run(un), b = run(wr);
    expect(b.labels).toEqual(a.labels);
    for (const f of FEATURE_NAMES) expect(b.features[f]).toBeCloseTo(a.features[f], 9);
    expect(b.labels.yaw_rate_turn_direction).toBe('left');
    expect(b.features.total_heading_change).toBeCloseTo(0.6, 9);
    // ... and equals the same turn started at heading 0 (the oracle is rotation invariant).
    expect(b.labels).toEqual(run(circle('turn8', grid(31), 8, 0.2)).labels);
  });

  it('a right turn through ±π (yaw -π + 0.3 → π - 0.3 wrapped) is right', () => {
    const un = circle('unwrapped-r', grid(31), 8, -0.2, -Math.PI + 0.3);
    const r = run({ ...un, yaw: un.yaw.map(wrap) });
    expect(r.labels.yaw_rate_turn_direction).toBe('right');
    expect(r.features.signed_max_yaw_rate).toBeCloseTo(-0.2, 9);
  });
});

describe('irregular timestamps', () => {
  // Deterministic jitter: samples every ~0.09 s ± 0.03 s, 36 samples spanning more than 3 s.
  const jitter = (i: number): number => 0.03 * Math.sin(12.9898 * i + 78.233);
  const t = Array.from({ length: 36 }, (_, i) => 0.09 * i + (i === 0 ? 0 : jitter(i)));

  it('are strictly increasing and cover the 3 s window', () => {
    for (let i = 1; i < t.length; i++) expect(t[i]).toBeGreaterThan(t[i - 1]);
    expect(t[t.length - 1]).toBeGreaterThan(3);
  });

  it('constant speed: interpolation of a linear track is exact, so speed is 10 within 1e-9', () => {
    const r = run(traj('irregular-straight', t, (s) => 10 * s + 3, () => 1, () => 0));
    for (const v of r.arrays.speed) expect(Math.abs(v - 10)).toBeLessThan(1e-9);
    expect(r.labels).toEqual(run(traj('straight10', grid(31), (s) => 10 * s, () => 0, () => 0)).labels);
  });

  it('a turn sampled irregularly keeps its labels (left, heading change, lateral 1.6 → no)', () => {
    const r = run(circle('irregular-turn', t, 8, 0.2));
    // yaw is linear in t: interpolation exact, yaw rate exactly 0.2 ⇒ heading change 0.6
    for (const v of r.arrays.yaw_rate) expect(Math.abs(v - 0.2)).toBeLessThan(1e-9);
    expect(r.labels.yaw_rate_turn_direction).toBe('left');
    expect(r.labels.significant_heading_change).toBe('yes');
    expect(r.labels.high_lateral_accel).toBe('no');
    expect(r.labels.speed_regime).toBe('urban');
  });

  it('timestamps need not start at 0: the grid is relative to the first sample', () => {
    const late = traj('late', grid(31, 0.1, 1000.25), (s) => 10 * (s - 1000.25), () => 0, () => 0);
    const r = run(late);
    expect(r.arrays.timestamps[0]).toBe(0);
    expect(r.arrays.timestamps[30]).toBeCloseTo(3, 12);
    for (const v of r.arrays.speed) expect(Math.abs(v - 10)).toBeLessThan(1e-6);
  });
});
