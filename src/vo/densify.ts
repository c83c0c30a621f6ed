/**
 * A trajectory estimated at sparse frames → the motion between them, sampled on the oracle's grid.
 *
 * The oracle interpolates a trajectory linearly onto its 10 Hz grid and differentiates it three
 * times. With frames 0.33 s apart (the published 10-frame protocol) straight lines between poses
 * make the speed a staircase: the acceleration becomes a train of spikes and the jerk follows,
 * whatever the poses. What the frames measure is each pair's mean velocity and yaw rate; here those
 * rates sit at the pairs' midpoints, vary linearly between them (constant over the first and last
 * half pair) and are integrated from the first pose: the speed is continuous, the acceleration
 * piecewise constant, and no rate overshoots what a pair measured (a spline through the poses
 * does, and the estimates' noise then reads as jerk). bench/RESULTS.md "Between sparse frames"
 * compares the candidates.
 */
import { makeTrajectory, type Trajectory } from '../core/trajectory.js';
import { unwrap } from '../core/numeric.js';
import { naturalCubic, smoothIncrements } from '../core/spline.js';
import type { SpeedProfile } from '../io/trajectories.js';
import { medianInterval } from './frames.js';

/** Grid points closer than this to a frame (s) are not added: the frame's own sample stands there. */
const MIN_GAP = 1e-3;

/**
 * True when the frames are sparser than a `hz` grid: their median interval exceeds 1.5 grid steps
 * (10 Hz frames with a camera's jitter are not; 3 Hz frames are). The oracle's linear
 * interpolation is then no longer the path between samples 0.1 s apart.
 */
export function sparseFrames(t: ArrayLike<number>, hz: number): boolean {
  return t.length > 2 && medianInterval(t) > 1.5 / hz;
}

/**
 * The frames' times and the points of a `hz` grid anchored at the first frame between them (the
 * oracle's grid when hz is its rate), in order.
 */
export function denseTimes(t: ArrayLike<number>, hz: number): Float64Array {
  const out: number[] = [];
  for (let i = 0; i < t.length; i++) {
    out.push(t[i]);
    if (i + 1 === t.length) break;
    for (let k = Math.max(1, Math.ceil((t[i] - t[0]) * hz)); ; k++) {
      const g = t[0] + k / hz;
      if (g >= t[i + 1] - MIN_GAP) break;
      if (g > t[i] + MIN_GAP) out.push(g);
    }
  }
  return Float64Array.from(out);
}

/**
 * What the oracle is given for a trajectory at frames `traj.t`: the frames themselves, or, where
 * they are sparser than the `hz` grid (`sparseFrames`), the motion between them from their pair
 * rates (`fromPairRates`) at the frames and the grid points between them (`times`). The engine's
 * estimates and the label audit's sampling ceiling both go through here.
 */
export function densify(traj: Trajectory, hz: number): { trajectory: Trajectory; times: Float64Array | null } {
  if (!sparseFrames(traj.t, hz)) return { trajectory: traj, times: null };
  const times = denseTimes(traj.t, hz);
  return { trajectory: fromPairRates(traj, times), times };
}

/** A pair shorter than this (m) does not move: its direction is its neighbour's. */
const STILL = 1e-3;
/** The longest step (s) over which the direction of travel is taken as constant when integrating the path. */
const SUBSTEP = 0.005;

/**
 * `traj` (at least 2 poses) resampled at `times` (sorted, within its span) from its pairs' mean
 * rates: speed, direction of travel and yaw rate at the pairs' midpoints, linear between them,
 * integrated from the first pose. Speed and direction rather than the velocity vector: averaging
 * two vectors at an angle shortens them, so a clip whose pairs' directions scatter would slow down.
 */
