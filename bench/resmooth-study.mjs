// The engine's own pair measurements (road distances, three-frame ratios, as bench/sparse-smoother.mjs
// keeps them in its cache: run that first) re-run through the speed smoother with other settings
// (the addon's smoothSpeed: the engine's own fusion), the path rebuilt from the engine's directions
// at the new distances, densified and graded like sparse-smoother.mjs (6 / 14, the reference grader).
// Variants: smoothSpeed options as JSON ({} the engine's own choice, null the engine's output as is).
// Run: npm run build && node bench/sparse-smoother.mjs && node bench/resmooth-study.mjs
//      [--sets 00/all,00/10,…] [--variants '{"ml":{},"q8":{"jerkPsd":8}}'] [--out bench/results/resmooth-study.json]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { measuredWith } from './lib/provenance.mjs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { GEOMETRIC_SUBSET, predictionRecords } from '../dist/baseline/baseline.js';
import { readDataset } from '../dist/datasets/benchmark.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evaluate } from '../dist/grade/index.js';
import { smoothSpeed } from '../dist/native/index.js';
import { loadQuestions } from '../dist/oracle/index.js';
import { runOracle } from '../dist/oracle/oracle.js';
import { densify } from '../dist/vo/densify.js';
import { speedUncertainty } from '../dist/vo/quality.js';
const shared = '/work/shared/data';
const { values: args } = parseArgs({ options: { sets: { type: 'string', default: '00/all,00/10,01+06/all,01+06/10,published-sim/all,published-sim/10' }, variants: { type: 'string', default: '{"engine":null,"ml":{},"q0.5":{"jerkPsd":0.5},"q2":{"jerkPsd":2},"q8":{"jerkPsd":8},"q30":{"jerkPsd":30}}' }, cache: { type: 'string', default: join(tmpdir(), 'egogeo-sparse-smoother') }, out: { type: 'string', default: new URL('./results/resmooth-study.json', import.meta.url).pathname } } });
const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);
function clipsOf(set) {
  if (set.startsWith('published-')) return readDataset(join(shared, 'published', 'egodyn-bench'), { nuscenesRoot: join(shared, 'published', 'nuscenes'), carlaDomain: set.endsWith('sim') ? 'simulation' : 'transferred' }).clips;
  if (set === 'carla' || set === 'nus') return readDataset(join(args.cache, `rendered-${set}`)).clips;
  return set.split('+').flatMap((s) => kittiClips(readKittiSequence(join(shared, 'kitti', s))));
}
const truthLabels = (c) => (c.qa.length ? Object.fromEntries(c.qa.map((q) => [q.question_id, String(q.answer).toLowerCase()])) : runOracle(c.groundTruth, questions).labels);
function rebuilt(r, opts) {
  const t = r.t, n = t.length;
  const m = { timestamps: t, distances: r.pairs.map((p) => p.roadDistance), distanceSigma: r.pairs.map((p) => p.roadSigma), logRatios: r.pairs.map((p) => p.logRatio), ratioSigma: r.pairs.map((p) => p.ratioSigma), moving: r.pairs.map((p) => p.quality !== 'low_parallax'), ...opts };
  const s = smoothSpeed(m);
  const x = [r.x[0]], y = [r.y[0]];
  const pairs = r.pairs.map((p, k) => ({ ...p, distance: s.speed[k] * (t[k + 1] - t[k]), speedSigma: s.speedSigma[k] }));
  for (let k = 0; k + 1 < n; k++) {
    const dx = r.x[k + 1] - r.x[k], dy = r.y[k + 1] - r.y[k], d = Math.hypot(dx, dy);
    const nd = pairs[k].distance;
    x.push(x[k] + (d > 1e-9 ? (dx / d) * nd : 0));
    y.push(y[k] + (d > 1e-9 ? (dy / d) * nd : 0));
  }
  return { traj: { id: '', t: Float64Array.from(t), x: Float64Array.from(x), y: Float64Array.from(y), yaw: Float64Array.from(r.yaw) }, pairs, s };
}
const variants = JSON.parse(args.variants);
const results = { ...measuredWith(), variants, sets: {} };
for (const set of args.sets.split(',')) {
  const [name, f] = set.split('/');
  const clips = clipsOf(name);
  const runs = JSON.parse(readFileSync(join(args.cache, `${name}_${f}_road.json`), 'utf8'));
  const labels = clips.map(truthLabels);
  const line = [];
  for (const [vn, opts] of Object.entries(variants)) {
    const preds = clips.flatMap((c, i) => {
      const r = runs[i];
      let traj, pairs;
      if (opts === null) { traj = { id: c.id, t: Float64Array.from(r.t), x: Float64Array.from(r.x), y: Float64Array.from(r.y), yaw: Float64Array.from(r.yaw) }; pairs = r.pairs; }
      else ({ traj, pairs } = rebuilt(r, opts));
      traj.id = c.id;
      const d = densify(traj, 10, speedUncertainty({ pairs }, traj.t)).trajectory;
      return predictionRecords(c, questions, runOracle(d, questions).labels, { truth: labels[i], answer: null, qaBase: i * 14 });
    });
    const all = evaluate(preds, questions), six = evaluate(preds.filter((p) => subset.has(p.question_id)), questions);
    line.push(`${vn} ${six.global.balanced_acc.toFixed(3)}/${all.global.balanced_acc.toFixed(3)}`);
    (results.sets[set] ??= {})[vn] = { bacc6: six.global.balanced_acc, bacc14: all.global.balanced_acc };
  }
  console.log(set.padEnd(20), line.join('  '));
}
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');
