// The speed-profile study (issue #14): per-question balanced accuracy and the oracle's speed,
// acceleration and jerk RMSE against ground truth on the KITTI benchmark windows, for the speed
// estimators the engine offers: 'engine' (its defaults: the white-noise-jerk smoother over road
// distances and relative scales, jerk PSD and noise scales chosen per clip by maximum marginal
// likelihood, the ratios' errors modelled as each pair's own plus a 0.2 drift share, the road's as
// white or AR(1) with a 0.1 s correlation time, chosen per clip; relative scales from the windowed
// bundle adjustment), 'three-frame' (relative scales from three frames only, the engine before the
// bundle adjustment), 'white-road' (road errors always independent), 'jerk-prior' (a log-normal prior on the jerk PSD from the
// question file's smoothness calibration, bench/jerk-prior.mjs),
// 'independent' (the same smoother with the ratios' errors nearly independent, ratioDrift 0.9;
// close to the smoother before, which took them as fully independent), 'fusion' (road distances + relative scales, weak log-speed continuity prior, no
// motion model; the engine's dense-clip estimator before), 'symmetric' (the engine with the
// earlier symmetric road-distance fit) and 'gt' (ground-truth speeds, the ceiling). Per clip also
// the log error of the distance travelled (its level) and of the second half's distance over the
// first half's (its trend). Per run also the quality of the scale stage's own measurements against
// ground truth (road distances and the relative scales the smoother gets: log-error sd, MAD, lag-1
// correlation) and the recall of every class of the pooled all-14 metric (mean recall over the
// union of the questions' answers: where its points go). Nothing is tuned per window.
// With EGOGEO_NATIVE=<another build of the addon> the same figures for that build (a before/after
// side by side: run both in one session on one machine).
// Run: npm run build && node bench/speed-profile.mjs [--kitti ROOT] [--configs 00/31,00/10,01+06/31]
//      [--variants engine,three-frame,white-road,jerk-prior,independent,fusion,symmetric,gt]   → bench/results/speed-profile.json
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GEOMETRIC_SUBSET, predictClip } from '../dist/baseline/baseline.js';
import { evenFrames, selectFrames } from '../dist/vo/frames.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evaluate } from '../dist/grade/index.js';
import { loadQuestions } from '../dist/oracle/index.js';
import { dynamicsRmse } from '../dist/vo/errors.js';
import { estimateClip } from '../dist/vo/estimate.js';
import { engineConfig, engineInput } from '../dist/vo/config.js';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({
  options: {
    kitti: { type: 'string', default: new URL('../../shared/data/kitti', import.meta.url).pathname },
    configs: { type: 'string', default: '00/31,01+06/31,00+01+06/31,00/10,01+06/10' },
    variants: { type: 'string', default: 'engine,white-road,jerk-prior,gt' },
    out: { type: 'string', default: new URL('./results/speed-profile.json', import.meta.url).pathname },
  },
});
const VARIANTS = {
  engine: {}, // the engine's defaults (smoother with chained ratios, road errors white or AR(1) per clip; one-sided road fit)
  'three-frame': { bundleScale: false }, // relative scales from three frames only (the engine before the bundle adjustment)
  'white-road': { roadCorrTime: 0 }, // road errors always independent (the smoother before the AR(1) model)
  'jerk-prior': { jerkPsdPrior: 1.6 }, // MAP jerk PSD under the question file's calibration (bench/jerk-prior.mjs)
  independent: { ratioDrift: 0.9 }, // the smoother with the ratios' errors taken as independent
  fusion: { speedSmoother: false },
  symmetric: { roadAboveScale: 1 }, // the engine with the earlier symmetric robust road fit
  gt: { scale: 'gt' },
};
const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);
const rms = (xs) => Math.sqrt(xs.reduce((s, x) => s + x * x, 0) / Math.max(1, xs.length));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Ground-truth mean speed per frame pair, from the window's ground-truth poses. */
function gtSpeeds(clip, gt) {
  const idx = clip.timestamps.map((t) => gt.t.findIndex((g) => Math.abs(g - t) < 1e-6));
  return Float64Array.from({ length: idx.length - 1 }, (_, k) => {
    const a = idx[k], b = idx[k + 1];
    return Math.hypot(gt.x[b] - gt.x[a], gt.y[b] - gt.y[a]) / (gt.t[b] - gt.t[a]);
  });
}

