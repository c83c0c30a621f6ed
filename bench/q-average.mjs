// The speed smoother's jerk PSD averaged over instead of chosen (study 46): each clip's cached pair
// measurements (bench/sparse-smoother.mjs --cache: run that first) through smoothSpeed at every q of
// the smoother's grid (25 values, 0.05 to 200 m^2/s^5, the noise scales still chosen per q), each
// weighted by its marginal likelihood (neg2LogMl, a flat prior in log q). Graded like
// sparse-smoother.mjs (pooled balanced accuracy, 6 / 14 questions, the reference grader):
//   engine  the engine's output as it is;
//   ml      the measurements re-smoothed with the engine's own choice (should read as engine);
//   best    the profile of the grid's q (or the engine's choice) with the highest likelihood;
//   mean    the weighted mean of the log speed profiles;
//   vote    each question's label by the weighted vote of the profiles' labels.
// Run: npm run build && node bench/sparse-smoother.mjs --cache DIR && node bench/q-average.mjs --cache DIR
//      [--sets 00/all,00/10,...] [--out bench/results/q-average.json]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measuredWith } from './lib/provenance.mjs';
import { GEOMETRIC_SUBSET, predictionRecords } from '../dist/baseline/baseline.js';
import { readDataset } from '../dist/datasets/benchmark.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evaluate } from '../dist/grade/index.js';
import { smoothSpeed } from '../dist/native/index.js';
import { loadQuestions } from '../dist/oracle/index.js';
import { runOracle } from '../dist/oracle/oracle.js';
import { densify } from '../dist/vo/densify.js';
import { speedUncertainty } from '../dist/vo/quality.js';
const shared = fileURLToPath(new URL('../../shared/data', import.meta.url));
const ALL = '00/all,00/10,01+06/all,01+06/10,published-sim/all,published-sim/10,published-transferred/all,published-transferred/10,carla/all,carla/10,nus/all,nus/10';
const { values: args } = parseArgs({ options: { sets: { type: 'string', default: ALL }, cache: { type: 'string', default: join(tmpdir(), 'egogeo-sparse-smoother') }, out: { type: 'string', default: new URL('./results/q-average.json', import.meta.url).pathname } } });
const cache = args.cache;
const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);
const sets = args.sets.split(',');
const results = { command: ['node bench/q-average.mjs', ...process.argv.slice(2)].join(' '), ...measuredWith(), sets: {} };
function clipsOf(set) {
  if (set.startsWith('published-')) return readDataset(join(shared, 'published', 'egodyn-bench'), { nuscenesRoot: join(shared, 'published', 'nuscenes'), carlaDomain: set.endsWith('sim') ? 'simulation' : 'transferred' }).clips;
  if (set === 'carla' || set === 'nus') return readDataset(join(cache, `rendered-${set}`)).clips;
  return set.split('+').flatMap((s) => kittiClips(readKittiSequence(join(shared, 'kitti', s))));
}
const truthLabels = (c) => (c.qa.length ? Object.fromEntries(c.qa.map((q) => [q.question_id, String(q.answer).toLowerCase()])) : runOracle(c.groundTruth, questions).labels);
const meas = (r, opts) => ({ timestamps: r.t, distances: r.pairs.map((p) => p.roadDistance), distanceSigma: r.pairs.map((p) => p.roadSigma), logRatios: r.pairs.map((p) => p.logRatio), ratioSigma: r.pairs.map((p) => p.ratioSigma), moving: r.pairs.map((p) => p.quality !== 'low_parallax'), ...opts });
function path(r, speed, sigma) {
  const t = r.t, n = t.length;
  const x = [r.x[0]], y = [r.y[0]];
  const pairs = r.pairs.map((p, k) => ({ ...p, distance: speed[k] * (t[k + 1] - t[k]), speedSigma: sigma[k] }));
  for (let k = 0; k + 1 < n; k++) {
    const dx = r.x[k + 1] - r.x[k], dy = r.y[k + 1] - r.y[k], d = Math.hypot(dx, dy);
    const nd = pairs[k].distance;
    x.push(x[k] + (d > 1e-9 ? (dx / d) * nd : 0));
    y.push(y[k] + (d > 1e-9 ? (dy / d) * nd : 0));
  }
  return { traj: { id: '', t: Float64Array.from(t), x: Float64Array.from(x), y: Float64Array.from(y), yaw: Float64Array.from(r.yaw) }, pairs };
}
const labelsOf = (c, traj, pairs) => { traj.id = c.id; const d = densify(traj, 10, speedUncertainty({ pairs }, traj.t)).trajectory; return runOracle(d, questions).labels; };
const QS = Array.from({ length: 25 }, (_, i) => 0.05 * Math.pow(4000, i / 24));
for (const set of sets) {
  const [name, f] = set.split('/');
  const clips = clipsOf(name);
  const runs = JSON.parse(readFileSync(join(cache, `${name}_${f}_road.json`), 'utf8'));
  const V = { engine: [], ml: [], best: [], mean: [], vote: [] };
  clips.forEach((c, i) => {
    const r = runs[i];
    const truth = truthLabels(c);
    const rec = (v, labels) => V[v].push(...predictionRecords(c, questions, labels, { truth, answer: null, qaBase: i * 14 }));
    const eng = { id: c.id, t: Float64Array.from(r.t), x: Float64Array.from(r.x), y: Float64Array.from(r.y), yaw: Float64Array.from(r.yaw) };
    rec('engine', labelsOf(c, eng, r.pairs));
    let ml;
    try { ml = smoothSpeed(meas(r, {})); } catch { ml = null; }
    if (!ml) { const L = labelsOf(c, eng, r.pairs); rec('ml', L); rec('best', L); rec('mean', L); rec('vote', L); return; }
    { const { traj, pairs } = path(r, ml.speed, ml.speedSigma); rec('ml', labelsOf(c, traj, pairs)); }
    const fits = QS.map((q) => smoothSpeed(meas(r, { jerkPsd: q })));
    const m = Math.min(...fits.map((s) => s.neg2LogMl));
    {
      const b = [ml, ...fits].reduce((a, s) => (s.neg2LogMl < a.neg2LogMl ? s : a));
      const { traj, pairs } = path(r, b.speed, b.speedSigma);
      rec('best', labelsOf(c, traj, pairs));
    }
    const w = fits.map((s) => Math.exp(-(s.neg2LogMl - m) / 2));
    const W = w.reduce((a, b) => a + b, 0);
    const n = ml.speed.length;
    const sp = new Float64Array(n), sg = Float64Array.from(ml.speedSigma);
    for (let k = 0; k < n; k++) { let a = 0; fits.forEach((s, j) => { a += (w[j] / W) * Math.log(Math.max(s.speed[k], 1e-6)); }); sp[k] = ml.speed[k] > 0 ? Math.exp(a) : 0; }
    { const { traj, pairs } = path(r, sp, sg); rec('mean', labelsOf(c, traj, pairs)); }
    const votes = {};
    fits.forEach((s, j) => { if (w[j] / W < 1e-4) return; const { traj, pairs } = path(r, s.speed, s.speedSigma); const L = labelsOf(c, traj, pairs); for (const [q, l] of Object.entries(L)) { (votes[q] ??= {}); votes[q][l] = (votes[q][l] || 0) + w[j]; } });
    const vote = Object.fromEntries(Object.entries(votes).map(([q, o]) => [q, Object.entries(o).sort((a, b) => b[1] - a[1])[0][0]]));
    rec('vote', vote);
  });
  const line = Object.entries(V).map(([v, preds]) => {
    const all = evaluate(preds, questions), six = evaluate(preds.filter((p) => subset.has(p.question_id)), questions);
    (results.sets[set] ??= {})[v] = { bacc6: six.global.balanced_acc, bacc14: all.global.balanced_acc };
    return `${v} ${six.global.balanced_acc.toFixed(3)}/${all.global.balanced_acc.toFixed(3)}`;
  });
  console.log(set.padEnd(26), line.join('  '));
}
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, `${JSON.stringify(results, null, 2)}\n`);
