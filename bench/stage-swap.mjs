// Which stage limits the speed profile? On the KITTI windows, at all frames and at the published
// protocol's 10 frames (0.33 s apart, half resolution), one stage of the scale chain at a time is
// replaced by the ground truth and the answers graded (reference grader, per question and pooled):
//   engine           the engine as it runs;
//   resmoothed       its own road distances and relative scales through smoothSpeed (a check:
//                    equals 'engine' up to the smoother's own numerics);
//   gt-road          exact road distances (the pairs' true lengths), the engine's relative scales;
//   gt-ratios        the engine's road distances, exact relative scales (the scale chain);
//   gt-both          both exact: what is left is the smoother's motion model at this frame rate;
//   gt-speed         the true pair speeds (the ceiling of the estimated geometry);
//   full-res         (10 frames only) the engine tracking at full resolution instead of half.
// Every variant keeps the engine's rotations and directions; the smoother keeps the engine's noise
// levels (a replaced measurement keeps its pair's sigma, or a nominal one where the engine had none).
// Run: npm run build && node bench/stage-swap.mjs [--kitti ROOT] [--seqs 00,01,06]  → bench/results/stage-swap.json
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GEOMETRIC_SUBSET, predictClip } from '../dist/baseline/baseline.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evaluate } from '../dist/grade/index.js';
import { smoothSpeed } from '../dist/native/index.js';
import { loadQuestions } from '../dist/oracle/index.js';
import { engineConfig, engineInput, pairSpeeds } from '../dist/vo/config.js';
import { estimateClip } from '../dist/vo/estimate.js';
import { loadFrames } from '../dist/vo/frames.js';

const { values: args } = parseArgs({
  options: {
    kitti: { type: 'string', default: new URL('../../shared/data/kitti', import.meta.url).pathname },
    seqs: { type: 'string', default: '00,01,06' },
  },
});
const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);
const SPEED_QUESTIONS = ['speed_trend', 'speed_regime', 'mean_speed_low', 'braking_intensity', 'driving_smoothness', 'speed_peak_half', 'contrastive_sequence', 'stop_and_go'];
const NOMINAL_ROAD_SIGMA = 0.06, NOMINAL_RATIO_SIGMA = 0.01;

const clips = args.seqs.split(',').flatMap((s) => kittiClips(readKittiSequence(join(args.kitti, s))));
const result = { seqs: args.seqs, windows: clips.length, sets: {} };

for (const frames of [null, 10]) {
  const label = frames === null ? 'all frames' : '10 frames';
  const windows = clips.map((full) => {
    const { clip, options } = engineInput(loadFrames(full), engineConfig({ frames }));
    const est = estimateClip(clip, options);
    const speeds = pairSpeeds(full.groundTruth, clip.timestamps);
    const dt = speeds.map((_, k) => clip.timestamps[k + 1] - clip.timestamps[k]);
    return { full, clip, options, est, gtSpeed: speeds, gtDist: speeds.map((v, k) => v * dt[k]) };
  });
  const grade = (name, trajOf) => {
    const preds = [];
    windows.forEach((w, i) => preds.push(...predictClip(w.full, trajOf(w), questions, null, i * questions.questions.length)));
    const all = evaluate(preds, questions), sub = evaluate(preds.filter((p) => subset.has(p.question_id)), questions);
    const perQ = Object.fromEntries(SPEED_QUESTIONS.map((q) => [q, all.per_question[q]?.balanced_acc ?? NaN]));
    return { name, subset: sub.global.balanced_acc, all14: all.global.balanced_acc, perQuestion: perQ };
  };
  const withSpeeds = (speedsOf) => (w) => estimateClip(w.clip, { ...w.options, scale: 'gt', gtSpeeds: Array.from(speedsOf(w)) }).trajectory;
  const smoothed = (w, road, ratios) => {
    const p = w.est.native.pairs;
    return smoothSpeed({
      timestamps: w.clip.timestamps,
      distances: road === 'gt' ? w.gtDist : p.map((x) => x.roadDistance),
      distanceSigma: p.map((x) => (road === 'gt' ? (x.roadSigma > 0 ? x.roadSigma : NOMINAL_ROAD_SIGMA) : x.roadSigma)),
      logRatios: ratios === 'gt' ? w.gtDist.map((d, k) => (k === 0 ? 0 : Math.log(d / w.gtDist[k - 1]))) : p.map((x) => x.logRatio),
      ratioSigma: p.map((x, k) => (ratios === 'gt' ? (k === 0 ? 0 : x.ratioSigma > 0 ? x.ratioSigma : NOMINAL_RATIO_SIGMA) : x.ratioSigma)),
      moving: p.map((x) => x.quality !== 'low_parallax'),
    }).speed;
  };
  const rows = [
    grade('engine', (w) => w.est.trajectory),
    grade('resmoothed', withSpeeds((w) => smoothed(w, 'engine', 'engine'))),
    grade('gt-road', withSpeeds((w) => smoothed(w, 'gt', 'engine'))),
    grade('gt-ratios', withSpeeds((w) => smoothed(w, 'engine', 'gt'))),
    grade('gt-both', withSpeeds((w) => smoothed(w, 'gt', 'gt'))),
    grade('gt-speed', withSpeeds((w) => w.gtSpeed)),
  ];
  if (frames !== null) {
    rows.push(grade('full-res', (w) => estimateClip(w.clip, { ...w.options, downsample: 1, kltWindow: 13, kltLevels: 4, minDistance: 8 }).trajectory));
  }
  result.sets[label] = rows;
  console.log(`KITTI ${args.seqs}, ${clips.length} windows, ${label}: pooled 6 / 14, then per question (balanced accuracy)`);
  console.log(`${'variant'.padEnd(11)} ${'6q'.padStart(6)} ${'14q'.padStart(6)}  ${SPEED_QUESTIONS.map((q) => q.slice(0, 12).padStart(12)).join(' ')}`);
  for (const r of rows) console.log(`${r.name.padEnd(11)} ${r.subset.toFixed(3).padStart(6)} ${r.all14.toFixed(3).padStart(6)}  ${SPEED_QUESTIONS.map((q) => r.perQuestion[q].toFixed(3).padStart(12)).join(' ')}`);
}
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/stage-swap.json', import.meta.url), `${JSON.stringify({ date: new Date().toISOString(), ...result }, null, 1)}\n`);
