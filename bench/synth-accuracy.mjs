#!/usr/bin/env node
// The geometric baseline on rendered synthetic clips: VO (with the renderer's intrinsics and
// camera height) → oracle → answers, graded by the reference-exact grader. Pooled balanced
// accuracy on the 6-question geometric subset (target >= 0.85) and on all 14 questions, per
// question and per source, for the estimator seeing every frame and the published baselines' 10
// evenly spaced frames, plus speed / yaw-rate RMSE of the estimated dynamics.
//
//   npm run build && node bench/synth-accuracy.mjs [--clips 100] [--seed 2026] [--preset carla|nuscenes|mixed] [--workers 2]
// Writes bench/results/synth-accuracy.json (one entry per preset; a run replaces its preset's entry).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GEOMETRIC_SUBSET } from '../dist/baseline/baseline.js';
import { evaluate } from '../dist/grade/index.js';
import { computeDynamics } from '../dist/oracle/index.js';
import { readDataset } from '../dist/datasets/benchmark.js';
import { parseTum } from '../dist/io/trajectories.js';
import { DEFAULT_QUESTIONS_PATH } from '../dist/oracle/index.js';
import { answerClips } from '../dist/run/clips.js';
import { engineConfig } from '../dist/vo/config.js';
import { groundTruth, labelDistribution, synthesize } from '../dist/synth/index.js';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({
  options: { clips: { type: 'string', default: '100' }, seed: { type: 'string', default: '2026' }, preset: { type: 'string', default: 'carla' }, workers: { type: 'string', default: '2' } },
});
const CLIPS = Number(args.clips);
const SEED = Number(args.seed);
const PRESET = args.preset;
const WORKERS = Number(args.workers);
const subset = new Set(GEOMETRIC_SUBSET);

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-synth-'));
const result = { ...measuredWith(), clips: CLIPS, seed: SEED, preset: PRESET, workers: WORKERS, target: { subsetBalancedAcc: 0.85 } };
try {
  const s = await synthesize({ out: join(tmp, 'data'), clips: CLIPS, seed: SEED, preset: PRESET, workers: WORKERS, progress: false });
  result.render = { seconds: s.seconds, frames: s.frames, framesPerSecond: s.frames / s.seconds };
  result.answerDistribution = labelDistribution(s.clips, s.questions);

  // The rendered set read and answered like any dataset (src/run/clips.ts), sources per preset.
  const { clips } = readDataset(s.dir);
  const presetOf = new Map(s.clips.map((c) => [c.id, c.preset]));
  for (const c of clips) c.source = `synthetic-${presetOf.get(c.id)}`;
  const runs = {};
  for (const [name, frames] of [['all frames', null], ['10 frames', 10]]) {
    const run = await answerClips(clips, { questions: 'all', engine: engineConfig({ frames }), config: DEFAULT_QUESTIONS_PATH, questionSet: s.questions, workers: WORKERS, progress: false });
    if (run.failed.length) throw new Error(`${run.failed[0].clip_id}: ${run.failed[0].reason}`);
    runs[name] = run;
    run.predictions = run.records;
    const all = evaluate(run.predictions, s.questions);
    const sub = evaluate(run.predictions.filter((p) => subset.has(p.question_id)), s.questions);
    result[name] = {
      subsetBalancedAcc: sub.global.balanced_acc,
      subsetAccuracy: sub.global.accuracy,
      allBalancedAcc: all.global.balanced_acc,
      allAccuracy: all.global.accuracy,
      voSeconds: run.seconds,
      voMsPerClip: run.outputs.reduce((a, c) => a + c.ms.vo, 0) / run.outputs.length,
      perQuestion: Object.fromEntries(
        s.questions.questions.map((q) => [q.id, { balanced_acc: all.per_question[q.id]?.balanced_acc, accuracy: all.per_question[q.id]?.accuracy, subset: subset.has(q.id) }]),
      ),
      perSource: Object.fromEntries(Object.entries(all.per_source).map(([k, m]) => [k, { balanced_acc: m.balanced_acc, accuracy: m.accuracy, subsetBalancedAcc: sub.per_source[k]?.balanced_acc }])),
      perScenario: perScenario(s.clips, run.predictions),
    };
  }

  // Dynamics errors of the all-frames estimate against the ground truth (oracle arrays, 10 Hz grid).
  let se = 0, ye = 0, n = 0;
  for (const [i, c] of s.clips.entries()) {
    const a = computeDynamics(parseTum(runs['all frames'].outputs[i].tum)), g = computeDynamics(groundTruth(c));
    for (let i = 0; i < a.speed.length; i++) {
      se += (a.speed[i] - g.speed[i]) ** 2;
      ye += (a.yaw_rate[i] - g.yaw_rate[i]) ** 2;
      n++;
    }
  }
  result['all frames'].speedRmse = Math.sqrt(se / n);
  result['all frames'].yawRateRmse = Math.sqrt(ye / n);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

/** Subset accuracy per scenario kind (where the estimator struggles). */
function perScenario(clips, preds) {
  const byClip = new Map(clips.map((c) => [c.id, c.scenario.replace(/-(left|right)$/, '')]));
  const acc = {};
  for (const p of preds) {
    if (!subset.has(p.question_id)) continue;
    const k = byClip.get(p.clip_id);
    acc[k] ??= { n: 0, correct: 0 };
    acc[k].n++;
    if (p.model_answer === p.oracle_label) acc[k].correct++;
  }
  return Object.fromEntries(Object.entries(acc).map(([k, v]) => [k, { clips: v.n / subset.size, subsetAccuracy: v.correct / v.n }]));
}

mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const out = new URL('./results/synth-accuracy.json', import.meta.url);
const previous = existsSync(out) ? JSON.parse(readFileSync(out, 'utf8')) : {};
const merged = { ...(previous.preset === undefined ? previous : {}), [PRESET]: result };
writeFileSync(out, `${JSON.stringify(merged, null, 2)}\n`);
const f3 = (x) => (x === undefined ? '  -  ' : x.toFixed(3));
console.log(`synthetic ${PRESET} clips: ${CLIPS} (seed ${SEED}), rendered at ${result.render.framesPerSecond.toFixed(1)} frames/s`);
console.log('estimator     BAcc subset  BAcc all14  acc subset  acc all14  VO ms/clip');
for (const name of ['all frames', '10 frames']) {
  const r = result[name];
  console.log(`${name.padEnd(12)}  ${f3(r.subsetBalancedAcc).padStart(11)}  ${f3(r.allBalancedAcc).padStart(10)}  ${f3(r.subsetAccuracy).padStart(10)}  ${f3(r.allAccuracy).padStart(9)}  ${r.voMsPerClip.toFixed(0).padStart(10)}`);
}
console.log(`all frames: speed RMSE ${result['all frames'].speedRmse.toFixed(3)} m/s, yaw-rate RMSE ${result['all frames'].yawRateRmse.toFixed(4)} rad/s`);
console.log('\nper question (balanced accuracy): all frames | 10 frames');
for (const [q, m] of Object.entries(result['all frames'].perQuestion)) {
  console.log(`${q.padEnd(28)} ${f3(m.balanced_acc)}   ${f3(result['10 frames'].perQuestion[q].balanced_acc)}${m.subset ? '   (subset)' : ''}`);
}
console.log('\nper scenario (subset accuracy, all frames):');
for (const [k, v] of Object.entries(result['all frames'].perScenario)) console.log(`  ${k.padEnd(24)} ${String(v.clips).padStart(3)} clips  ${f3(v.subsetAccuracy)}`);
