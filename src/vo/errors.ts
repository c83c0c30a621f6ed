/**
 * Trajectory errors of an estimate against ground truth, as evo defines them: the two are first
 * associated by timestamp as evo does (`associate`: nearest timestamp within 0.01 s), then ATE after
 * SE(3) or Sim(3) Umeyama alignment, RPE over a frame delta, and RMSE of the oracle's yaw-rate and
 * speed arrays. Planar trajectories are lifted to z = 0. `resample` (core/trajectory.ts) puts one
 * trajectory on another's timestamps where association finds no pairs.
 */
import { Matrix, SingularValueDecomposition } from 'ml-matrix';
import { InputError } from '../core/errors.js';
import type { Trajectory } from '../core/trajectory.js';

export { resample } from '../core/trajectory.js';
import { computeDynamics } from '../oracle/dynamics.js';

export interface Alignment {
  R: Matrix;
  t: number[];
  scale: number;
}

/** Umeyama (1991): the similarity (or rigid motion) that best maps `src` points onto `dst`. */
export function umeyama(src: number[][], dst: number[][], withScale: boolean): Alignment {
  const n = src.length;
  const dim = src[0].length;
  const mean = (pts: number[][]) => Array.from({ length: dim }, (_, j) => pts.reduce((s, p) => s + p[j], 0) / n);
  const ms = mean(src), md = mean(dst);
  const cov = Matrix.zeros(dim, dim);
  let varSrc = 0;
  for (let i = 0; i < n; i++) {
    for (let r = 0; r < dim; r++) {
      varSrc += (src[i][r] - ms[r]) ** 2;
      for (let c = 0; c < dim; c++) cov.set(r, c, cov.get(r, c) + (dst[i][r] - md[r]) * (src[i][c] - ms[c]));
    }
  }
  cov.div(n);
  varSrc /= n;
  const svd = new SingularValueDecomposition(cov);
  const U = svd.leftSingularVectors, V = svd.rightSingularVectors;
  const S = Matrix.eye(dim, dim);
  const det = U.mmul(V.transpose()).clone();
  if (determinant(det) < 0) S.set(dim - 1, dim - 1, -1);
  const R = U.mmul(S).mmul(V.transpose());
  const d = svd.diagonal;
  let trace = 0;
  for (let i = 0; i < dim; i++) trace += d[i] * S.get(i, i);
  const scale = withScale && varSrc > 0 ? trace / varSrc : 1;
  const Rm = R.mmul(Matrix.columnVector(ms)).to1DArray();
  const t = md.map((v, i) => v - scale * Rm[i]);
  return { R, t, scale };
}

function determinant(m: Matrix): number {
  if (m.rows === 2) return m.get(0, 0) * m.get(1, 1) - m.get(0, 1) * m.get(1, 0);
  return (
    m.get(0, 0) * (m.get(1, 1) * m.get(2, 2) - m.get(1, 2) * m.get(2, 1)) -
    m.get(0, 1) * (m.get(1, 0) * m.get(2, 2) - m.get(1, 2) * m.get(2, 0)) +
    m.get(0, 2) * (m.get(1, 0) * m.get(2, 1) - m.get(1, 1) * m.get(2, 0))
  );
}

const points = (t: Trajectory) => Array.from(t.x, (x, i) => [x, t.y[i], 0]);
const rmse = (e: number[]) => Math.sqrt(e.reduce((s, v) => s + v * v, 0) / Math.max(1, e.length));

/** Absolute trajectory error (RMSE of position, metres) after SE(3) or Sim(3) alignment. */
export function ate(est0: Trajectory, gt0: Trajectory, withScale: boolean): { rmse: number; scale: number } {
  const [est, gt] = associate(est0, gt0);
  const src = points(est), dst = points(gt);
  const a = umeyama(src, dst, withScale);
  const errs = src.map((p, i) => {
    const q = a.R.mmul(Matrix.columnVector(p)).to1DArray().map((v, j) => a.scale * v + a.t[j]);
    return Math.hypot(q[0] - dst[i][0], q[1] - dst[i][1], q[2] - dst[i][2]);
  });
  return { rmse: rmse(errs), scale: a.scale };
}

