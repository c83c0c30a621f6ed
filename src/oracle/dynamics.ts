/**
 * Trajectory → the benchmark's uniform dynamics arrays, step for step as the reference's
 * `DynamicsProcessor.process_ego_trajectory`: a uniform grid over the target duration, linear
 * interpolation with extrapolation (scipy `interp1d`), unwrapped yaw, central differences and
 * Savitzky–Golay smoothing after each differentiation stage.
 */
import type { Trajectory } from '../core/trajectory.js';
import { unwrap } from '../core/numeric.js';
import { smooth } from './savgol.js';

export interface DynamicsOptions {
  /** Grid rate in Hz (reference: 10). */
  hz?: number;
  /** Target duration in seconds; `null` uses the trajectory's own span (reference: 3.0 for clips). */
  duration?: number | null;
  /** Savitzky–Golay window and polynomial order (reference: 5 and 2). */
  window?: number;
  order?: number;
}

/** The arrays of one clip, as stored in the benchmark's `arrays/<clip>.npz`. */
export interface DynamicsArrays {
  /** Seconds since the clip start. */
  timestamps: Float64Array;
  x: Float64Array;
  y: Float64Array;
  /** Unwrapped yaw (rad). */
  yaw: Float64Array;
  speed: Float64Array;
  accel: Float64Array;
  yaw_rate: Float64Array;
  jerk: Float64Array;
}

export const DEFAULT_DYNAMICS: Required<DynamicsOptions> = { hz: 10, duration: 3.0, window: 5, order: 2 };

export function computeDynamics(traj: Trajectory, opts: DynamicsOptions = {}): DynamicsArrays {
  const { hz, window, order } = { ...DEFAULT_DYNAMICS, ...opts };
  const duration0 = opts.duration === undefined ? DEFAULT_DYNAMICS.duration : opts.duration;
  const t = traj.t;
  const tStart = t[0];
  const tEnd = duration0 === null ? t[t.length - 1] : tStart + duration0;
  const duration = duration0 === null ? tEnd - tStart : duration0;
  const n = Math.ceil(duration * hz) + 1;

  const grid = linspace(tStart, tEnd, n);
  const x = interpLinear(t, traj.x, grid);
  const y = interpLinear(t, traj.y, grid);
  const yaw = interpLinear(t, unwrap(traj.yaw), grid);

  const speed = smooth(centralDiff(grid, null, x, y), window, order);
  const accel = smooth(centralDiff(grid, speed), window, order);
  const yawRate = smooth(centralDiff(grid, yaw), window, order);
  const jerk = smooth(centralDiff(grid, accel), window, order);

  const rel = new Float64Array(n);
  for (let i = 0; i < n; i++) rel[i] = grid[i] - tStart;
  return { timestamps: rel, x, y, yaw, speed, accel, yaw_rate: yawRate, jerk };
}

/** `np.linspace(start, stop, n)` including its exact end point. */
function linspace(start: number, stop: number, n: number): Float64Array {
  const out = new Float64Array(n);
  const div = n - 1;
  const delta = stop - start;
  const step = delta / div;
  for (let i = 0; i < n; i++) out[i] = (step === 0 ? (i / div) * delta : i * step) + start;
  if (n > 1) out[n - 1] = stop;
  return out;
}

/** scipy `interp1d(kind='linear', fill_value='extrapolate')` on increasing `xs`. */
function interpLinear(xs: Float64Array, ys: Float64Array, q: Float64Array): Float64Array {
  const out = new Float64Array(q.length);
  const last = xs.length - 1;
  let idx = 0;
  for (let k = 0; k < q.length; k++) {
    const v = q[k];
    // searchsorted(side='left'): first index with xs[idx] >= v. Grid points are increasing.
    if (k === 0 || v < q[k - 1]) idx = 0;
    while (idx <= last && xs[idx] < v) idx++;
    const hi = idx < 1 ? 1 : idx > last ? last : idx;
    const lo = hi - 1;
    const slope = (ys[hi] - ys[lo]) / (xs[hi] - xs[lo]);
    out[k] = slope * (v - xs[lo]) + ys[lo];
  }
  return out;
}

/**
 * Central differences inside, one-sided at the ends. With `b` given, differentiates the planar
 * position (a, b) into speed, as the reference's `_compute_speed`.
 */
function centralDiff(t: Float64Array, a: Float64Array, ax?: Float64Array, ay?: Float64Array): Float64Array;
function centralDiff(t: Float64Array, a: null, ax: Float64Array, ay: Float64Array): Float64Array;
function centralDiff(t: Float64Array, a: Float64Array | null, ax?: Float64Array, ay?: Float64Array): Float64Array {
  const n = t.length;
  const out = new Float64Array(n);
  if (n < 2) return out;
  const d = (i: number, j: number): number => {
    if (a) return (a[j] - a[i]) / (t[j] - t[i]);
    const dx = ax![j] - ax![i];
    const dy = ay![j] - ay![i];
    return Math.sqrt(dx * dx + dy * dy) / (t[j] - t[i]);
  };
  for (let i = 1; i < n - 1; i++) out[i] = d(i - 1, i + 1);
  out[0] = d(0, 1);
  out[n - 1] = d(n - 2, n - 1);
  return out;
}
