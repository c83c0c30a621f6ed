/**
 * KITTI odometry sequences (image_0/, poses.txt, times.txt, calib.txt) and the benchmark's clip
 * windows over them: 31 consecutive frames (≈3.0 s) every 5 frames, id `kitti{SEQ}_{START:06d}`.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Clip, Intrinsics } from '../core/clip.js';
import { InputError } from '../core/errors.js';
import type { Trajectory } from '../core/trajectory.js';
import { KITTI_WINDOW, readKitti, windows } from '../io/trajectories.js';

/** KITTI's camera height above the road (metres). */
export const KITTI_CAMERA_HEIGHT = 1.65;

export interface KittiSequence {
  dir: string;
  seq: string;
  frames: string[];
  timestamps: Float64Array;
  intrinsics: Intrinsics;
  /** Ground truth when poses.txt is present (test sequences have none). */
  groundTruth?: Trajectory;
}

export function readKittiSequence(dir: string): KittiSequence {
  const root = resolve(dir);
  if (!existsSync(root)) throw new InputError(`${dir}: no such KITTI sequence directory`);
  const seq = basename(root);
  const imgDir = join(root, 'image_0');
  if (!existsSync(imgDir)) throw new InputError(`${dir}: missing image_0/ (left greyscale camera frames)`);
  const frames = readdirSync(imgDir)
    .filter((f) => /^\d+\.(png|jpg|jpeg)$/i.test(f))
    .sort()
    .map((f) => join(imgDir, f));
  const timesPath = join(root, 'times.txt');
  if (!existsSync(timesPath)) throw new InputError(`${dir}: missing times.txt`);
  const times = readFileSync(timesPath, 'utf8').trim().split(/\r?\n/).map(Number);
  if (times.some((t) => !Number.isFinite(t))) throw new InputError(`${timesPath}: every line must be one timestamp`);
  if (times.length !== frames.length) {
    throw new InputError(`${dir}: image_0/ has ${frames.length} frames but times.txt has ${times.length} timestamps`);
  }
  const intrinsics = readCalib(join(root, 'calib.txt'));
  const groundTruth = existsSync(join(root, 'poses.txt')) ? readKitti(root) : undefined;
  if (groundTruth && groundTruth.t.length !== frames.length) {
    throw new InputError(`${dir}: poses.txt has ${groundTruth.t.length} poses for ${frames.length} frames`);
  }
  return { dir: root, seq, frames, timestamps: Float64Array.from(times), intrinsics, groundTruth };
}

/** The P0 row of calib.txt → pinhole intrinsics. */
export function readCalib(path: string): Intrinsics {
  if (!existsSync(path)) throw new InputError(`${path}: missing (the P0 projection matrix gives the intrinsics)`);
  const line = readFileSync(path, 'utf8').split(/\r?\n/).find((l) => l.startsWith('P0:'));
  const v = line?.slice(3).trim().split(/\s+/).map(Number);
  if (!v || v.length !== 12 || v.some((e) => !Number.isFinite(e))) {
    throw new InputError(`${path}: expected a line 'P0:' with 12 numbers`);
  }
  return { fx: v[0], fy: v[5], cx: v[2], cy: v[6] };
}

/** The sequence's benchmark windows as clips, in order (ground truth attached when known; no QA items: labels come from the poses). */
export function kittiClips(s: KittiSequence, length: number = KITTI_WINDOW.length, stride: number = KITTI_WINDOW.stride): Clip[] {
  const gts = s.groundTruth ? windows(s.groundTruth, length, stride) : [];
  const clips: Clip[] = [];
  for (let start = 0, w = 0; start + length <= s.frames.length; start += stride, w++) {
    clips.push({
      id: `kitti${s.seq}_${String(start).padStart(6, '0')}`,
      source: 'kitti',
      index: w,
      frames: s.frames.slice(start, start + length),
      timestamps: s.timestamps.slice(start, start + length),
      camera: { intrinsics: s.intrinsics, height: KITTI_CAMERA_HEIGHT, from: 'KITTI calib.txt' },
      groundTruth: gts[w],
      qa: [],
    });
  }
  return clips;
}
