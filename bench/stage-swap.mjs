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
//   st-ratios        the engine's road distances, relative scales from the steadied truth: each
//                    10 Hz step's speed averaged with its neighbours' (bench/lib/steadied.mjs),
//                    which removes the poses' frame-to-frame jitter and keeps the motion;
//   st-ratios+N%     the same with white noise of N% added to every steadied log ratio (--noise):
//                    how precise the relative scales must be for a score, against the engine's own
//                    error, printed per run (log-ratio error sd against the truth and the steadied
//                    truth; with both tracking sizes at 10 frames also their shared part; per
//                    sequence their mean, a drift of the scale chain, and sd);
//   full-res, auto   (10 frames only) the engine tracking at full resolution instead of half, and
//                    both sizes with the surer estimate kept (--resolution auto, the run's default;
//                    'engine' above is half size there).
// Every variant keeps the engine's rotations and directions; the smoother keeps the engine's noise
// levels (a replaced measurement keeps its pair's sigma, or a nominal one where the engine had none).
// Run: npm run build && node bench/stage-swap.mjs [--kitti ROOT] [--seqs 00,01,06] [--frames all,10] [--noise 0.25,0.5,0.75]
//      [--options '{"maxFeatures":1000}'] [--out F]  → bench/results/stage-swap.json
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { GEOMETRIC_SUBSET, predictClip } from '../dist/baseline/baseline.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evaluate } from '../dist/grade/index.js';
import { smoothSpeed } from '../dist/native/index.js';
import { loadQuestions } from '../dist/oracle/index.js';
import { engineConfig, engineInput, pairSpeeds, WIDE_BASELINE } from '../dist/vo/config.js';
import { estimateClip, speedUncertainty } from '../dist/vo/estimate.js';
import { loadFrames } from '../dist/vo/frames.js';
import { steadied } from './lib/steadied.mjs';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({
  options: {
    kitti: { type: 'string', default: new URL('../../shared/data/kitti', import.meta.url).pathname },
    seqs: { type: 'string', default: '00,01,06' },
    noise: { type: 'string', default: '0.25,0.5,0.75' }, // % white noise on the steadied log ratios
    frames: { type: 'string', default: 'all,10' },
    options: { type: 'string', default: '{}' }, // engine options (VoOptions JSON) over the run's for every estimate: the study under a variant
    out: { type: 'string', default: new URL('./results/stage-swap.json', import.meta.url).pathname },
  },
});
const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);
const SPEED_QUESTIONS = ['speed_trend', 'speed_regime', 'mean_speed_low', 'braking_intensity', 'driving_smoothness', 'speed_peak_half', 'contrastive_sequence', 'stop_and_go'];
const NOMINAL_ROAD_SIGMA = 0.06, NOMINAL_RATIO_SIGMA = 0.01;
const HALF_SIZE = { downsample: WIDE_BASELINE.downsample, kltWindow: WIDE_BASELINE.kltWindow, kltLevels: WIDE_BASELINE.kltLevels, minDistance: WIDE_BASELINE.minDistance };

const seqOf = new Map(); // clip -> its KITTI sequence
const clips = args.seqs.split(',').flatMap((s) => kittiClips(readKittiSequence(join(args.kitti, s))).map((c) => (seqOf.set(c, s), c)));
const result = { seqs: args.seqs, windows: clips.length, options: JSON.parse(args.options), sets: {}, ratioErrors: {} };
const extra = JSON.parse(args.options);
const noise = args.noise ? args.noise.split(',').map(Number) : [];
// A seeded normal generator (Box-Muller over a 32-bit LCG), so the noise rows repeat exactly.
let seed = 2026;
const uniform = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) + 0.5) / 4294967296;
const gauss = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
const sd = (a) => { const m = a.reduce((x, y) => x + y, 0) / a.length; return Math.sqrt(a.reduce((x, y) => x + (y - m) ** 2, 0) / a.length); };
const logRatiosOf = (d) => d.map((x, k) => (k === 0 ? 0 : Math.log(x / d[k - 1])));

