/**
 * Trajectory → the benchmark's uniform dynamics arrays, step for step as the reference's
 * `DynamicsProcessor.process_ego_trajectory`: a uniform grid over the target duration, linear
 * interpolation with extrapolation (scipy `interp1d`), unwrapped yaw, central differences and
 * Savitzky–Golay smoothing after each differentiation stage.
 */
import { InputError } from '../core/errors.js';
import type { Trajectory } from '../core/trajectory.js';
import { pyMod } from '../core/numeric.js';
import { smoothInto } from './savgol.js';
import { scratchPool } from '../core/scratch.js';

export interface DynamicsOptions {
  /** Grid rate in Hz (reference: 10). */
  hz?: number;
  /** Target duration in seconds; `null` uses the trajectory's own span (reference: 3.0 for clips). */
  duration?: number | null;
  /** Savitzky–Golay window and polynomial order (reference: 5 and 2). */
  window?: number;
  order?: number;
  /**
   * The smoothing kernel (correlation order) instead of the reference's: scipy computes it with
   * LAPACK, whose last bits vary between builds; tests pass a local scipy's to compare exactly.
   */
  kernel?: ArrayLike<number>;
}

/**
 * The arrays of one clip, as stored in the benchmark's `arrays/<clip>.npz`. The eight arrays are
 * views of one shared ArrayBuffer (copy one with `.slice()` before transferring it alone).
 */
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

export const DEFAULT_DYNAMICS: Required<Omit<DynamicsOptions, 'kernel'>> = { hz: 10, duration: 3.0, window: 5, order: 2 };

export function computeDynamics(traj: Trajectory, opts: DynamicsOptions = {}): DynamicsArrays {
  const hz = opts.hz ?? DEFAULT_DYNAMICS.hz;
  const window = opts.window ?? DEFAULT_DYNAMICS.window;
  const order = opts.order ?? DEFAULT_DYNAMICS.order;
  const duration0 = opts.duration === undefined ? DEFAULT_DYNAMICS.duration : opts.duration;
  const t = traj.t;
  const tStart = t[0];
  const tEnd = duration0 === null ? t[t.length - 1] : tStart + duration0;
  const duration = duration0 === null ? tEnd - tStart : duration0;
  const n = Math.ceil(duration * hz) + 1;
  // A day of samples at most: a span of 1e7 s (a bad timestamp) would otherwise allocate for hours.
  if (!(n <= 86_400 * hz + 1)) {
    throw new InputError(`trajectory '${traj.id}': ${duration0 === null ? 'its span' : 'the duration'} of ${duration} s is more than the oracle resamples (one day); check its timestamps or give --duration`);
  }

  // One backing store for the eight result arrays (small typed arrays are costly to allocate one by
  // one); intermediates live in reused scratch buffers.
  const buf = new ArrayBuffer(8 * 8 * n);
  const view = (k: number): Float64Array => new Float64Array(buf, 8 * k * n, n);
  const rel = view(0), x = view(1), y = view(2), yaw = view(3);
  const speed = view(4), accel = view(5), yawRate = view(6), jerk = view(7);

  const grid = scratch(0, n);
  linspace(tStart, tEnd, n, grid);
  const yawIn = unwrapInto(traj.yaw, scratch(1, traj.yaw.length));
  interpLinear3(t, traj.x, traj.y, yawIn, grid, n, x, y, yaw);

  const d = scratch(2, n);
  speedDiff(grid, x, y, n, d);
  smoothInto(d, n, window, order, speed, opts.kernel);
  centralDiff(grid, speed, n, d);
  smoothInto(d, n, window, order, accel, opts.kernel);
  centralDiff(grid, yaw, n, d);
  smoothInto(d, n, window, order, yawRate, opts.kernel);
  centralDiff(grid, accel, n, d);
  smoothInto(d, n, window, order, jerk, opts.kernel);

  for (let i = 0; i < n; i++) rel[i] = grid[i] - tStart;
  const arrays = { timestamps: rel, x, y, yaw, speed, accel, yaw_rate: yawRate, jerk };
  checkFinite(traj.id, arrays, n);
  return arrays;
}

/**
 * Finite input can still give non-finite dynamics: positions whose differences overflow (x = 1e300)
 * or timestamps too large for a 0.1 s grid (microseconds since 1970: grid points collapse, dt = 0).
 * Such a trajectory is refused, naming it, instead of being labelled from Infinity or NaN.
 */