function run(seqs, frames, variant) {
  const preds = [];
  const e = { speed: [], accel: [], jerk: [], z: [], psd: [], level: [], trend: [] };
  const meas = { road: [], ratio: [] }; // per clip: log errors of the scale stage's measurements
  let qa = 0;
  for (const s of seqs) {
    for (const clip0 of kittiClips(readKittiSequence(join(args.kitti, s)))) {
      const clip = selectFrames(clip0, evenFrames(clip0.frames.length, frames));
      const gt = clip0.groundTruth;
      const opts = { ...VARIANTS[variant] };
      if (variant === 'gt') opts.gtSpeeds = gtSpeeds(clip, gt);
      // The run's defaults (both tracking sizes at 10 frames, the road scale only), the variant's options over them.
      const { options, alternative } = engineInput(clip, engineConfig({ scale: opts.scale ?? 'road' }));
      const est = estimateClip(clip, { ...options, ...opts }, alternative && { ...alternative, ...opts });
      preds.push(...predictClip(clip, est.trajectory, questions, null, qa));
      qa += questions.questions.length;
      const d = dynamicsRmse(est.trajectory, gt);
      e.speed.push(d.speed);
      e.accel.push(d.accel);
      e.jerk.push(d.jerk);
      // Calibration: per-frame speed error over the engine's own sigma.
      const sp = est.native.speedProfile;
      const v = gtSpeeds(clip, gt);
      for (let i = 1; i + 1 < sp.speed.length; i++) {
        const truth = (v[i - 1] + v[i]) / 2;
        if (sp.speedSigma[i] > 0) e.z.push((sp.speed[i] - truth) / sp.speedSigma[i]);
      }
      if (sp.jerkPsd > 0) e.psd.push(sp.jerkPsd);
      const pairs = est.native.pairs;
      const dt = (k) => clip.timestamps[k + 1] - clip.timestamps[k];
      meas.road.push(pairs.map((p, k) => (p.roadDistance > 0 && v[k] > 0.3 ? Math.log(p.roadDistance / (v[k] * dt(k))) : NaN)));
      meas.ratio.push(pairs.map((p, k) => (k > 0 && p.ratioSigma > 0 && v[k] > 0.3 && v[k - 1] > 0.3 ? p.logRatio - Math.log((v[k] * dt(k)) / (v[k - 1] * dt(k - 1))) : NaN)));
      // The distance over the window against ground truth (log ratio: its level) and the second
      // half's over the first half's (its trend), where the vehicle moves at least 3 m.
      const est2 = est.native.pairs.map((p) => p.distance), gt2 = Array.from(v, (x, k) => x * dt(k));
      const h = Math.floor(est2.length / 2);
      const sum = (xs, a, b) => xs.slice(a, b).reduce((t, x) => t + x, 0);
      const [e1, e2, g1, g2] = [sum(est2, 0, h), sum(est2, h), sum(gt2, 0, h), sum(gt2, h)];
      if (g1 + g2 >= 3 && g1 > 0.5 && g2 > 0.5 && e1 > 0 && e2 > 0) {
        e.level.push(Math.log((e1 + e2) / (g1 + g2)));
        e.trend.push(Math.log(e2 / e1) - Math.log(g2 / g1));
      }
    }
  }
  const all = evaluate(preds, questions);
  const sub = evaluate(preds.filter((p) => subset.has(p.question_id)), questions);
  const classes = {};
  for (const p of preds) {
    const o = String(p.oracle_label).toLowerCase();
    const c = (classes[o] ??= { n: 0, hit: 0 });
    c.n++;
    c.hit += String(p.model_answer).toLowerCase() === o ? 1 : 0;
  }
  return {
    clips: preds.length / questions.questions.length,
    subsetBalancedAcc: sub.global.balanced_acc,
    allBalancedAcc: all.global.balanced_acc,
    perQuestion: Object.fromEntries(Object.entries(all.per_question).map(([q, m]) => [q, m.balanced_acc])),
    speedRmse: rms(e.speed),
    accelRmse: rms(e.accel),
    jerkRmse: rms(e.jerk),
    speedZRms: e.z.length ? rms(e.z) : null,
    medianJerkPsd: e.psd.length ? median(e.psd) : null,
    distanceLogErrorMedian: e.level.length ? median(e.level) : null,
    distanceLogErrorRms: e.level.length ? rms(e.level) : null,
    halfRatioLogErrorRms: e.trend.length ? rms(e.trend) : null,
    measurements: { road: errorStats(meas.road), ratio: errorStats(meas.ratio) },
    classRecall: Object.fromEntries(Object.entries(classes).sort().map(([c, { n, hit }]) => [c, { n, recall: hit / n }])),
  };
}

