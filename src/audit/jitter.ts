/**
 * The high-frequency noise a ground truth carries, measured from its own poses: what
 * `egogeo audit labels` perturbs the poses with by default.
 *
 * Five consecutive poses leave one degree of freedom to a local cubic: the residual of the cubic
 * fit is the fourth divided difference, which a cubic motion zeroes exactly. Its weights scaled to
 * unit norm (`w` below, any spacing of the times) give a residual whose variance under white noise
 * of σ per pose is exactly σ², so σ is read off the residuals without a model of the motion; the
 * motion itself adds the fourth derivative times ~h⁴ (a tenth of a millimetre for a car at 10 Hz).
 * Robust throughout: a clip's σ is the median absolute residual over its x and y (and over its
 * yaw) divided by the normal's 0.6745, so a braking onset's few large residuals do not count; a
 * source's level is the median over its clips. Pure: no I/O.
 */
import { unwrap } from '../core/numeric.js';
import type { Trajectory } from '../core/trajectory.js';

/** Poses a residual spans: the fewest a cubic leaves a residual to. */
export const WINDOW = 5;
/** Median absolute value of a standard normal: median |residual| / this estimates σ. */
const MAD_NORMAL = 0.6744897501960817;

/** The unit-norm fourth divided difference over t[i..i+4] (orthogonal to every cubic in t). */
function weights(t: ArrayLike<number>, i: number): Float64Array {
  const w = new Float64Array(WINDOW);
  const h = (t[i + WINDOW - 1] - t[i]) / (WINDOW - 1); // scaled for conditioning: the norm cancels it
  for (let j = 0; j < WINDOW; j++) {
    let p = 1;
    for (let k = 0; k < WINDOW; k++) if (k !== j) p *= (t[i + j] - t[i + k]) / h;
    w[j] = 1 / p;
  }
  const norm = Math.hypot(...w);
  for (let j = 0; j < WINDOW; j++) w[j] /= norm;
  return w;
}

/**
 * The standardized residuals of `v` against a local cubic over every WINDOW consecutive samples:
 * each has variance σ² when v carries white noise of σ, whatever the spacing of t.
 */
export function cubicResiduals(t: ArrayLike<number>, v: ArrayLike<number>): Float64Array {
  const n = Math.max(0, t.length - WINDOW + 1);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const w = weights(t, i);
    let s = 0;
    for (let j = 0; j < WINDOW; j++) s += w[j] * v[i + j];
    out[i] = s;
  }
  return out;
}

const median = (v: ArrayLike<number>): number => {
  const s = Float64Array.from(v).sort();
  const k = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
};

export interface ClipJitter {
  /** σ per pose of x and of y (m), as white noise would leave these residuals. */
  posM: number;
  /** σ per pose of yaw (degrees). */
  yawDeg: number;
  /**
   * The median |residual| of x and y at a window's centre pose against its local cubic (m): the
   * plain-language figure (white noise of σ on evenly spaced poses gives 0.48σ).
   */
  centreResidualM: number;
  residuals: number;
}

/** One trajectory's jitter (see the module comment); null below WINDOW poses. */
export function clipJitter(traj: Trajectory): ClipJitter | null {
  const n = traj.t.length;
  if (n < WINDOW) return null;
  const rx = cubicResiduals(traj.t, traj.x), ry = cubicResiduals(traj.t, traj.y);
  const ryaw = cubicResiduals(traj.t, unwrap(traj.yaw));
  const pos = Float64Array.from([...rx, ...ry], Math.abs);
  // The centre pose's share of each unit residual: |w_2| (sqrt(36/70) for even spacing).
  const centre = Float64Array.from({ length: 2 * rx.length }, (_, k) => {
    const i = k % rx.length;
    return pos[k] * Math.abs(weights(traj.t, i)[2]);
  });
  return {
    posM: median(pos) / MAD_NORMAL,
    yawDeg: ((median(Float64Array.from(ryaw, Math.abs)) / MAD_NORMAL) * 180) / Math.PI,
    centreResidualM: median(centre),
    residuals: pos.length,
  };
}

export interface SourceJitter {
  n_clips: number;
  /** Median over the clips of their σ: the source's level. */
  posM: number;
  yawDeg: number;
  /** 10th and 90th percentiles over the clips (how much the clips differ). */
  posM_p10: number;
  posM_p90: number;
  yawDeg_p10: number;
  yawDeg_p90: number;
  /** Median over the clips of their median centre residual (m). */
  centreResidualM: number;
}

const quantile = (v: number[], q: number): number => {
  const s = v.slice().sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const x = q * (s.length - 1), lo = Math.floor(x);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (x - lo);
};

/** The level over several clips' jitters (the median clip; null for none). */
export function sourceJitter(clips: readonly ClipJitter[]): SourceJitter | null {
  if (clips.length === 0) return null;
  const pos = clips.map((c) => c.posM), yaw = clips.map((c) => c.yawDeg);
  return {
    n_clips: clips.length,
    posM: median(pos),
    yawDeg: median(yaw),
    posM_p10: quantile(pos, 0.1),
    posM_p90: quantile(pos, 0.9),
    yawDeg_p10: quantile(yaw, 0.1),
    yawDeg_p90: quantile(yaw, 0.9),
    centreResidualM: median(clips.map((c) => c.centreResidualM)),
  };
}