/** Relative pose error over `delta` frames: RMSE of translation (m) and of rotation (rad). */
export function rpe(est0: Trajectory, gt0: Trajectory, delta = 1): { trans: number; rot: number } {
  const [est, gt] = associate(est0, gt0);
  const te: number[] = [], re: number[] = [];
  const rel = (t: Trajectory, i: number, j: number) => {
    const dx = t.x[j] - t.x[i], dy = t.y[j] - t.y[i];
    const c = Math.cos(t.yaw[i]), s = Math.sin(t.yaw[i]);
    return { x: c * dx + s * dy, y: -s * dx + c * dy, yaw: t.yaw[j] - t.yaw[i] };
  };
  for (let i = 0; i + delta < est.t.length; i++) {
    const a = rel(est, i, i + delta), b = rel(gt, i, i + delta);
    te.push(Math.hypot(a.x - b.x, a.y - b.y));
    re.push(Math.atan2(Math.sin(a.yaw - b.yaw), Math.cos(a.yaw - b.yaw)));
  }
  return { trans: rmse(te), rot: rmse(re) };
}

/**
 * RMSE of the oracle's smoothed yaw-rate (rad/s), speed (m/s), acceleration (m/s²) and jerk (m/s³)
 * arrays on its 10 Hz grid.
 */
export function dynamicsRmse(est: Trajectory, gt: Trajectory): { yawRate: number; speed: number; accel: number; jerk: number } {
  const a = computeDynamics(est), b = computeDynamics(gt);
  const yr: number[] = [], sp: number[] = [], ac: number[] = [], jk: number[] = [];
  for (let i = 0; i < a.speed.length; i++) {
    yr.push(a.yaw_rate[i] - b.yaw_rate[i]);
    sp.push(a.speed[i] - b.speed[i]);
    ac.push(a.accel[i] - b.accel[i]);
    jk.push(a.jerk[i] - b.jerk[i]);
  }
  return { yawRate: rmse(yr), speed: rmse(sp), accel: rmse(ac), jerk: rmse(jk) };
}

const pick = (t: Trajectory, idx: readonly number[]): Trajectory => ({
  id: t.id,
  t: Float64Array.from(idx, (i) => t.t[i]),
  x: Float64Array.from(idx, (i) => t.x[i]),
  y: Float64Array.from(idx, (i) => t.y[i]),
  yaw: Float64Array.from(idx, (i) => t.yaw[i]),
});

/**
 * The poses of `est` and `ref` that share a timestamp, as evo's `associate_trajectories` pairs
 * them: each timestamp of the longer trajectory with the nearest of the other's (shifted by
 * `offset`), kept when they are at most `maxDiff` seconds apart (evo's default 0.01 s). Fewer than 2
 * pairs is one InputError saying so (resample one trajectory onto the other's timestamps).
 */
export function associate(est: Trajectory, ref: Trajectory, maxDiff = 0.01, offset = 0): [Trajectory, Trajectory] {
  const refLonger = ref.t.length > est.t.length;
  const first = refLonger ? ref.t : est.t;
  const second = Array.from(refLonger ? est.t : ref.t, (t) => t + (refLonger ? 0 : offset));
  const firstT = Array.from(first, (t) => t + (refLonger ? offset : 0));
  const ia: number[] = [], ib: number[] = [];
  let j = 0;
  for (let i = 0; i < firstT.length; i++) {
    // Both are increasing: the nearest of `second` moves forward only.
    while (j + 1 < second.length && Math.abs(second[j + 1] - firstT[i]) <= Math.abs(second[j] - firstT[i])) j++;
    if (Math.abs(second[j] - firstT[i]) <= maxDiff && (ib.length === 0 || j > ib[ib.length - 1])) {
      ia.push(i);
      ib.push(j);
    }
  }
  if (ia.length < 2) {
    throw new InputError(
      `trajectories '${est.id}' and '${ref.id}' share ${ia.length} timestamp${ia.length === 1 ? '' : 's'} within ${maxDiff} s (${est.t[0]}..${est.t[est.t.length - 1]} s against ${ref.t[0]}..${ref.t[ref.t.length - 1]} s); resample one onto the other's timestamps (resample)`,
    );
  }
  return refLonger ? [pick(est, ib), pick(ref, ia)] : [pick(est, ia), pick(ref, ib)];
}