for (const frames of args.frames.split(',').map((f) => (f === 'all' ? null : Number(f)))) {
  const label = frames === null ? 'all frames' : '10 frames';
  const windows = clips.map((full) => {
    const input = engineInput(loadFrames(full), engineConfig({ frames }));
    const { clip } = input, options = { ...input.options, ...extra }, alternative = input.alternative && { ...input.alternative, ...extra };
    const est = estimateClip(clip, options);
    // The other tracking size: at 10 frames full size (engineInput's alternative), at all frames half.
    const other = estimateClip(clip, alternative ?? { ...options, ...HALF_SIZE });
    const speeds = pairSpeeds(full.groundTruth, clip.timestamps);
    const dt = speeds.map((_, k) => clip.timestamps[k + 1] - clip.timestamps[k]);
    const stDist = pairSpeeds(steadied(full.groundTruth), clip.timestamps).map((v, k) => v * dt[k]);
    return { full, clip, options, est, other, gtSpeed: speeds, gtDist: speeds.map((v, k) => v * dt[k]), stDist };
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
      logRatios:
        ratios === 'gt' ? logRatiosOf(w.gtDist)
        : typeof ratios === 'number' ? logRatiosOf(w.stDist).map((r, k) => (k === 0 ? 0 : r + (ratios / 100) * gauss()))
        : ratios === 'st' ? logRatiosOf(w.stDist)
        : p.map((x) => x.logRatio),
      ratioSigma: p.map((x, k) => (ratios !== 'engine' ? (k === 0 ? 0 : x.ratioSigma > 0 ? x.ratioSigma : NOMINAL_RATIO_SIGMA) : x.ratioSigma)),
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
    grade('st-ratios', withSpeeds((w) => smoothed(w, 'engine', 'st'))),
    ...noise.map((n) => grade(`st-ratios+${n}%`, withSpeeds((w) => smoothed(w, 'engine', n)))),
  ];
  // The engine's relative scales against the truth and the steadied truth (log-ratio errors), and
  // where both tracking sizes run, the part of their errors the two sizes share (their covariance).
  const errs = { truth: [], steadied: [], other: [], seq: [] };
  for (const w of windows) {
    const t = logRatiosOf(w.gtDist), st = logRatiosOf(w.stDist);
    w.est.native.pairs.forEach((x, k) => {
      if (k === 0 || !(x.ratioSigma > 0)) return;
      errs.truth.push(x.logRatio - t[k]);
      errs.steadied.push(x.logRatio - st[k]);
      errs.seq.push(seqOf.get(w.full));
      const o = w.other.native.pairs[k];
      errs.other.push(o && o.ratioSigma > 0 ? o.logRatio - st[k] : NaN);
    });
  }
  const both = errs.steadied.map((e, i) => [e, errs.other[i]]).filter(([, o]) => Number.isFinite(o));
  const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
  const cov = both.length ? mean(both.map(([a, b]) => a * b)) - mean(both.map(([a]) => a)) * mean(both.map(([, b]) => b)) : NaN;
  result.ratioErrors[label] = {
    n: errs.truth.length,
    sdVsTruth: sd(errs.truth),
    sdVsSteadied: sd(errs.steadied),
    ...(both.length ? { otherSizeSdVsSteadied: sd(both.map(([, b]) => b)), sharedSd: Math.sqrt(Math.max(0, cov)), pairsBoth: both.length } : {}),
    // Per sequence against the steadied truth: a mean away from zero is a drift of the scale chain
    // (the speed read as growing or shrinking by that much a pair), which the road distances must undo.
    perSequence: Object.fromEntries(
      args.seqs.split(',').map((q) => {
        const e = errs.steadied.filter((_, i) => errs.seq[i] === q);
        return [q, { n: e.length, mean: e.length ? mean(e) : NaN, sd: e.length ? sd(e) : NaN }];
      }),
    ),
  };
  if (frames !== null) {
    rows.push(grade('full-res', (w) => w.other.trajectory));
    // --resolution auto, the run's default at 10 frames: the size whose speeds the smoother is surer of.
    const u = (w, e) => speedUncertainty(e.native, w.clip.timestamps);
    rows.push(grade('auto', (w) => (u(w, w.other) < u(w, w.est) ? w.other : w.est).trajectory));
  }
  result.sets[label] = rows;
  console.log(`KITTI ${args.seqs}, ${clips.length} windows, ${label}: pooled 6 / 14, then per question (balanced accuracy)`);
  console.log(`${'variant'.padEnd(15)} ${'6q'.padStart(6)} ${'14q'.padStart(6)}  ${SPEED_QUESTIONS.map((q) => q.slice(0, 12).padStart(12)).join(' ')}`);
  const re = result.ratioErrors[label];
  console.log(`relative scales (log-ratio error sd, ${re.n} pairs): ${(100 * re.sdVsTruth).toFixed(2)}% against the truth, ${(100 * re.sdVsSteadied).toFixed(2)}% against the steadied truth; the other size ${(100 * re.otherSizeSdVsSteadied).toFixed(2)}%, shared by both ${(100 * re.sharedSd).toFixed(2)}%`);
  console.log(`  per sequence, mean / sd against the steadied truth: ${Object.entries(re.perSequence).map(([q, v]) => `${q} ${v.mean >= 0 ? '+' : ''}${(100 * v.mean).toFixed(2)}% / ${(100 * v.sd).toFixed(2)}% (${v.n})`).join(', ')}`);
  for (const r of rows) console.log(`${r.name.padEnd(15)} ${r.subset.toFixed(3).padStart(6)} ${r.all14.toFixed(3).padStart(6)}  ${SPEED_QUESTIONS.map((q) => r.perQuestion[q].toFixed(3).padStart(12)).join(' ')}`);
}
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, `${JSON.stringify({ date: new Date().toISOString(), ...measuredWith(), ...result }, null, 1)}\n`);