export function fromPairRates(traj: Trajectory, times: Float64Array, speed: 'rates' | { variance: ArrayLike<number> | null; accelPsd: number } = 'rates'): Trajectory {
  const keep = spacedFrames(traj.t);
  const pick = (a: ArrayLike<number>) => Float64Array.from(keep, (i) => a[i]);
  const t = pick(traj.t), x = pick(traj.x), y = pick(traj.y);
  const n = t.length;
  const dist: Float64Array = new Float64Array(n); // distance along the path at each frame
  const theta: number[] = []; // each pair's chord direction
  for (let k = 0; k + 1 < n; k++) {
    const dx = x[k + 1] - x[k], dy = y[k + 1] - y[k], d = Math.hypot(dx, dy);
    dist[k + 1] = dist[k] + d;
    theta.push(d > STILL ? Math.atan2(dy, dx) : Number.NaN);
  }
  let held = theta.find((a) => !Number.isNaN(a)) ?? 0;
  for (let k = 0; k < theta.length; k++) held = theta[k] = Number.isNaN(theta[k]) ? held : theta[k];
  const direction = unwrap(theta);
  let knots: Float64Array = dist;
  if (speed !== 'rates') {
    const steps = Float64Array.from({ length: n - 1 }, (_, k) => dist[k + 1] - dist[k]);
    const variance = new Float64Array(n - 1);
    if (speed.variance) for (let k = 0; k + 1 < n; k++) for (let j = keep[k]; j < keep[k + 1]; j++) variance[k] += speed.variance[j];
    knots = smoothIncrements(t, 0, steps, variance, 1 / speed.accelPsd);
  }

  const px = new Float64Array(times.length), py = new Float64Array(times.length);
  let cx = x[0], cy = y[0];
  for (let i = 0; i < times.length; i++) {
    if (i > 0) {
      const steps = Math.max(1, Math.ceil((times[i] - times[i - 1]) / SUBSTEP));
      const edges = Float64Array.from({ length: steps + 1 }, (_, j) => times[i - 1] + ((times[i] - times[i - 1]) * j) / steps);
      const s = speed === 'rates' ? integrateRates(t, dist, edges) : naturalCubic(t, knots, edges);
      const th = pairRateAt(t, direction, Float64Array.from({ length: steps }, (_, j) => (edges[j] + edges[j + 1]) / 2));
      for (let j = 0; j < steps; j++) {
        cx += (s[j + 1] - s[j]) * Math.cos(th[j]);
        cy += (s[j + 1] - s[j]) * Math.sin(th[j]);
      }
    }
    px[i] = cx;
    py[i] = cy;
  }
  return makeTrajectory(traj.id, { t: times, x: px, y: py, yaw: integrateRates(t, unwrap(pick(traj.yaw)), times) });
}

/**
 * The frames the rates are taken over: a frame closer than half the median interval to the last
 * one kept is skipped (the last frame is always kept, in its predecessor's place). A near-duplicate
 * timestamp (variable-rate video) would otherwise turn a centimetre of noise over a millisecond
 * into a rate held for half a pair on either side.
 */
function spacedFrames(t: ArrayLike<number>): number[] {
  const n = t.length;
  const min = 0.5 * medianInterval(t);
  const keep = [0];
  for (let i = 1; i < n; i++) {
    if (t[i] - t[keep[keep.length - 1]] >= min) keep.push(i);
    else if (i === n - 1) {
      if (keep.length > 1) keep.pop();
      keep.push(i);
    }
  }
  return keep;
}

/** The knots of a per-pair quantity: the first frame, the pairs' midpoints, the last frame; values held over the end half pairs. */
function pairKnots(t: ArrayLike<number>, perPair: ArrayLike<number>): { knots: Float64Array; values: Float64Array } {
  const m = perPair.length;
  const knots = new Float64Array(m + 2), values = new Float64Array(m + 2);
  knots[0] = t[0];
  values[0] = perPair[0];
  for (let k = 0; k < m; k++) {
    knots[k + 1] = (t[k] + t[k + 1]) / 2;
    values[k + 1] = perPair[k];
  }
  knots[m + 1] = t[m];
  values[m + 1] = perPair[m - 1];
  return { knots, values };
}

/** A per-pair quantity (one value per pair of frames t) at `at`: at the pairs' midpoints, linear between them. */
export function pairRateAt(t: ArrayLike<number>, perPair: ArrayLike<number>, at: Float64Array): Float64Array {
  const { knots, values } = pairKnots(t, perPair);
  const out = new Float64Array(at.length);
  let j = 0;
  for (let i = 0; i < at.length; i++) {
    while (j < knots.length - 2 && at[i] > knots[j + 1]) j++;
    const h = knots[j + 1] - knots[j];
    const w = h > 0 ? Math.min(1, Math.max(0, (at[i] - knots[j]) / h)) : 0;
    out[i] = values[j] + (values[j + 1] - values[j]) * w;
  }
  return out;
}

/**
 * A channel v sampled at frames t → its values at `at` (sorted): v[0] plus the integral of its
 * pairs' mean rates as `pairRateAt` places them. The rate is piecewise linear, so the integral is
 * piecewise quadratic and exact.
 */
export function integrateRates(t: ArrayLike<number>, v: ArrayLike<number>, at: Float64Array): Float64Array {
  const rates = Float64Array.from({ length: t.length - 1 }, (_, k) => (v[k + 1] - v[k]) / (t[k + 1] - t[k]));
  const { knots, values } = pairKnots(t, rates);
  const cum = new Float64Array(knots.length); // the rate's integral from t[0] to each knot
  for (let j = 1; j < knots.length; j++) cum[j] = cum[j - 1] + ((values[j - 1] + values[j]) / 2) * (knots[j] - knots[j - 1]);
  const out = new Float64Array(at.length);
  let j = 0;
  for (let i = 0; i < at.length; i++) {
    while (j < knots.length - 2 && at[i] > knots[j + 1]) j++;
    const h = knots[j + 1] - knots[j], u = at[i] - knots[j];
    const slope = h > 0 ? (values[j + 1] - values[j]) / h : 0;
    out[i] = v[0] + cum[j] + values[j] * u + (slope * u * u) / 2;
  }
  return out;
}