/** sd, MAD-sigma and lag-1 correlation of per-clip error series (NaN = no measurement). */
function errorStats(series) {
  const xs = series.flat().filter(Number.isFinite);
  if (!xs.length) return null;
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / xs.length);
  const med = median(xs);
  const mad = 1.4826 * median(xs.map((x) => Math.abs(x - med)));
  let num = 0, den = 0;
  for (const s of series)
    for (let k = 0; k < s.length; k++) {
      if (!Number.isFinite(s[k])) continue;
      den += (s[k] - m) ** 2;
      if (k > 0 && Number.isFinite(s[k - 1])) num += (s[k] - m) * (s[k - 1] - m);
    }
  return { n: xs.length, sd, mad, lag1: den > 0 ? num / den : null };
}

const results = {};
for (const c of args.configs.split(',')) {
  const [seq, frames] = c.split('/');
  for (const v of args.variants.split(',')) {
    const r = run(seq.split('+'), Number(frames), v);
    results[`${c} ${v}`] = r;
    const f = (x) => (x == null ? '  -  ' : x.toFixed(3));
    const ms = (m) => (m ? `sd ${f(m.sd)} MAD ${f(m.mad)} lag-1 ${f(m.lag1)}` : '-');
    const weak = Object.entries(r.classRecall).filter(([, c]) => c.recall < 0.9).map(([k, c]) => `${k} ${Math.round(c.recall * c.n)}/${c.n}`);
    console.log(
      `${c.padEnd(10)} ${v.padEnd(10)} clips ${r.clips}  subset ${f(r.subsetBalancedAcc)}  all14 ${f(r.allBalancedAcc)}  speed ${f(r.speedRmse)} m/s  accel ${f(r.accelRmse)} m/s²  jerk ${f(r.jerkRmse)} m/s³  z-rms ${f(r.speedZRms)}  q ${f(r.medianJerkPsd)}  distance log error median ${f(r.distanceLogErrorMedian)} rms ${f(r.distanceLogErrorRms)}, halves ${f(r.halfRatioLogErrorRms)}\n` +
        `${''.padEnd(22)}road distances: ${ms(r.measurements.road)}; relative scales: ${ms(r.measurements.ratio)}\n` +
        `${''.padEnd(22)}classes under 90% recall: ${weak.join(', ') || 'none'}`,
    );
  }
}
const keys = Object.keys(results);
console.log('\nper question (balanced accuracy): ' + keys.join(' | '));
for (const q of Object.keys(results[keys[0]].perQuestion)) {
  console.log(`${q.padEnd(28)} ${keys.map((k) => (results[k].perQuestion[q] ?? NaN).toFixed(3)).join('  ')}${subset.has(q) ? '  (subset)' : ''}`);
}
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(args.out, JSON.stringify({ native: process.env.EGOGEO_NATIVE ?? 'build/Release', ...measuredWith(), results }, null, 2) + '\n');
