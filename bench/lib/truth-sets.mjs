// The sets the scale-chain studies read (chain-drift, ratio-points) and the truth's pair lengths
// between an estimate's frames, in one place.
import { join } from 'node:path';
import { readDataset } from '../../dist/datasets/benchmark.js';
import { groundTruthArrays } from '../../dist/datasets/groundtruth.js';
import { kittiClips, readKittiSequence } from '../../dist/datasets/kitti.js';
import { steadied } from './steadied.mjs';

const shared = new URL('../../../shared/data', import.meta.url).pathname;

/**
 * A set's clips: KITTI sequences ('00', '01+06'), the published stand-in's two CARLA domains
 * ('published-sim', 'published-transferred'), or sparse-smoother's rendered sets ('carla', 'nus',
 * under `cache`).
 */
export function clipsOf(set, cache) {
  if (set === 'carla' || set === 'nus') return readDataset(join(cache, `rendered-${set}`)).clips;
  if (set.startsWith('published-')) {
    const domain = set.endsWith('sim') ? 'simulation' : 'transferred';
    return readDataset(join(shared, 'published', 'egodyn-bench'), { nuscenesRoot: join(shared, 'published', 'nuscenes'), carlaDomain: domain }).clips;
  }
  return set.split('+').flatMap((s) => kittiClips(readKittiSequence(join(shared, 'kitti', s))));
}

/** Linear interpolation of v (at sorted times ts) at t. */
function interp(ts, v, t) {
  let i = 0;
  while (i < ts.length - 2 && ts[i + 1] < t) i++;
  const w = Math.min(1, Math.max(0, (t - ts[i]) / (ts[i + 1] - ts[i])));
  return v[i] + w * (v[i + 1] - v[i]);
}

/**
 * The truth's pair lengths (m) between the estimate's frame times `t`: KITTI poses steadied
 * (bench/lib/steadied.mjs), npz arrays on their own grid (which starts at the clip's first frame);
 * null when the clip has no truth.
 */
export function truthLengths(c, t) {
  let ts, x, y;
  if (c.groundTruth) ({ t: ts, x, y } = steadied(c.groundTruth));
  else {
    const a = groundTruthArrays(c)?.arrays;
    if (!a) return null;
    ({ timestamps: ts, x, y } = a);
  }
  const t0 = c.groundTruth ? 0 : t[0] - ts[0];
  const at = (u) => [interp(ts, x, u - t0), interp(ts, y, u - t0)];
  return Array.from({ length: t.length - 1 }, (_, k) => {
    const a = at(t[k]), b = at(t[k + 1]);
    return Math.hypot(b[0] - a[0], b[1] - a[1]);
  });
}
