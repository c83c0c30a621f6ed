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
