/**
 * What a dataset folder holds, decided once for every command that reads one (run, baseline,
 * oracle, calibrate, sensitivity, validate, audit, report, view):
 * - 'published': EgoDyn-Bench as published (nuscenes_clips/ or carla_clips/ with its clips_index.jsonl);
 * - 'benchmark': the benchmark layout (clips_index.jsonl, qa.jsonl, arrays/, frames or videos);
 * - 'kitti': a KITTI odometry sequence (image_0/ or poses.txt; times.txt, calib.txt beside them),
 *   read as its benchmark windows;
 * null: not a folder, or none of these. The order is the precedence.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/errors.js';

export type Layout = 'published' | 'benchmark' | 'kitti';

/** The published download's two parts, by source. */
export const PUBLISHED_PARTS = { nuscenes: 'nuscenes_clips', carla: 'carla_clips' } as const;

/** The layouts in words, for errors. */
export const LAYOUTS_TEXT = 'EgoDyn-Bench as published (nuscenes_clips/ or carla_clips/ with clips_index.jsonl), the benchmark layout (clips_index.jsonl) or a KITTI sequence (image_0/, poses.txt)';

export function detectLayout(dir: string): Layout | null {
  try {
    if (!statSync(dir).isDirectory()) return null;
  } catch {
    return null;
  }
  if (Object.values(PUBLISHED_PARTS).some((p) => existsSync(join(dir, p, 'clips_index.jsonl')))) return 'published';
  if (existsSync(join(dir, 'clips_index.jsonl'))) return 'benchmark';
  if (existsSync(join(dir, 'image_0')) || existsSync(join(dir, 'poses.txt'))) return 'kitti';
  return null;
}

/** `detectLayout`, or one error naming the folder and what was expected. */
export function requireLayout(dir: string): Layout {
  const l = detectLayout(dir);
  if (!l) throw new InputError(`${dir}: not a dataset folder: expected ${LAYOUTS_TEXT}`);
  return l;
}
