/** The kinematic bicycle model and the behaviour profiles' limits. */
import { describe, expect, it } from 'vitest';
import { sampleAt, simulate, SIM_DT, type Plan } from '../../src/synth/bicycle.js';
import { PROFILES } from '../../src/synth/profiles.js';

const p = PROFILES.default;

describe('bicycle model', () => {
  it('drives a circle of the commanded curvature at constant speed', () => {
    const plan: Plan = { v0: 8, preRoll: 3, phases: [{ until: 100, accel: 0, curvature: 1 / 40 }] };
    const d = simulate(plan, p, 6);
    // after the steering has settled: yaw rate v / R, and the points lie on one circle
    const i0 = d.t.findIndex((t) => t >= 0), i1 = d.t.length - 1;
    const yawRate = (d.yaw[i1] - d.yaw[i0]) / (d.t[i1] - d.t[i0]);
    expect(yawRate).toBeCloseTo(8 / 40, 3);
    expect(d.v[i1]).toBeCloseTo(8, 9);
  });

  it('caps curvature by the profile\'s lateral acceleration', () => {
    const plan: Plan = { v0: 20, preRoll: 2, phases: [{ until: 100, curvature: 0.1 }] };
    const d = simulate(plan, PROFILES.comfort, 4);
    const n = d.t.length - 1;
    const yawRate = (d.yaw[n] - d.yaw[n - 100]) / (100 * SIM_DT);
    expect(Math.abs(yawRate * d.v[n])).toBeLessThanOrEqual(PROFILES.comfort.maxLatAccel * 1.001);
  });

  it('limits jerk, and braking eases off into a standstill without reversing', () => {
    const plan: Plan = { v0: 5, preRoll: 0, phases: [{ until: 100, accel: -4 }] };
    const d = simulate(plan, p, 4);
    // jerk within the limit everywhere but the last step into standstill (a one-sample residual)
    const jerks = Array.from({ length: d.t.length - 1 }, (_, i) => Math.abs(d.a[i + 1] - d.a[i]) / SIM_DT);
    expect(jerks.filter((j) => j > p.maxJerk * 1.001).length).toBeLessThanOrEqual(1);
    expect(Math.max(...jerks)).toBeLessThanOrEqual(2 * p.maxJerk);
    expect(Math.min(...d.a)).toBeCloseTo(-4, 9);
    expect(Math.min(...d.v)).toBe(0);
    const n = d.t.length - 1;
    expect(d.x[n]).toBeCloseTo(d.x[n - 50], 12); // stays put
  });

  it('samples poses at arbitrary frame times by interpolation', () => {
    const d = simulate({ v0: 10, preRoll: 0, phases: [{ until: 10 }] }, p, 1);
    const s = sampleAt(d, [0, 0.1234, 0.5]);
    expect(s.x[1]).toBeCloseTo(1.234, 9);
    expect(s.x[2]).toBeCloseTo(5, 9);
  });
});
