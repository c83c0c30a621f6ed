/**
 * Trajectory errors on trajectories that do not share their sampling: association by timestamp as
 * evo pairs them (nearest timestamp within 0.01 s), and resampling onto another's timestamps.
 */
import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { associate, ate, resample, rpe, umeyama } from '../../src/vo/errors.js';

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

/** Points of `t` mapped by the similarity (rotation theta about z, scale s, translation (tx, ty)). */
function similar(t: ReturnType<typeof makeTrajectory>, theta: number, s: number, tx: number, ty: number) {
  const c = Math.cos(theta), n = Math.sin(theta);
  return makeTrajectory(`${t.id}'`, {
    t: Array.from(t.t),
    x: Array.from(t.x, (x, i) => s * (c * x - n * t.y[i]) + tx),
    y: Array.from(t.x, (x, i) => s * (n * x + c * t.y[i]) + ty),
    yaw: Array.from(t.yaw, (y) => y + theta),
  });
}

describe('umeyama, ate and rpe: exact values on constructed trajectories', () => {
  // A square's corners and its centre (the centre pins nothing: it shows points at the mean count too).
  const square = makeTrajectory('sq', { t: [0, 1, 2, 3, 4], x: [1, -1, -1, 1, 0], y: [1, 1, -1, -1, 0], yaw: [0, 0, 0, 0, 0] });

  it('umeyama recovers a known similarity: rotation, scale and translation to 1e-12', () => {
    const dst = similar(square, 0.7, 2.5, 3, -4);
    const a = umeyama(Array.from(square.x, (x, i) => [x, square.y[i], 0]), Array.from(dst.x, (x, i) => [x, dst.y[i], 0]), true);
    expect(a.scale).toBeCloseTo(2.5, 12);
    expect(a.R.get(0, 0)).toBeCloseTo(Math.cos(0.7), 12);
    expect(a.R.get(1, 0)).toBeCloseTo(Math.sin(0.7), 12);
    expect(a.R.get(2, 2)).toBeCloseTo(1, 12);
    expect(a.t).toEqual([expect.closeTo(3, 12), expect.closeTo(-4, 12), expect.closeTo(0, 12)]);
    // Without scale the rotation is the same, the scale 1.
    const r = umeyama(Array.from(square.x, (x, i) => [x, square.y[i], 0]), Array.from(dst.x, (x, i) => [x, dst.y[i], 0]), false);
    expect(r.scale).toBe(1);
    expect(r.R.get(1, 0)).toBeCloseTo(Math.sin(0.7), 12);
  });

  it('a mirrored planar path is reached by a proper rotation (det +1): ATE 0', () => {
    const mirrored = makeTrajectory('m', { t: [0, 1, 2, 3], x: [0, 1, 2, 4], y: [0, -0.5, -2, -1], yaw: [0, 0, 0, 0] });
    const orig = makeTrajectory('o', { t: [0, 1, 2, 3], x: [0, 1, 2, 4], y: [0, 0.5, 2, 1], yaw: [0, 0, 0, 0] });
    const a = umeyama(Array.from(mirrored.x, (x, i) => [x, mirrored.y[i], 0]), Array.from(orig.x, (x, i) => [x, orig.y[i], 0]), false);
    const R = a.R;
    const det =
      R.get(0, 0) * (R.get(1, 1) * R.get(2, 2) - R.get(1, 2) * R.get(2, 1)) -
      R.get(0, 1) * (R.get(1, 0) * R.get(2, 2) - R.get(1, 2) * R.get(2, 0)) +
      R.get(0, 2) * (R.get(1, 0) * R.get(2, 1) - R.get(1, 1) * R.get(2, 0));
    expect(det).toBeCloseTo(1, 12);
    expect(ate(mirrored, orig, false).rmse).toBeCloseTo(0, 12);
  });

  it('ATE: a square 10 % too large, turned and moved: SE(3) leaves 0.1·√2 at each corner (0.1·√(8/5) over 5 points), Sim(3) nothing and scale 1/1.1', () => {
    const est = similar(square, -1.2, 1.1, 7, 2);
    const rigid = ate(est, square, false);
    expect(rigid.rmse).toBeCloseTo(0.1 * Math.sqrt(8 / 5), 12); // four corners off by 0.1·√2, the centre by 0
    expect(rigid.scale).toBe(1);
    const sim = ate(est, square, true);
    expect(sim.rmse).toBeCloseTo(0, 12);
    expect(sim.scale).toBeCloseTo(1 / 1.1, 12);
  });

  it('RPE: steps 10 % long give 0.1 m per unit step (0.2 over 2), a yaw drift of 0.01 rad per step 0.01 rad, across ±π too', () => {
    const t = grid(11, 1);
    const gt = makeTrajectory('gt', { t, x: t, y: t.map(() => 0), yaw: t.map(() => 0) });
    const long = makeTrajectory('long', { t, x: t.map((s) => 1.1 * s), y: t.map(() => 0), yaw: t.map(() => 0) });
    expect(rpe(long, gt)).toEqual({ trans: expect.closeTo(0.1, 12), rot: 0 });
    expect(rpe(long, gt, 2).trans).toBeCloseTo(0.2, 12);
    const still = makeTrajectory('still', { t, x: t.map(() => 0), y: t.map(() => 0), yaw: t.map(() => 0) });
    const drift = makeTrajectory('drift', { t, x: t.map(() => 0), y: t.map(() => 0), yaw: t.map((s) => 0.01 * s) });
    expect(rpe(drift, still)).toEqual({ trans: 0, rot: expect.closeTo(0.01, 12) });
    // Yaw stored wrapped: 3.14 → −3.13 is a step of 0.0132 rad, not 6.27.
    const wrapped = makeTrajectory('w', { t: [0, 1], x: [0, 0], y: [0, 0], yaw: [3.14, -3.13] });
    const calm = makeTrajectory('c', { t: [0, 1], x: [0, 0], y: [0, 0], yaw: [0, 0] });
    expect(rpe(wrapped, calm).rot).toBeCloseTo(2 * Math.PI - 6.27, 9);
  });
});
