// How the relative scales' errors accumulate along a clip, on every set with ground truth at the
// engine's frames, from the engine's own results as bench/sparse-smoother.mjs keeps them in its
// cache (run that first). With perfect speed shape the engine would answer 0.97 / 1.00 of the 14
// questions on KITTI 00 / 01+06 at all frames instead of 0.88 / 0.84, while the truth's level
// alone changes nothing (sparse-smoother --level): the loss is the shape, and the shape is the
// chain of three-frame ratios (bench/studies/43). Per set and frame count:
//   ratios   robust sd (1.4826 MAD), median and mean of each ratio's log error against the truth's pair
//            lengths (KITTI: steadied, bench/lib/steadied.mjs; pairs shorter than 0.5 m left out)
//   span N   the same for the sum of N consecutive ratios' errors: what a speed read N pairs
//            later has accumulated. White per-pair errors (the smoother's u) keep it flat in N; a
//            random walk (its drift share) grows it as sqrt(N); a bias grows the mean as N
//   shape    rms of the log distance error with each clip's level removed: the engine's fused
//            distances and the bare chain (running sum of the ratios), clips with every ratio valid
// Run: npm run build && node bench/sparse-smoother.mjs && node bench/chain-drift.mjs
//      [--sets 00,01+06,published-sim,published-transferred,carla,nus] [--frames 10,all] [--cache DIR]
//      [--out bench/results/chain-drift.json]
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { measuredWith } from './lib/provenance.mjs';
import { clipsOf, truthLengths } from './lib/truth-sets.mjs';

const { values: args } = parseArgs({
  options: {
    sets: { type: 'string', default: '00,01+06,published-sim,published-transferred,carla,nus' },
    frames: { type: 'string', default: '10,all' },
    cache: { type: 'string', default: join(tmpdir(), 'egogeo-sparse-smoother') },
    out: { type: 'string', default: new URL('./results/chain-drift.json', import.meta.url).pathname },
  },
});
const SPANS = [1, 2, 4, 8, 16, 24];
const MIN_LENGTH = 0.5; // m: shorter pairs' lengths are mostly the truth's own jitter

const median = (a) => {
  const s = [...a].sort((p, q) => p - q);
  return s.length % 2 ? s[s.length >> 1] : 0.5 * (s[s.length / 2 - 1] + s[s.length / 2]);
};
const robustSd = (a) => {
  const m = median(a);
  return 1.4826 * median(a.map((v) => Math.abs(v - m)));
};
const mean = (a) => a.reduce((s, v) => s + v, 0) / a.length;
const rms = (a) => Math.sqrt(a.reduce((s, v) => s + v * v, 0) / a.length);
const demean = (a) => {
  const m = mean(a);
  return a.map((v) => v - m);
};
const r4 = (v) => Math.round(v * 1e5) / 1e5;

const results = { ...measuredWith(), minLength: MIN_LENGTH, sets: {} };
for (const set of args.sets.split(',')) {
  const clips = clipsOf(set, args.cache);
  for (const f of args.frames.split(',')) {
    const file = join(args.cache, `${set}_${f}_road.json`);
    if (!existsSync(file)) {
      console.error(`${set}/${f}: no ${file} (run bench/sparse-smoother.mjs --sets ${set} --frames ${f} first); skipped`);
      continue;
    }
    const runs = JSON.parse(readFileSync(file, 'utf8'));
    const errs = [], spans = Object.fromEntries(SPANS.map((n) => [n, []])), fused = [], chain = [];
    clips.forEach((c, i) => {
      const r = runs[i];
      const d = truthLengths(c, r.t);
      if (!d) return;
      const e = r.pairs.map((p, k) => (k >= 1 && p.ratioSigma > 0 && d[k] > MIN_LENGTH && d[k - 1] > MIN_LENGTH ? p.logRatio - Math.log(d[k] / d[k - 1]) : NaN));
      errs.push(...e.filter((v) => !Number.isNaN(v)));
      for (let a = 1; a < e.length; a++) {
        let s = 0;
        for (let b = a; b < e.length && !Number.isNaN(e[b]); b++) {
          s += e[b];
          spans[b - a + 1]?.push(s);
        }
      }
      if (e.slice(1).every((v) => !Number.isNaN(v)) && d[0] > MIN_LENGTH && r.pairs.every((p) => p.distance > 0)) {
        fused.push(...demean(r.pairs.map((p, k) => Math.log(p.distance / d[k]))));
        let s = 0;
        chain.push(...demean(r.pairs.map((p, k) => (s += k ? p.logRatio : 0) - Math.log(d[k]))));
      }
    });
    if (errs.length === 0) continue;
    const row = {
      ratios: { n: errs.length, robustSd: r4(robustSd(errs)), median: r4(median(errs)), mean: r4(mean(errs)), meanSe: r4(Math.sqrt(mean(demean(errs).map((v) => v * v)) / errs.length)) },
      spans: Object.fromEntries(Object.entries(spans).filter(([, a]) => a.length >= 20).map(([n, a]) => [n, { n: a.length, robustSd: r4(robustSd(a)), mean: r4(mean(a)) }])),
      shape: { clips: fused.length ? fused.length / runs[0].pairs.length : 0, fusedRms: fused.length ? r4(rms(fused)) : null, chainRms: chain.length ? r4(rms(chain)) : null },
    };
    results.sets[`${set}/${f}`] = row;
    const sp = Object.entries(row.spans).map(([n, s]) => `N=${n} ${(100 * s.robustSd).toFixed(2)}/${(100 * s.mean).toFixed(2)}`).join('  ');
    console.log(`${`${set}/${f}`.padEnd(26)} ratio sd ${(100 * row.ratios.robustSd).toFixed(2)}% median ${(100 * row.ratios.median).toFixed(3)}% mean ${(100 * row.ratios.mean).toFixed(3)}±${(100 * row.ratios.meanSe).toFixed(3)}% | span sd/mean %: ${sp} | shape rms fused ${row.shape.fusedRms === null ? '-' : (100 * row.shape.fusedRms).toFixed(2)}% chain ${row.shape.chainRms === null ? '-' : (100 * row.shape.chainRms).toFixed(2)}%`);
  }
}
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');
