/**
 * The motion between sparse frames (vo/densify.ts): analytic trajectories sampled at the published
 * 10 frames, resampled on the oracle's grid, against the same motion sampled at 10 Hz.
 */
import { describe, expect, it } from 'vitest';
import { makeTrajectory, type Trajectory } from '../../src/core/trajectory.js';
import { computeDynamics } from '../../src/oracle/dynamics.js';
import { summaryFeatures } from '../../src/oracle/features.js';
import { denseTimes, fromPairRates, integrateRates, pairRateAt, profileAt, sparseFrames } from '../../src/vo/densify.js';

/** A car braking from v0 at `decel` while turning at `yawRate`, sampled at `t`. */
function arc(t: number[], v0: number, decel: number, yawRate: number): Trajectory {
  const x: number[] = [], y: number[] = [], yaw: number[] = [];
  let px = 0, py = 0, h = 0, tp = 0;
  for (const ti of t) {
    // Fine Euler steps from the previous sample (the path, not the samples, is the truth).
    for (let s = tp; s < ti - 1e-12; ) {
      const dt = Math.min(1e-4, ti - s), v = Math.max(0, v0 - decel * (s + dt / 2));
      const hm = h + (yawRate * dt) / 2;
      px += v * dt * Math.cos(hm);
      py += v * dt * Math.sin(hm);
      h += yawRate * dt;
      s += dt;
    }
    tp = ti;
    x.push(px);
    y.push(py);
    yaw.push(h);
  }
  return makeTrajectory('arc', { t, x, y, yaw });
}

const even = (n: number, span: number) => Array.from({ length: n }, (_, i) => (span * i) / (n - 1));
const rms = (a: ArrayLike<number>, b: ArrayLike<number>) => Math.sqrt(Array.from(a, (v, i) => (v - b[i]) ** 2).reduce((s, v) => s + v, 0) / a.length);

describe('sparse frames', () => {
  it('are frames more than 1.5 grid steps apart, not 10 Hz frames with jitter', () => {
    expect(sparseFrames(even(10, 3), 10)).toBe(true);
    expect(sparseFrames(even(31, 3.1), 10)).toBe(false); // KITTI: 0.1036 s apart
    expect(sparseFrames(even(37, 3), 10)).toBe(false); // nuScenes camera, 12 Hz
    expect(sparseFrames([0, 1], 10)).toBe(false); // one pair: nothing to interpolate
  });

  it('are resampled at their own times and the grid points between them, in order', () => {
    const t = [0, 0.3331, 0.6669, 1.0];
    const times = Array.from(denseTimes(t, 10));
    for (const f of t) expect(times).toContain(f);
    for (let k = 1; k < 10; k++) if (!t.some((f) => Math.abs(f - k / 10) < 1e-3)) expect(times.some((g) => Math.abs(g - k / 10) < 1e-12)).toBe(true);
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(1e-3);
    expect(times).toHaveLength(4 + 9);
    expect(Array.from(denseTimes([0, 0.3004, 0.6], 10))).toEqual([0, 0.1, 0.2, 0.3004, 0.4, 0.5, 0.6]); // 0.3 stands within 1 ms of a frame
  });
});

describe('pair rates', () => {
  it('sit at the pairs\' midpoints, linear between them and held over the end half pairs', () => {
    const t = [0, 1, 2, 4];
    const r = pairRateAt(t, [1, 3, 2], Float64Array.from([0, 0.5, 1, 1.5, 2.25, 3, 4]));
    expect(Array.from(r)).toEqual([1, 1, 2, 3, 2.5, 2, 2]);
  });

  it('integrate to a channel that rises as its pairs do, exactly for a constant rate', () => {
    const t = [0, 0.4, 0.7, 1.3];
    const v = t.map((s) => 2 + 5 * s);
    const at = Float64Array.from([0, 0.1, 0.4, 0.55, 1.0, 1.3]);
    const out = integrateRates(t, v, at);
    at.forEach((s, i) => expect(out[i]).toBeCloseTo(2 + 5 * s, 12));
    // A channel whose rate changes: the integral is continuous and passes within the half pairs' curvature of the samples.
    const q = t.map((s) => s * s);
    const o2 = integrateRates(t, q, Float64Array.from(t));
    t.forEach((_, i) => expect(Math.abs(o2[i] - q[i])).toBeLessThan(0.1));
  });
});

