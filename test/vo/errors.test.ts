/**
 * Trajectory errors on trajectories that do not share their sampling: association by timestamp as
 * evo pairs them (nearest timestamp within 0.01 s), and resampling onto another's timestamps.
 */
import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { associate, ate, resample, rpe } from '../../src/vo/errors.js';

const line = (id: string, t: number[], v: number, yawRate = 0) => makeTrajectory(id, { t, x: t.map((s) => v * s), y: t.map(() => 0), yaw: t.map((s) => yawRate * s) });
const grid = (n: number, dt: number, t0 = 0) => Array.from({ length: n }, (_, i) => t0 + i * dt);

describe('associate (evo\u2019s rule)', () => {
  it('pairs each timestamp with the nearest of the other trajectory within 0.01 s, either one longer', () => {
    const gt = line('gt', grid(31, 0.1), 10);
    const est = line('est', grid(29, 0.1, 0.1).map((t, i) => t + (i % 2 ? 0.004 : -0.003)), 10);
    const [a, b] = associate(est, gt);
    expect(a.t.length).toBe(29);
    expect(Array.from(b.t)).toEqual(grid(29, 0.1, 0.1).map((t) => expect.closeTo(t, 9)));
    const [c, d] = associate(gt, est);
    expect([c.t.length, d.t.length]).toEqual([29, 29]);
    // 12 Hz camera frames against the 10 Hz ground truth: only the coinciding ones pair (0 and 0.5 s, ...).
    const cam = line('cam', grid(37, 1 / 12), 10);
    expect(associate(cam, gt)[0].t.length).toBe(7);
  });

  it('no shared timestamps is one error that says what to do', () => {
    expect(() => associate(line('e', grid(10, 0.1, 100), 1), line('g', grid(10, 0.1), 1))).toThrow(/share 0 timestamps within 0\.01 s .*resample one onto the other's timestamps/);
  });
});

describe('ate / rpe across different samplings', () => {
  it('an estimate of 29 poses against 31 of ground truth: associated, not refused', () => {
    const gt = line('gt', grid(31, 0.1), 10, 0.1);
    const est = line('est', grid(29, 0.1, 0.1), 10, 0.1);
    expect(ate(est, gt, false).rmse).toBeCloseTo(0, 9);
    expect(rpe(est, gt).trans).toBeCloseTo(0, 9);
  });

  it('resample puts a trajectory on other timestamps (positions linear, yaw the short way)', () => {
    const t = makeTrajectory('w', { t: [0, 1, 2], x: [0, 10, 20], y: [0, 0, 2], yaw: [3.1, -3.1, -3.0] });
    const r = resample(t, [0.5, 1.5]);
    expect(Array.from(r.x)).toEqual([5, 15]);
    expect(Array.from(r.y)).toEqual([0, 1]);
    expect(Math.cos(r.yaw[0])).toBeCloseTo(-1, 3); // through pi, not through 0
    expect(() => resample(t, [2.5])).toThrow(/outside trajectory 'w'/);
    const cam = line('cam', grid(37, 1 / 12), 10);
    const gt = line('gt', grid(31, 0.1), 10);
    expect(ate(resample(cam, gt.t), gt, false).rmse).toBeCloseTo(0, 9);
  });
});
