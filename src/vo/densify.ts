/**
 * A trajectory estimated at sparse frames → the motion between them, sampled on the oracle's grid.
 *
 * The oracle interpolates a trajectory linearly onto its 10 Hz grid and differentiates it three
 * times. With frames 0.33 s apart (the published 10-frame protocol) straight lines between poses
 * make the speed a staircase: the acceleration becomes a train of spikes and the jerk follows,
 * whatever the poses. What the frames measure is each pair's mean velocity and yaw rate; here the
 * direction of travel and the yaw rate sit at the pairs' midpoints and vary linearly between them
 * (constant over the first and last half pair), and the distance along the path follows one of two
 * rules, chosen by how well the pairs' speeds are known:
 * - exact or nearly (ground truth, scale 'gt'): the natural cubic spline through the frames'
 *   distances, the smoothest speed that meets every pair's mean (C¹ speed: what ground-truth
 *   poses at 10 frames need to reach their sampling ceiling, 0.93 on the 14 questions against 0.90);
 * - estimated (the engine's road scale, 5-10 % relative uncertainty per pair): the pairs' mean
 *   speeds at their midpoints, linear between, which overshoot nothing a pair measured; a spline
 *   through noisy distances turns their noise into acceleration and loses on every set.
 * bench/RESULTS.md "Between sparse frames" and "The split at 10 frames" measure both.
 */
import { makeTrajectory, type Trajectory } from '../core/trajectory.js';
import { unwrap } from '../core/numeric.js';
import { naturalCubic } from '../core/spline.js';
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
 * they are sparser than the `hz` grid (`sparseFrames`), the motion between them (`fromPairRates`)
 * at the frames and the grid points between them (`times`); `speedSigma` is how unsure the pairs'
 * speeds are (relative; 0: exact), which picks the distance's rule. The engine's estimates and the
 * label audit's sampling ceiling both go through here.
 */
export function densify(traj: Trajectory, hz: number, speedSigma = 0): { trajectory: Trajectory; times: Float64Array | null } {
  if (!sparseFrames(traj.t, hz)) return { trajectory: traj, times: null };
  const times = denseTimes(traj.t, hz);
  return { trajectory: fromPairRates(traj, times, speedSigma <= SPLINE_SPEED_SIGMA ? 'spline' : 'rates'), times };
}

/**
 * The relative speed uncertainty (vo/quality.ts `speedUncertainty`: the pairs' mean posterior
 * sigma over speed) up to which the distance goes through the spline. Exact speeds gain 0.04 on the
 * 14 questions there; the engine's, at 5 % and more on every set, lose 0.005-0.01. 2 % is well
 * below what the road scale reaches and well above rounding.
 */
export const SPLINE_SPEED_SIGMA = 0.02;

/** How the distance along the path runs between frames: the pairs' mean speeds linear between midpoints, or the natural spline through the frames' distances. */
export type PathSpeed = 'rates' | 'spline';

/** A pair shorter than this (m) does not move: its direction is its neighbour's. */
const STILL = 1e-3;
/** The longest step (s) over which the direction of travel is taken as constant when integrating the path. */
const SUBSTEP = 0.005;

/**
 * `traj` (at least 2 poses) resampled at `times` (sorted, within its span) from its pairs' mean
 * rates: direction of travel and yaw rate at the pairs' midpoints, linear between them, the distance
 * along the path by `speed` (rates: the same for the pairs' speeds; spline: the natural spline
 * through the frames' distances), integrated from the first pose. Speed and direction rather than
 * the velocity vector: averaging two vectors at an angle shortens them, so a clip whose pairs'
 * directions scatter would slow down.
 */
export function fromPairRates(traj: Trajectory, times: Float64Array, speed: PathSpeed = 'rates'): Trajectory {
  const keep = spacedFrames(traj.t);
  const pick = (a: ArrayLike<number>) => Float64Array.from(keep, (i) => a[i]);
  const t = pick(traj.t), x = pick(traj.x), y = pick(traj.y);
  const n = t.length;
  const dist = new Float64Array(n); // distance along the path at each frame
  const theta: number[] = []; // each pair's chord direction
  for (let k = 0; k + 1 < n; k++) {
    const dx = x[k + 1] - x[k], dy = y[k + 1] - y[k], d = Math.hypot(dx, dy);
    dist[k + 1] = dist[k] + d;
    theta.push(d > STILL ? Math.atan2(dy, dx) : Number.NaN);
  }
  let held = theta.find((a) => !Number.isNaN(a)) ?? 0;
  for (let k = 0; k < theta.length; k++) held = theta[k] = Number.isNaN(theta[k]) ? held : theta[k];
  const direction = unwrap(theta);

  const px = new Float64Array(times.length), py = new Float64Array(times.length);
  let cx = x[0], cy = y[0];
  for (let i = 0; i < times.length; i++) {
    if (i > 0) {
      const steps = Math.max(1, Math.ceil((times[i] - times[i - 1]) / SUBSTEP));
      const edges = Float64Array.from({ length: steps + 1 }, (_, j) => times[i - 1] + ((times[i] - times[i - 1]) * j) / steps);
      const s = speed === 'rates' ? integrateRates(t, dist, edges) : naturalCubic(t, dist, edges);
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

