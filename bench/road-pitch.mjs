// The road normal's pitch against the KITTI poses (issue #27): the scale stage makes the mount's
// prior normal perpendicular to the clip's heading (native/vo/scale/road_scale.cc), so the heading's
// pitch sets how far the road plane lies along each road corner's ray. Per benchmark window and
// frame count: the pitch of the heading the engine's road normal implies (−n_z, mrad; positive:
// down the image) against the median per-pair direction of travel in the camera frame from
// poses.txt, and the tracked road distances' median log error against the true pair distances.
// Far road corners (0.03 rad below the horizon) turn a 1 mrad pitch error into a 3% distance error.
// Run: npm run build && node bench/road-pitch.mjs [--kitti ROOT] [--sets 00,01,06] [--frames 10,0]
//      [--options '{"roadAboveScale":1}' (VoOptions)] [--out bench/results/road-pitch.json]
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evenFrames, selectFrames } from '../dist/vo/frames.js';
import { estimateClip } from '../dist/vo/estimate.js';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({
  options: {
    kitti: { type: 'string', default: new URL('../../shared/data/kitti', import.meta.url).pathname },
    sets: { type: 'string', default: '00,01,06' },
    frames: { type: 'string', default: '10,0' },
    options: { type: 'string', default: '{}' },
    out: { type: 'string', default: new URL('./results/road-pitch.json', import.meta.url).pathname },
  },
});
if (!existsSync(args.kitti)) {
  console.error(`road-pitch: ${args.kitti} not found (KITTI sequences with poses.txt are needed)`);
  process.exit(1);
}
const median = (a) => {
  const b = [...a].sort((x, y) => x - y);
  return b.length ? b[b.length >> 1] : NaN;
};
const options = JSON.parse(args.options);
const results = { native: process.env.EGOGEO_NATIVE ?? 'build/Release', ...measuredWith(), options, sets: {} };
for (const s of args.sets.split(',')) {
  const root = join(args.kitti, s);
  const poses = readFileSync(join(root, 'poses.txt'), 'utf8').trim().split(/\r?\n/).map((l) => l.trim().split(/\s+/).map(Number));
  const seq = readKittiSequence(root);
  const frameOf = new Map(Array.from(seq.timestamps, (t, i) => [t, i]));
  for (const nf of args.frames.split(',').map(Number)) {
    const pitchErr = [], roadErr = [];
    for (const clip0 of kittiClips(seq)) {
      const clip = nf ? selectFrames(clip0, evenFrames(clip0.frames.length, nf)) : clip0;
      const idx = Array.from(clip.timestamps, (t) => frameOf.get(t));
      // Per pair: the direction of travel in the pair's first camera (R^T (c2 - c1)), and its length.
      const ys = [], dist = [];
      for (let k = 0; k + 1 < idx.length; k++) {
        const P = poses[idx[k]], Q = poses[idx[k + 1]];
        const dw = [Q[3] - P[3], Q[7] - P[7], Q[11] - P[11]];
        const dc = [0, 1, 2].map((j) => P[j] * dw[0] + P[4 + j] * dw[1] + P[8 + j] * dw[2]);
        const n = Math.hypot(...dc);
        dist.push(n);
        if (n > 0.3) ys.push(dc[1] / n);
      }
      if (ys.length < 3) continue;
      const est = estimateClip(clip, options);
      pitchErr.push(1000 * (-est.native.roadNormal[2] - median(ys)));
      est.native.pairs.forEach((q, k) => {
        if (q.roadDistance > 0 && q.roadPoints >= 15 && dist[k] > 0.5) roadErr.push(100 * Math.log(q.roadDistance / dist[k]));
      });
    }
    const row = {
      windows: pitchErr.length,
      pitchErrMedianMrad: median(pitchErr),
      pitchErrMedianAbsMrad: median(pitchErr.map(Math.abs)),
      trackedRoadPairs: roadErr.length,
      trackedRoadErrMedianPct: median(roadErr),
      trackedRoadErrMedianAbsPct: median(roadErr.map(Math.abs)),
    };
    results.sets[`${s}/${nf || 'all'}`] = row;
    console.log(
      `${`${s}/${nf || 'all'}`.padEnd(8)} windows ${row.windows}  pitch err (engine - poses) median ${row.pitchErrMedianMrad.toFixed(2)} mrad, |.| ${row.pitchErrMedianAbsMrad.toFixed(2)}` +
        `  tracked road distances: ${row.trackedRoadPairs} pairs, median ${row.trackedRoadErrMedianPct.toFixed(1)}%, |.| ${row.trackedRoadErrMedianAbsPct.toFixed(1)}%`,
    );
  }
}
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');
console.log(`wrote ${args.out}`);
