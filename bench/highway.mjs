#!/usr/bin/env node
// CARLA-like highway clips (rendered: `egogeo synth --speed 20:33`, the cruising scenarios at 20-33
// m/s, 2-3.3 m between frames at 10 Hz) through the engine, against the rendered truth: per clip the
// distance error (estimated path length / true - 1, all frames and the published 10), speed RMSE
// on the oracle's 10 Hz grid, the graded answers (6 / 14 questions), and the clips off by more than
// 3 m/s with how many of them the quality verdict (src/vo/quality.ts) flags. Engine option variants run
// side by side on the same clips (`--variants name=json;...`: addon options, and `resolution`, the
// run's --resolution), so an idea is measured against the engine as it is in one run.
//
//   npm run build && node bench/highway.mjs [--clips 40] [--seed 4242] [--speed 20:33] [--variants 'engine={}'] [--concurrency 2] [--out FILE]
// Writes bench/results/highway.json (or --out FILE).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { GEOMETRIC_SUBSET, predictionRecords } from '../dist/baseline/baseline.js';
import { pathLength } from '../dist/core/trajectory.js';
import { readDataset } from '../dist/datasets/benchmark.js';
import { evaluate } from '../dist/grade/index.js';
import { computeDynamics, runOracle } from '../dist/oracle/index.js';
import { groundTruth, synthesize } from '../dist/synth/index.js';
import { engineConfig, engineInput } from '../dist/vo/config.js';
import { estimateClipAsync } from '../dist/vo/estimate.js';
import { loadFrames } from '../dist/vo/frames.js';
import { clipQuality } from '../dist/vo/quality.js';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({
  options: {
    clips: { type: 'string', default: '40' },
    seed: { type: 'string', default: '4242' },
    speed: { type: 'string', default: '20:33' },
    variants: { type: 'string', default: 'engine={}' },
    concurrency: { type: 'string', default: '2' },
    out: { type: 'string', default: new URL('./results/highway.json', import.meta.url).pathname },
  },
});
const CLIPS = Number(args.clips);
const SEED = Number(args.seed);
const SPEED = args.speed.split(':').map(Number);
const VARIANTS = Object.fromEntries(
  args.variants
    .split(';')
    .filter(Boolean)
    .map((v) => {
      const i = v.indexOf('=');
      return [v.slice(0, i), JSON.parse(v.slice(i + 1))];
    }),
);
const CONCURRENCY = Number(args.concurrency);
const subset = new Set(GEOMETRIC_SUBSET);

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function pool(jobs, n) {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < jobs.length) await jobs[next++]();
  }));
}

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-highway-'));
const result = { clips: CLIPS, seed: SEED, speed: SPEED, preset: 'carla', variants: {} };
try {
  const s = await synthesize({ out: join(tmp, 'data'), clips: CLIPS, seed: SEED, preset: 'carla', speed: SPEED, progress: false });
  const { clips } = readDataset(s.dir);
  const truthOf = new Map(s.clips.map((c) => [c.id, groundTruth(c)]));
  for (const [name, extra] of Object.entries(VARIANTS)) {
    const r = {};
    for (const [label, frames] of [['all frames', null], ['10 frames', 10]]) {
      const perClip = new Array(clips.length);
      const records = [];
      await pool(
        clips.map((c, k) => async () => {
          const { resolution, ...vo } = extra;
          const { clip, options, alternative } = engineInput(loadFrames(c), engineConfig({ frames, resolution }));
          const est = await estimateClipAsync(clip, { ...options, ...vo }, alternative && { ...alternative, ...vo });
          const g = truthOf.get(c.id);
          const idx = Array.from(clip.timestamps, (t) => g.t.findIndex((u) => Math.abs(u - t) < 1e-9));
          const gl = pathLength({ x: idx.map((i) => g.x[i]), y: idx.map((i) => g.y[i]) });
          const el = pathLength(est.trajectory);
          const ea = computeDynamics(est.trajectory), ga = computeDynamics(g);
          let se = 0;
          for (let i = 0; i < ea.speed.length; i++) se += (ea.speed[i] - ga.speed[i]) ** 2;
          perClip[k] = { id: c.id, distanceError: el / gl - 1, speedRmse: Math.sqrt(se / ea.speed.length), meanSpeed: gl / (clip.timestamps.at(-1) - clip.timestamps[0]), verdict: clipQuality(est.native, { timestamps: clip.timestamps, sizeRatio: est.sizeRatio }).verdict };
          records.push(...predictionRecords(c, s.questions, runOracle(est.trajectory, s.questions).labels, { qa: c.qa }));
        }),
        CONCURRENCY,
      );
      const errs = perClip.map((p) => p.distanceError);
      const all = evaluate(records, s.questions);
      const sub = evaluate(records.filter((p) => subset.has(p.question_id)), s.questions);
      r[label] = {
        medianDistanceError: median(errs),
        maxAbsDistanceError: Math.max(...errs.map(Math.abs)),
        beyond4pct: errs.filter((e) => Math.abs(e) > 0.04).length,
        medianSpeedRmse: median(perClip.map((p) => p.speedRmse)),
        // Never silent: clips off by more than 3 m/s, and how many of them the quality verdict flags.
        beyond3ms: perClip.filter((p) => p.speedRmse > 3).length,
        beyond3msFlagged: perClip.filter((p) => p.speedRmse > 3 && p.verdict !== 'ok').length,
        flagged: perClip.filter((p) => p.verdict !== 'ok').length,
        subsetBalancedAcc: sub.global.balanced_acc,
        allBalancedAcc: all.global.balanced_acc,
        perClip,
      };
    }
    result.variants[name] = { options: extra, ...r };
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, `${JSON.stringify({ date: new Date().toISOString(), ...measuredWith(), ...result }, null, 1)}\n`);
const pct = (x) => `${(100 * x).toFixed(2)}%`;
console.log(`highway clips: ${CLIPS} rendered CARLA-like (seed ${SEED}, cruise ${SPEED.join('-')} m/s)`);
console.log('variant            frames       median dist err  max |err|  >4%  median speed RMSE  BAcc 6  BAcc 14  >3 m/s (flagged)  flagged');
for (const [name, v] of Object.entries(result.variants)) {
  for (const label of ['all frames', '10 frames']) {
    const r = v[label];
    console.log(`${name.padEnd(18)} ${label.padEnd(11)} ${pct(r.medianDistanceError).padStart(16)} ${pct(r.maxAbsDistanceError).padStart(10)} ${String(r.beyond4pct).padStart(4)} ${r.medianSpeedRmse.toFixed(3).padStart(18)} ${r.subsetBalancedAcc.toFixed(3).padStart(7)} ${r.allBalancedAcc.toFixed(3).padStart(8)} ${`${r.beyond3ms} (${r.beyond3msFlagged})`.padStart(17)} ${String(r.flagged).padStart(8)}`);
  }
}
