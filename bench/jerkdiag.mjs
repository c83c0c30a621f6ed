import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { computeDynamics } from '../dist/oracle/dynamics.js';
import { summaryFeatures } from '../dist/oracle/features.js';
import { denseTimes, fromPairRates, smoothPath, PATH_PRIOR, stepNoise } from '../dist/vo/densify.js';
const set = process.argv[2] ?? '00', f = process.argv[3] ?? '10';
const clips = set.split('+').flatMap((s) => kittiClips(readKittiSequence(join('/work/shared/data/kitti', s))));
const runs = JSON.parse(readFileSync(join(tmpdir(), 'egogeo-sparse-smoother', `${set}_${f}_road.json`), 'utf8'));
const feat = (tr) => summaryFeatures(computeDynamics(tr)).mean_abs_jerk;
const T = (id, r) => ({ id, t: Float64Array.from(r.t), x: Float64Array.from(r.x), y: Float64Array.from(r.y), yaw: Float64Array.from(r.yaw) });
const rows = [];
for (const [i, c] of clips.entries()) {
  const tr = T(c.id, runs[i]);
  const times = f === 'all' ? tr.t : denseTimes(tr.t, 10);
  const truth = feat(c.groundTruth);
  const pr = f === 'all' ? feat(tr) : feat(fromPairRates(tr, times));
  const sp = feat(smoothPath(tr, times, null, PATH_PRIOR));
  const sig = stepNoise(tr.t, runs[i].pairs).position;
  rows.push([truth, pr, sp, Math.max(...sig)]);
}
const cls = (j) => (j <= 1.25 ? 0 : j <= 2.15 ? 1 : 2);
for (const [k, name] of [[1, 'pair-rates/raw'], [2, 'spline']]) {
  const ratios = rows.map((r) => r[k] / r[0]).sort((a, b) => a - b);
  const agree = rows.filter((r) => cls(r[k]) === cls(r[0])).length;
  console.log(name, 'median ratio est/truth', ratios[ratios.length >> 1].toFixed(2), 'p10', ratios[Math.floor(ratios.length * 0.1)].toFixed(2), 'p90', ratios[Math.floor(ratios.length * 0.9)].toFixed(2), 'class agree', agree, '/', rows.length);
}
console.log('truth classes', [0, 1, 2].map((c) => rows.filter((r) => cls(r[0]) === c).length));
console.log(rows.slice(0, 12).map((r) => r.map((x) => x.toFixed(2)).join(' ')).join('\n'));
