// How precise must the relative scales be? On the KITTI windows (all frames), the engine's own road
// distances go through the engine's speed smoother (smoothSpeed) together with relative scales made
// from the ground truth plus the engine's error model at a chosen size: each pair's own log error
// u_k (white, sd s / sqrt(2)), entering ratio k and k+1 with opposite signs, which is what the real
// ratios' lag-1 correlation of about -0.45 says. The answers then come from the window's estimated
// geometry with those speeds (scale 'gt'). 'measured' feeds the engine's real ratios the same way,
// so the difference between the rows is the ratios' precision alone; 'gt' is the ceiling.
// Run: npm run build && node bench/ratio-ceiling.mjs [--sizes 0.001,0.003,0.005,0.0075] [--seeds 3]
//      → bench/results/ratio-ceiling.json
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GEOMETRIC_SUBSET, predictClip } from '../dist/baseline/baseline.js';
import { mulberry32 } from '../dist/core/random.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evaluate } from '../dist/grade/index.js';
import { smoothSpeed } from '../dist/native/index.js';
import { loadQuestions } from '../dist/oracle/index.js';
import { estimateClip } from '../dist/vo/estimate.js';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({
  options: {
    kitti: { type: 'string', default: new URL('../../shared/data/kitti', import.meta.url).pathname },
    seqs: { type: 'string', default: '00,01,06' },
    sizes: { type: 'string', default: '0.001,0.003,0.005,0.0075' },
    seeds: { type: 'string', default: '3' },
  },
});
const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);

// Once per window: the engine's measurements and the ground truth's pair distances.
const windows = [];
for (const s of args.seqs.split(',')) {
  for (const clip of kittiClips(readKittiSequence(join(args.kitti, s)))) {
    const est = estimateClip(clip);
    const gt = clip.groundTruth;
    const dist = est.native.pairs.map((_, k) => Math.hypot(gt.x[k + 1] - gt.x[k], gt.y[k + 1] - gt.y[k]));
    windows.push({ clip, pairs: est.native.pairs, dist });
  }
}

/** Pooled balanced accuracy when each window's pair speeds come from `speedsOf(window)`. */
function grade(speedsOf) {
  const preds = [];
  windows.forEach((w, i) => {
    const est = estimateClip(w.clip, { scale: 'gt', gtSpeeds: speedsOf(w) });
    preds.push(...predictClip(w.clip, est.trajectory, questions, null, i * questions.questions.length));
  });
  const all = evaluate(preds, questions), sub = evaluate(preds.filter((p) => subset.has(p.question_id)), questions);
  return { subset: sub.global.balanced_acc, all14: all.global.balanced_acc };
}

function smoothed(w, logRatios) {
  const ts = w.clip.timestamps;
  return smoothSpeed({
    timestamps: ts,
    distances: w.pairs.map((p) => p.roadDistance),
    distanceSigma: w.pairs.map((p) => p.roadSigma),
    logRatios,
    ratioSigma: w.pairs.map((p) => p.ratioSigma),
  }).speed;
}

const rows = {};
rows.measured = grade((w) => smoothed(w, w.pairs.map((p) => p.logRatio)));
for (const s of args.sizes.split(',').map(Number)) {
  const runs = [];
  for (let seed = 1; seed <= Number(args.seeds); seed++) {
    const rand = mulberry32(seed * 7919 + Math.round(s * 1e6));
    const g = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    runs.push(
      grade((w) => {
        const u = w.dist.map(() => (s / Math.SQRT2) * g());
        return smoothed(w, w.dist.map((d, k) => (k === 0 ? 0 : Math.log(d / w.dist[k - 1]) + u[k] - u[k - 1])));
      }),
    );
  }
  const mean = (key) => runs.reduce((a, r) => a + r[key], 0) / runs.length;
  rows[`sd ${s}`] = { subset: mean('subset'), all14: mean('all14'), runs };
}
rows.gt = grade((w) => w.dist.map((d, k) => d / (w.clip.timestamps[k + 1] - w.clip.timestamps[k])));
console.log(`KITTI ${args.seqs}, ${windows.length} windows, all frames; the engine's road distances; relative scales:`);
for (const [k, r] of Object.entries(rows)) console.log(`  ${k.padEnd(12)} subset ${r.subset.toFixed(3)}  all 14 ${r.all14.toFixed(3)}`);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/ratio-ceiling.json', import.meta.url), JSON.stringify({ ...measuredWith(), seqs: args.seqs, windows: windows.length, rows }, null, 2) + '\n');
