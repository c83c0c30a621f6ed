// What `--resolution auto`'s second tracking size (half size, run where full size doubts itself,
// vo/estimate.ts `needsSecond`) does on every set at the published 10 frames: per clip, why it
// ran, which size `kept` kept, the sizes' ratio, the first size's road share and the direct road
// alignment's agreement with its fused distances, and each size's path-length error against the
// ground truth; `runsNow`: whether today's rule (the road clause only where the direct alignments do
// not bear the level out, `directBearsOut`) runs it. It tells whether the second size's cost (most of a 01/06 clip's) buys answers.
// Run: npm run build && node bench/second-size.mjs [--sets 00,01+06,published-sim,published-transferred,carla,nus,highway]
//      [--out bench/results/second-size.json]
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { readDataset } from '../dist/datasets/benchmark.js';
import { pathLength } from '../dist/core/trajectory.js';
import { groundTruthArrays } from '../dist/datasets/groundtruth.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { synthesize } from '../dist/synth/index.js';
import { clipOptions, engineConfig, engineInput, GROSS_DISAGREEMENT } from '../dist/vo/config.js';
import { directBearsOut, estimateClip, kept } from '../dist/vo/estimate.js';
import { loadFrames } from '../dist/vo/frames.js';
import { measuredWith } from './lib/provenance.mjs';

const shared = new URL('../../shared/data', import.meta.url).pathname;
const { values: args } = parseArgs({
  options: {
    sets: { type: 'string', default: '00,01+06,published-sim,published-transferred,carla,nus,highway' },
    cache: { type: 'string', default: join(tmpdir(), 'egogeo-second-size') },
    out: { type: 'string', default: new URL('./results/second-size.json', import.meta.url).pathname },
  },
});
mkdirSync(args.cache, { recursive: true });

async function clipsOf(set) {
  if (set === 'carla' || set === 'nus' || set === 'highway') {
    const dir = join(args.cache, `rendered-${set}`);
    const opts = { carla: { clips: 40, preset: 'carla' }, nus: { clips: 50, preset: 'nuscenes' }, highway: { clips: 40, preset: 'carla', speed: [20, 33] } }[set];
    if (!existsSync(join(dir, 'qa.jsonl'))) await synthesize({ out: dir, seed: set === 'highway' ? 4242 : 2026, workers: 2, progress: false, ...opts });
    return readDataset(dir).clips;
  }
  if (set.startsWith('published-')) {
    const domain = set.slice('published-'.length) === 'sim' ? 'simulation' : 'transferred';
    return readDataset(join(shared, 'published', 'egodyn-bench'), { nuscenesRoot: join(shared, 'published', 'nuscenes'), carlaDomain: domain }).clips;
  }
  return set.split('+').flatMap((s) => kittiClips(readKittiSequence(join(shared, 'kitti', s))));
}

/** The ground truth's distance travelled over the frames the engine saw. */
function truthLength(c, ts) {
  const g = c.groundTruth ?? (() => {
    const a = groundTruthArrays(c).arrays;
    return { t: a.timestamps, x: a.x, y: a.y };
  })();
  const at = (t) => {
    let i = 0;
    while (i < g.t.length - 2 && g.t[i + 1] < t) i++;
    const f = Math.min(1, Math.max(0, (t - g.t[i]) / (g.t[i + 1] - g.t[i])));
    return [g.x[i] + f * (g.x[i + 1] - g.x[i]), g.y[i] + f * (g.y[i + 1] - g.y[i])];
  };
  let s = 0;
  for (let k = 0; k + 1 < ts.length; k++) {
    const a = at(ts[k]), b = at(ts[k + 1]);
    s += Math.hypot(b[0] - a[0], b[1] - a[1]);
  }
  return s;
}

/** The median log ratio of the direct alignment's distances to the fused ones, over the moving pairs it measured. */
function directAgreement(nat) {
  const r = nat.pairs.filter((p) => p.quality === 'ok' && p.directDistance > 0 && p.distance > 0).map((p) => Math.log(p.directDistance / p.distance)).sort((a, b) => a - b);
  return r.length ? { n: r.length, median: r[r.length >> 1] } : { n: 0, median: NaN };
}

const results = { ...measuredWith(), sets: {} };
for (const set of args.sets.split(',')) {
  const clips = await clipsOf(set);
  const rows = [];
  for (const c of clips) {
    const full = loadFrames(c);
    const { clip, options, alternative } = engineInput(full, engineConfig({ frames: 10 }));
    const first = estimateClip(clip, options);
    const q = first.quality;
    const why = q.verdict !== 'ok' ? `verdict ${q.verdict}` : 2 * q.road_pairs < q.moving_pairs ? 'road on under half' : null;
    const truth = truthLength(c, clip.timestamps);
    const err = (e) => pathLength(e.trajectory) / truth - 1;
    const row = { id: c.id, why, runsNow: q.verdict !== 'ok' || (why !== null && !directBearsOut(first.native, q.moving_pairs)), roadPairs: q.road_pairs, movingPairs: q.moving_pairs, uncertainty: q.speed_uncertainty, direct: directAgreement(first.native), firstErr: err(first) };
    if (why && alternative) {
      const second = estimateClip(clip, { ...clipOptions(clip, clip.timestamps, alternative), areaShrink: true });
      const k = kept(clip.timestamps, first, second);
      const ratio = pathLength(first.trajectory) / pathLength(second.trajectory);
      Object.assign(row, { secondErr: err(second), ratio, gross: ratio > GROSS_DISAGREEMENT || ratio < 1 / GROSS_DISAGREEMENT, kept: k === first ? 'first' : 'second' });
    }
    rows.push(row);
  }
  results.sets[set] = rows;
  const ran = rows.filter((r) => r.why);
  const sec = ran.filter((r) => r.kept === 'second');
  const gross = ran.filter((r) => r.gross);
  console.log(`${set.padEnd(22)} clips ${rows.length}  second ran ${ran.length} (verdict ${ran.filter((r) => r.why.startsWith('verdict')).length}, road ${ran.filter((r) => r.why.startsWith('road')).length})  kept second ${sec.length}  gross ${gross.length}  runs under today's rule ${ran.filter((r) => r.runsNow).length} (kept second ${sec.filter((r) => r.runsNow).length}, gross ${gross.filter((r) => r.runsNow).length})`);
  for (const r of ran.filter((r) => r.kept === 'second' || r.gross)) console.log(`   ${r.id} ${r.why} road ${r.roadPairs}/${r.movingPairs} unc ${(r.uncertainty ?? NaN).toFixed(3)} direct ${r.direct.n}:${r.direct.median.toFixed(3)} err first ${(100 * r.firstErr).toFixed(1)}% second ${(100 * r.secondErr).toFixed(1)}% ratio ${r.ratio.toFixed(2)} kept ${r.kept}`);
}
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');