/** A per-frame profile at `times`: linear between the frames (the frames' own values where they stand). */
export function profileAt(t: ArrayLike<number>, sp: SpeedProfile, times: Float64Array): SpeedProfile {
  const lin = (a: ArrayLike<number>) => {
    const out = new Float64Array(times.length);
    let j = 0;
    for (let i = 0; i < times.length; i++) {
      const x = times[i];
      while (j < t.length - 2 && x > t[j + 1]) j++;
      const w = Math.min(1, Math.max(0, (x - t[j]) / (t[j + 1] - t[j])));
      out[i] = w === 0 ? a[j] : w === 1 ? a[j + 1] : a[j] * (1 - w) + a[j + 1] * w;
    }
    return out;
  };
  return { speed: lin(sp.speed), speed_sigma: lin(sp.speed_sigma), accel: lin(sp.accel), accel_sigma: lin(sp.accel_sigma) };
}

/**
 * How unsure each pair's step is: the standard deviation of its displacement (m, either axis) and
 * of its yaw change (rad), one value per pair of frames. Zero: the step is exact.
 */
export interface StepNoise {
  position: ArrayLike<number>;
  yaw: ArrayLike<number>;
}

/**
 * The smoother's prior: each channel's second derivative is white noise of this PSD (x and y in
 * m²/s³, yaw in rad²/s³), the cubic smoothing spline's Bayesian reading (core/spline.ts).
 */
export interface PathPrior {
  accelPsd: number;
  yawAccelPsd: number;
}

/**
 * `traj` at `times` (sorted, within its span) as the cubic smoothing spline of its steps: x, y and
 * unwrapped yaw each the natural cubic spline through knot values that trade the measured steps
 * (weighted by `noise`) against the prior's acceleration. Exact steps give the interpolating
 * natural spline (the smoothest path through the poses); noisy ones are not followed into
 * overshoot.
 */
export function smoothPath(traj: Trajectory, times: Float64Array, noise: StepNoise | null, prior: PathPrior): Trajectory {
  const keep = spacedFrames(traj.t);
  const t = Float64Array.from(keep, (i) => traj.t[i]);
  const yawAll = unwrap(traj.yaw);
  const channel = (v: ArrayLike<number>, sd: ArrayLike<number> | undefined, psd: number) => {
    const d = new Float64Array(keep.length - 1), variance = new Float64Array(keep.length - 1);
    for (let k = 0; k + 1 < keep.length; k++) {
      d[k] = v[keep[k + 1]] - v[keep[k]];
      // A kept pair spans the original pairs between its frames: their variances add.
      for (let j = keep[k]; sd && j < keep[k + 1]; j++) variance[k] += sd[j] * sd[j];
    }
    return naturalCubic(t, smoothIncrements(t, v[keep[0]], d, variance, 1 / psd), times);
  };
  return makeTrajectory(traj.id, {
    t: times,
    x: channel(traj.x, noise?.position, prior.accelPsd),
    y: channel(traj.y, noise?.position, prior.accelPsd),
    yaw: channel(yawAll, noise?.yaw, prior.yawAccelPsd),
  });
}

/** The engine's prior (see `PathPrior`); bench/sparse-smoother.mjs measures it. */
export const PATH_PRIOR: Readonly<PathPrior> = { accelPsd: 1, yawAccelPsd: 0.03 };

/** Yaw change noise per pair (rad) where the engine states none. */
const YAW_STEP_SD = 0.002;
/** Floor on a pair's displacement noise (m): the poses' own precision. */
const STEP_SD_FLOOR = 0.005;

/**
 * The engine's own step noise: a pair's displacement is its speed's posterior standard deviation
 * (the speed smoother's) times its interval; a pair whose speed is not known (scale 'none', no
 * metric distance) is as unsure as its own length.
 */
export function stepNoise(t: ArrayLike<number>, pairs: readonly { distance: number; speedSigma: number }[]): StepNoise {
  const position = Float64Array.from(pairs, (p, k) => {
    const sd = Number.isFinite(p.speedSigma) ? p.speedSigma * (t[k + 1] - t[k]) : p.distance;
    return Math.hypot(sd, STEP_SD_FLOOR);
  });
  return { position, yaw: new Float64Array(pairs.length).fill(YAW_STEP_SD) };
}
