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
  const t = toFloatArray(fields.t, where, names.t);
  const x = toFloatArray(fields.x, where, names.x);
  const y = toFloatArray(fields.y, where, names.y);
  const yaw = toFloatArray(fields.yaw, where, names.yaw);
  if (t.length < 2) throw new InputError(`${where}: field '${names.t}' needs at least 2 samples, got ${t.length}`);
  for (const [name, arr] of [[names.x, x], [names.y, y], [names.yaw, yaw]] as const) {
    if (arr.length !== t.length) {
      throw new InputError(`${where}: field '${name}' has ${arr.length} samples but '${names.t}' has ${t.length}`);
    }
  }
  for (let i = 1; i < t.length; i++) {
    if (!(t[i] > t[i - 1])) {
      throw new InputError(
        `${where}: field '${names.t}' must be strictly increasing (sample ${i}: ${t[i]} after ${t[i - 1]})`,
      );
    }
  }
  return { id, t, x, y, yaw };
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
