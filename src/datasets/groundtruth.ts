/**
 * A benchmark clip's ground truth as the oracle's arrays on its 10 Hz grid: the clip's
 * `arrays/<clip>.npz` (the benchmark's own), or — for clips whose frames are a KITTI sequence's —
 * the official poses over the clip's frames through the oracle's dynamics. Null when neither
 * exists. May import: core/, io/, oracle/, datasets/.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { type Trajectory } from '../core/trajectory.js';
import { InputError } from '../core/errors.js';
import { type NpyArray, readNpz } from '../io/npz.js';
import { readKitti } from '../io/trajectories.js';
import { computeDynamics, type DynamicsArrays } from '../oracle/dynamics.js';
import type { Clip } from '../core/clip.js';

export interface GroundTruth {
  arrays: DynamicsArrays;
  from: 'npz' | 'kitti-poses';
}

/** Whole KITTI sequences by directory (null: no poses.txt). */
export type KittiCache = Map<string, Trajectory | null>;

/** The KITTI poses under `frames` (`<seq>/image_N/NNNNNN.ext`, NNNNNN the pose row), or null. */
export function kittiTrajectory(id: string, frames: readonly string[], cache: KittiCache = new Map()): Trajectory | null {
  if (frames.length < 2 || !/^image_\d$/.test(basename(dirname(frames[0])))) return null;
  const seq = dirname(dirname(frames[0]));
  let whole = cache.get(seq);
  if (whole === undefined) {
    whole = existsSync(join(seq, 'poses.txt')) && existsSync(join(seq, 'times.txt')) ? readKitti(seq) : null;
    cache.set(seq, whole);
  }
  if (!whole) return null;
  const rows = frames.map((f) => Number.parseInt(basename(f), 10));
  if (rows.some((r) => !Number.isInteger(r) || r < 0 || r >= whole!.t.length)) return null;
  const pick = (a: Float64Array) => Float64Array.from(rows, (r) => a[r]);
  return { id, t: pick(whole.t), x: pick(whole.x), y: pick(whole.y), yaw: pick(whole.yaw) };
}

/**
 * `traj` in the frame of its first pose (origin there, heading 0), as the benchmark stores a
 * clip's arrays; the oracle's speeds, rates and labels do not change.
 */
export function relativeToFirst(traj: Trajectory): Trajectory {
  const x0 = traj.x[0], y0 = traj.y[0], a0 = traj.yaw[0];
  const c = Math.cos(a0), s = Math.sin(a0);
  const n = traj.t.length;
  const x = new Float64Array(n), y = new Float64Array(n), yaw = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const dx = traj.x[i] - x0, dy = traj.y[i] - y0;
    x[i] = c * dx + s * dy;
    y[i] = -s * dx + c * dy;
    yaw[i] = traj.yaw[i] - a0;
  }
  return { id: traj.id, t: traj.t, x, y, yaw };
}

/** Reads `arrays/<clip>.npz` into the oracle's arrays. */
export type NpzArraysReader = (path: string) => DynamicsArrays;

const VECTORS = ['timestamps', 'yaw', 'speed', 'accel', 'yaw_rate', 'jerk'] as const;

/** The npz members a clip's arrays are read from (only these are inflated: an unused one, however large, costs nothing). */
export const NPZ_ARRAYS = [...VECTORS, 'position'] as const;

/**
 * A clip's `arrays/<clip>.npz` (timestamps, position N×2, yaw, speed, accel, yaw_rate, jerk) as
 * the oracle's arrays; an InputError names the file and what is missing or malformed.
 */
export function readNpzArrays(path: string): DynamicsArrays {
  return npzArrays(readNpz(path, { keys: NPZ_ARRAYS }), path);
}

/** The oracle's arrays from an npz's decoded members (readNpzArrays; `path` names the file in errors). */
export function npzArrays(a: Record<string, NpyArray>, path: string): DynamicsArrays {
  const n = a.timestamps?.data.length ?? 0;
  for (const k of VECTORS) {
    if (!a[k]) throw new InputError(`${path}: no array '${k}'`);
    if (a[k].shape.length !== 1 || a[k].data.length !== n) throw new InputError(`${path}: '${k}' has shape (${a[k].shape.join(', ')}), expected (${n},)`);
  }
  const pos = a.position;
  if (!pos) throw new InputError(`${path}: no array 'position'`);
  if (pos.shape.length !== 2 || pos.shape[0] !== n || pos.shape[1] < 2) throw new InputError(`${path}: 'position' has shape (${pos.shape.join(', ')}), expected (${n}, 2)`);
  if (n < 2) throw new InputError(`${path}: fewer than 2 samples`);
  const w = pos.shape[1];
  return {
    timestamps: a.timestamps.data,
    x: Float64Array.from({ length: n }, (_, i) => pos.data[i * w]),
    y: Float64Array.from({ length: n }, (_, i) => pos.data[i * w + 1]),
    yaw: a.yaw.data,
    speed: a.speed.data,
    accel: a.accel.data,
    yaw_rate: a.yaw_rate.data,
    jerk: a.jerk.data,
  };
}

/**
 * The clip's ground truth (see the module comment): its npz when there is one (read by
 * `readArrays`, null to skip npz files), else the trajectory the dataset reader resolved (KITTI
 * poses) through the oracle's dynamics.
 */
export function groundTruthArrays(clip: Pick<Clip, 'arrays' | 'groundTruth'>, readArrays: NpzArraysReader | null = readNpzArrays): GroundTruth | null {
  if (clip.arrays && readArrays && existsSync(clip.arrays)) {
    return { arrays: readArrays(clip.arrays), from: 'npz' };
  }
  return clip.groundTruth ? { arrays: computeDynamics(relativeToFirst(clip.groundTruth)), from: 'kitti-poses' } : null;
}