function checkFinite(id: string, a: DynamicsArrays, n: number): void {
  for (const k of ['timestamps', 'x', 'y', 'yaw', 'speed', 'accel', 'yaw_rate', 'jerk'] as const) {
    const v = a[k];
    for (let i = 0; i < n; i++) {
      if (Number.isFinite(v[i])) continue;
      throw new InputError(
        `trajectory '${id || 'trajectory'}': its ${k} is ${v[i]} at sample ${i} of the 10 Hz grid; the oracle needs ` +
          'timestamps in seconds (a 0.1 s step must be representable at their magnitude) and positions in metres whose differences are finite',
      );
    }
  }
}

const scratch = scratchPool();

/** `np.linspace(start, stop, n)` including its exact end point. */
function linspace(start: number, stop: number, n: number, out: Float64Array): void {
  const div = n - 1;
  const delta = stop - start;
  const step = delta / div;
  for (let i = 0; i < n; i++) out[i] = (step === 0 ? (i / div) * delta : i * step) + start;
  if (n > 1) out[n - 1] = stop;
}

/**
 * `np.unwrap(p)` into `out` (see core/numeric `unwrap`): the correction only changes where a step
 * reaches pi, so the modulo runs only there; returns `p` itself when nothing needs correcting.
 */
function unwrapInto(p: Float64Array, out: Float64Array): Float64Array {
  const n = p.length;
  let i = 1;
  while (i < n && Math.abs(p[i] - p[i - 1]) < Math.PI) i++;
  if (i >= n) return p;
  for (let k = 0; k < i; k++) out[k] = p[k];
  let correction = 0;
  for (; i < n; i++) {
    const dd = p[i] - p[i - 1];
    if (!(Math.abs(dd) < Math.PI)) {
      let ddmod = pyMod(dd + Math.PI, 2 * Math.PI) - Math.PI;
      if (ddmod === -Math.PI && dd > 0) ddmod = Math.PI;
      correction += ddmod - dd;
    } else {
      correction += 0;
    }
    out[i] = p[i] + correction;
  }
  return out;
}

/**
 * scipy `interp1d(kind='linear', fill_value='extrapolate')` on increasing `xs`, of three series at
 * once (the same segment search, the same arithmetic per series).
 */
function interpLinear3(
  xs: Float64Array, a: Float64Array, b: Float64Array, c: Float64Array,
  q: Float64Array, nq: number, oa: Float64Array, ob: Float64Array, oc: Float64Array,
): void {
  const last = xs.length - 1;
  let idx = 0;
  for (let k = 0; k < nq; k++) {
    const v = q[k];
    // searchsorted(side='left'): first index with xs[idx] >= v. Grid points are increasing.
    if (k === 0 || v < q[k - 1]) idx = 0;
    while (idx <= last && xs[idx] < v) idx++;
    const hi = idx < 1 ? 1 : idx > last ? last : idx;
    const lo = hi - 1;
    const dx = xs[hi] - xs[lo];
    const u = v - xs[lo];
    oa[k] = ((a[hi] - a[lo]) / dx) * u + a[lo];
    ob[k] = ((b[hi] - b[lo]) / dx) * u + b[lo];
    oc[k] = ((c[hi] - c[lo]) / dx) * u + c[lo];
  }
}

/** Central differences inside, one-sided at the ends (`np.gradient`-like, as the reference). */
function centralDiff(t: Float64Array, a: Float64Array, n: number, out: Float64Array): void {
  if (n < 2) {
    if (n === 1) out[0] = 0;
    return;
  }
  for (let i = 1; i < n - 1; i++) out[i] = (a[i + 1] - a[i - 1]) / (t[i + 1] - t[i - 1]);
  out[0] = (a[1] - a[0]) / (t[1] - t[0]);
  out[n - 1] = (a[n - 1] - a[n - 2]) / (t[n - 1] - t[n - 2]);
}

/** Planar speed by the same differences (the reference's `_compute_speed`). */
function speedDiff(t: Float64Array, ax: Float64Array, ay: Float64Array, n: number, out: Float64Array): void {
  if (n < 2) {
    if (n === 1) out[0] = 0;
    return;
  }
  const d = (i: number, j: number): number => {
    const dx = ax[j] - ax[i];
    const dy = ay[j] - ay[i];
    return Math.sqrt(dx * dx + dy * dy) / (t[j] - t[i]);
  };
  for (let i = 1; i < n - 1; i++) out[i] = d(i - 1, i + 1);
  out[0] = d(0, 1);
  out[n - 1] = d(n - 2, n - 1);
}
