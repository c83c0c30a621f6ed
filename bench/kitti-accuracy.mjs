// Accuracy of the geometric baseline on the KITTI benchmark windows (31 frames every 5) of the
// sequences in ../shared/data/kitti: pooled balanced accuracy on the 6-question geometric subset
// and on all 14 questions (the reference grader's `global` metric), per-question tables, and
// trajectory errors against ground truth (oracle yaw-rate and speed RMSE, Sim(3) ATE, RPE).
// Thresholds stay as published; nothing here is tuned per window.
// Run: npm run build && node bench/kitti-accuracy.mjs [SEQ_ROOT]   → bench/results/kitti-accuracy.json
// (SEQ_ROOT: the folder holding 00, 01, 06; default ../shared/data/kitti. No flags.)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GEOMETRIC_SUBSET, predictClip } from '../dist/baseline/baseline.js';
import { evenFrames, selectFrames } from '../dist/vo/frames.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evaluate } from '../dist/grade/index.js';
import { loadQuestions } from '../dist/oracle/index.js';
import { ate, dynamicsRmse, rpe } from '../dist/vo/errors.js';
import { estimateClip } from '../dist/vo/estimate.js';
import { engineConfig, engineInput } from '../dist/vo/config.js';
import { measuredWith } from './lib/provenance.mjs';

const { positionals } = parseArgs({ options: {}, allowPositionals: true }); // strict: any flag is an error
if (positionals.length > 1) throw new Error(`bench/kitti-accuracy: one argument at most, SEQ_ROOT (got ${positionals.join(' ')})`);
const ROOT = positionals[0] ?? new URL('../../shared/data/kitti', import.meta.url).pathname;
const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

function runSequences(seqs, frames) {
  const preds = [];
  const errs = { yawRate: [], speed: [], ateSim3: [], rpeTrans: [], rpeRotDeg: [] };
  let qa = 0;
  for (const s of seqs) {
    for (const clip0 of kittiClips(readKittiSequence(join(ROOT, s)))) {
      const clip = selectFrames(clip0, evenFrames(clip0.frames.length, frames));
      const { options, alternative } = engineInput(clip, engineConfig()); // the run's defaults (both sizes at 10 frames)
      const est = estimateClip(clip, options, alternative);
      preds.push(...predictClip(clip, est.trajectory, questions, null, qa));
      qa += questions.questions.length;
      const gt = clip0.groundTruth;
      const d = dynamicsRmse(est.trajectory, gt);
      errs.yawRate.push(d.yawRate);
      errs.speed.push(d.speed);
      if (frames >= clip0.frames.length) {
        errs.ateSim3.push(ate(est.trajectory, gt, true).rmse);
        const r = rpe(est.trajectory, gt, 1);
        errs.rpeTrans.push(r.trans);
        errs.rpeRotDeg.push((r.rot * 180) / Math.PI);
      }
    }
  }
  const all = evaluate(preds, questions);
  const sub = evaluate(preds.filter((p) => subset.has(p.question_id)), questions);
  const rms = (xs) => Math.sqrt(mean(xs.map((x) => x * x)));
  return {
    clips: preds.length / questions.questions.length,
    subsetBalancedAcc: sub.global.balanced_acc,
    subsetAccuracy: sub.global.accuracy,
    allBalancedAcc: all.global.balanced_acc,
    allAccuracy: all.global.accuracy,
    perQuestion: Object.fromEntries(Object.entries(all.per_question).map(([q, m]) => [q, { balanced_acc: m.balanced_acc, accuracy: m.accuracy }])),
    yawRateRmse: rms(errs.yawRate),
    speedRmse: rms(errs.speed),
    ateSim3: errs.ateSim3.length ? mean(errs.ateSim3) : null,
    rpeTrans: errs.rpeTrans.length ? mean(errs.rpeTrans) : null,
    rpeRotDeg: errs.rpeRotDeg.length ? mean(errs.rpeRotDeg) : null,
  };
}

const configs = [
  { name: '00, 31 frames', seqs: ['00'], frames: 31 },
  { name: '00, 10 frames', seqs: ['00'], frames: 10 },
  { name: '01+06, 31 frames', seqs: ['01', '06'], frames: 31 },
];
const results = {};
for (const c of configs) results[c.name] = runSequences(c.seqs, c.frames);

const f3 = (v) => (v == null ? '   -  ' : v.toFixed(3));
console.log('KITTI windows: pooled balanced accuracy (reference grader) and trajectory errors');
console.log('config              clips  BAcc subset  BAcc all14  yaw-rate RMSE  speed RMSE  ATE Sim3 (m)  RPE (m/frame)');
for (const [name, r] of Object.entries(results)) {
  console.log(
    `${name.padEnd(18)} ${String(r.clips).padStart(6)}  ${f3(r.subsetBalancedAcc).padStart(11)}  ${f3(r.allBalancedAcc).padStart(10)}  ${r.yawRateRmse.toFixed(4).padStart(9)} rad/s  ${r.speedRmse.toFixed(3).padStart(6)} m/s  ${f3(r.ateSim3).padStart(12)}  ${f3(r.rpeTrans).padStart(13)}`,
  );
}
console.log('\nper question (balanced accuracy), ' + Object.keys(results).join(' | '));
for (const q of Object.keys(results[configs[0].name].perQuestion)) {
  console.log(`${q.padEnd(28)} ${Object.values(results).map((r) => f3(r.perQuestion[q]?.balanced_acc)).join('   ')}${subset.has(q) ? '   (subset)' : ''}`);
}
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/kitti-accuracy.json', import.meta.url), JSON.stringify({ ...measuredWith(), ...results }, null, 2) + '\n');
