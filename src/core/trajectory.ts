/**
 * The one trajectory type every tool shares: a planar ego trajectory in the oracle's frame
 * (X forward, Y left, yaw counter-clockwise positive; metres, seconds, radians).
 * Timestamps may be irregular and yaw may be wrapped; validation happens once, here.
 */

export interface Trajectory {
  id: string;
  t: Float64Array;
  x: Float64Array;
  y: Float64Array;
  yaw: Float64Array;
}

import { InputError } from './errors.js';


/**
 * Builds a validated trajectory from loose arrays. `where` prefixes every error message
 * (e.g. "traj.jsonl:12") so the user sees which record and field is wrong.
 */
export function makeTrajectory(
  id: string,
  fields: { t: unknown; x: unknown; y: unknown; yaw: unknown },
  where = id,
  names = { t: 'timestamps', x: 'x', y: 'y', yaw: 'yaw' },
): Trajectory {
  const traj = {
    id,
    t: toFloatArray(fields.t, where, names.t),
    x: toFloatArray(fields.x, where, names.x),
    y: toFloatArray(fields.y, where, names.y),
    yaw: toFloatArray(fields.yaw, where, names.yaw),
  };
  return checkTrajectory(traj, where, names);
}

/**
 * `traj` when it is one (at least 2 samples, equal lengths, finite values, strictly increasing
 * times), else one InputError naming `where` and the field. The oracle checks every trajectory it
 * is given, so a library caller's NaN or duplicate timestamp is an error, not a label.
 */
export function checkTrajectory<T extends Trajectory>(traj: T, where = traj.id || 'trajectory', names = { t: 't', x: 'x', y: 'y', yaw: 'yaw' }): T {
  const { t } = traj;
  if (t.length < 2) throw new InputError(`${where}: field '${names.t}' needs at least 2 samples, got ${t.length}`);
  for (const [name, arr] of [[names.x, traj.x], [names.y, traj.y], [names.yaw, traj.yaw]] as const) {
    if (arr.length !== t.length) {
      throw new InputError(`${where}: field '${name}' has ${arr.length} samples but '${names.t}' has ${t.length}`);
    }
  }
  for (const [name, arr] of [[names.t, t], [names.x, traj.x], [names.y, traj.y], [names.yaw, traj.yaw]] as const) {
    for (let i = 0; i < arr.length; i++) {
      if (!Number.isFinite(arr[i])) throw new InputError(`${where}: field '${name}'[${i}] must be a finite number, got ${arr[i]}`);
    }
  }
  for (let i = 1; i < t.length; i++) {
    if (!(t[i] > t[i - 1])) {
      throw new InputError(
        `${where}: field '${names.t}' must be strictly increasing (sample ${i}: ${t[i]} after ${t[i - 1]})`,
      );
    }
  }
  return traj;
}

function toFloatArray(v: unknown, where: string, name: string): Float64Array {
  if (v === undefined || v === null) throw new InputError(`${where}: missing field '${name}'`);
  if (!Array.isArray(v) && !(v instanceof Float64Array)) {
    throw new InputError(`${where}: field '${name}' must be an array of numbers`);
  }
  const out = new Float64Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const e = v[i];
    if (typeof e !== 'number' || !Number.isFinite(e)) {
      throw new InputError(`${where}: field '${name}'[${i}] must be a finite number, got ${JSON.stringify(e)}`);
    }
    out[i] = e;
  }
  return out;
}

/** The planar distance travelled along the samples (metres). */
export function pathLength(traj: Pick<Trajectory, 'x' | 'y'>): number {
  let s = 0;
  for (let i = 1; i < traj.x.length; i++) s += Math.hypot(traj.x[i] - traj.x[i - 1], traj.y[i] - traj.y[i - 1]);
  return s;
}

/**
 * `traj` at the timestamps `t` (inside its span): positions linearly, yaw the shorter way round.
 * Here rather than beside the trajectory errors (vo/errors.ts): a clip task needs it, and the
 * errors' linear algebra (ml-matrix, 150 KB of CommonJS) cost every worker ~30 ms to load.
 */
export function resample(traj: Trajectory, t: ArrayLike<number>): Trajectory {
  const n = traj.t.length;
  const out = { id: traj.id, t: Float64Array.from(t), x: new Float64Array(t.length), y: new Float64Array(t.length), yaw: new Float64Array(t.length) };
  let k = 0;
  for (let i = 0; i < t.length; i++) {
    const ti = t[i];
    if (!(ti >= traj.t[0] - 1e-9 && ti <= traj.t[n - 1] + 1e-9)) throw new InputError(`resample: ${ti} s is outside trajectory '${traj.id}' (${traj.t[0]}..${traj.t[n - 1]} s)`);
    while (k + 2 < n && traj.t[k + 1] < ti) k++;
    const f = Math.min(1, Math.max(0, (ti - traj.t[k]) / (traj.t[k + 1] - traj.t[k])));
    out.x[i] = traj.x[k] + f * (traj.x[k + 1] - traj.x[k]);
    out.y[i] = traj.y[k] + f * (traj.y[k + 1] - traj.y[k]);
    const dyaw = Math.atan2(Math.sin(traj.yaw[k + 1] - traj.yaw[k]), Math.cos(traj.yaw[k + 1] - traj.yaw[k]));
    out.yaw[i] = traj.yaw[k] + f * dyaw;
  }
  return out;
}