describe('the motion between 10 frames', () => {
  // 3 s at the oracle's 10 Hz (the truth) and the published 10 frames of the same motion.
  const cases = [
    { name: 'braking on a bend', v0: 14, decel: 2.5, yawRate: 0.15 },
    { name: 'cruising straight', v0: 12, decel: 0, yawRate: 0 },
    { name: 'braking to a stop', v0: 6, decel: 3, yawRate: -0.1 },
  ];
  for (const c of cases) {
    it(`keeps the oracle's speed, acceleration and jerk near the truth's: ${c.name}`, () => {
      const truth = computeDynamics(arc(even(31, 3), c.v0, c.decel, c.yawRate));
      const sparse = arc(even(10, 3), c.v0, c.decel, c.yawRate);
      const linear = computeDynamics(sparse);
      const dense = computeDynamics(fromPairRates(sparse, denseTimes(sparse.t, 10)));
      // Straight lines between the frames turn the speed into a staircase and the acceleration
      // into spikes; the pair rates give the truth's acceleration away from the clip's ends (the
      // end half pairs hold their pair's rates).
      const inner = (a: Float64Array) => a.slice(5, 26);
      expect(rms(dense.speed, truth.speed)).toBeLessThanOrEqual(rms(linear.speed, truth.speed) + 1e-9);
      // (A stop is a step of the acceleration that no interpolant of 10 frames recovers: closer only.)
      const stops = c.v0 < 3 * c.decel;
      expect(rms(inner(dense.accel), inner(truth.accel))).toBeLessThan(stops ? 0.8 * rms(inner(linear.accel), inner(truth.accel)) : 0.05);
      if (c.decel > 0) expect(rms(inner(linear.accel), inner(truth.accel))).toBeGreaterThan(0.15);
      expect(rms(dense.yaw_rate, truth.yaw_rate)).toBeLessThan(0.01);
      const fd = summaryFeatures(dense), ft = summaryFeatures(truth), fl = summaryFeatures(linear);
      expect(Math.abs(fd.mean_abs_jerk - ft.mean_abs_jerk)).toBeLessThanOrEqual(0.6 * Math.abs(fl.mean_abs_jerk - ft.mean_abs_jerk) + 0.05);
      expect(Math.abs(fd.min_accel - ft.min_accel)).toBeLessThanOrEqual(Math.abs(fl.min_accel - ft.min_accel) + 1e-9);
      expect(fd.total_heading_change).toBeCloseTo(ft.total_heading_change, 2);
    });
  }

  it('a pair that does not move keeps its neighbour\'s direction: the path does not swing', () => {
    const t = even(10, 3);
    const x = [0, 3, 6, 9, 9, 9, 12, 15, 18, 21], y = x.map(() => 0), yaw = x.map(() => 0);
    const d = fromPairRates(makeTrajectory('stop', { t, x, y, yaw }), denseTimes(t, 10));
    for (const v of d.y) expect(Math.abs(v)).toBeLessThan(1e-12);
    for (let i = 1; i < d.x.length; i++) expect(d.x[i]).toBeGreaterThanOrEqual(d.x[i - 1] - 1e-12);
  });

  it('a near-duplicate frame time (variable-rate video) does not become a rate: no overshoot', () => {
    const t = [...even(10, 3)];
    t.splice(5, 0, t[4] + 0.002); // a frame 2 ms after another, its pose 3 cm off the path
    const x = t.map((s) => 10 * s), y = t.map(() => 0), yaw = t.map(() => 0);
    x[5] += 0.03;
    const d = fromPairRates(makeTrajectory('vfr', { t, x, y, yaw }), denseTimes(t, 10));
    d.t.forEach((s, i) => expect(Math.abs(d.x[i] - 10 * s), `t ${s}`).toBeLessThan(0.05));
  });

  it('carries the per-frame speed profile to the new samples, the frames\' own values unchanged', () => {
    const t = [0, 0.5, 1];
    const sp = { speed: [1, 3, 5], speed_sigma: [0.1, 0.2, Number.POSITIVE_INFINITY], accel: [4, 4, 4], accel_sigma: [1, 1, 1] };
    const p = profileAt(t, sp, Float64Array.from([0, 0.25, 0.5, 0.75, 1]));
    expect(Array.from(p.speed)).toEqual([1, 2, 3, 4, 5]);
    expect(p.speed_sigma[2]).toBe(0.2);
    expect(p.speed_sigma[4]).toBe(Number.POSITIVE_INFINITY);
  });
});
