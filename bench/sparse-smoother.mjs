// Where a sparse-frame estimate loses against its labels, split in two, on every ../shared set and
// on rendered sets with exact ground truth, at the published 10 frames and at every frame:
//   truth    the ground-truth poses at the frames the estimator sees, through the path step
//            (what sampling alone costs; at every frame: the truth itself);
//   engine   the engine's estimate through the path step (what a run writes);
//   gt-scale the engine with ground-truth speeds (scale 'gt', KITTI only): what the metric scale costs.
// Each is graded against the set's own labels (pooled balanced accuracy, 6-question subset / all
// 14, the reference grader), for each path step in --paths (applied where the frames are sparser
// than the oracle's grid; every frame as it is elsewhere): 'pair-rates' (pair rates at the
// midpoints, linear between: the densifier before issue 67), 'spline-distance' (the same, the
// distance along the path through the natural spline), 'spline' (natural cubic spline through the
// poses, x, y, yaw), 'densify' (what the engine does: vo/densify.ts, its rule picked by the clip's
// speed uncertainty; the truth counts as exact), 'raw' (no path step).
// The engine runs once per clip and set (its native results are kept in --cache); the path steps
// are applied to the same results.
// Run: npm run build && node bench/sparse-smoother.mjs [--sets 00,01+06,published,carla,nus] [--frames 10,all]
//      [--paths pair-rates,smooth] [--cache DIR] [--out bench/results/sparse-smoother.json]
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { GEOMETRIC_SUBSET, predictionRecords } from '../dist/baseline/baseline.js';
import { readDataset } from '../dist/datasets/benchmark.js';
import { pathLength } from '../dist/core/trajectory.js';
import { groundTruthArrays } from '../dist/datasets/groundtruth.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evaluate } from '../dist/grade/index.js';
import { loadQuestions } from '../dist/oracle/index.js';
import { DEFAULT_DYNAMICS } from '../dist/oracle/dynamics.js';
import { runOracle } from '../dist/oracle/oracle.js';
import { synthesize } from '../dist/synth/index.js';
import { densify, denseTimes, fromPairRates, sparseFrames } from '../dist/vo/densify.js';
import { interpolated } from '../dist/audit/sampling.js';
import { estimateClip, speedUncertainty } from '../dist/vo/estimate.js';
import { engineConfig, engineInput } from '../dist/vo/config.js';
import { evenFrames, loadFrames } from '../dist/vo/frames.js';
import { planarFromCameraPoses } from '../dist/vo/planar.js';
import { measuredWith } from './lib/provenance.mjs';

const shared = new URL('../../shared/data', import.meta.url).pathname;
const { values: args } = parseArgs({
  options: {
    sets: { type: 'string', default: '00,01+06,published-sim,published-transferred,carla,nus' },
    frames: { type: 'string', default: '10,all' },
    paths: { type: 'string', default: 'pair-rates,spline,spline-distance,densify' },
    cache: { type: 'string', default: join(tmpdir(), 'egogeo-sparse-smoother') },
    out: { type: 'string', default: new URL('./results/sparse-smoother.json', import.meta.url).pathname },
    level: { type: 'boolean', default: false },
  },
});
const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);
const HZ = DEFAULT_DYNAMICS.hz;
mkdirSync(args.cache, { recursive: true });

/** A set's clips (Clip records as the run reads them). */
async function clipsOf(set) {
  if (set === 'carla' || set === 'nus') {
    const dir = join(args.cache, `rendered-${set}`);
    const preset = set === 'carla' ? 'carla' : 'nuscenes';
    if (!existsSync(join(dir, 'qa.jsonl'))) await synthesize({ out: dir, clips: set === 'carla' ? 40 : 50, seed: 2026, preset, workers: 2, progress: false });
    return readDataset(dir).clips;
  }
  if (set.startsWith('published-')) {
    const domain = set.slice('published-'.length) === 'sim' ? 'simulation' : 'transferred';
    return readDataset(join(shared, 'published', 'egodyn-bench'), { nuscenesRoot: join(shared, 'published', 'nuscenes'), carlaDomain: domain }).clips;
  }
  return set.split('+').flatMap((s) => kittiClips(readKittiSequence(join(shared, 'kitti', s))));
}

/** The clip's labels: its QA answers, else the oracle on its ground truth. */
function truthLabels(c) {
  if (c.qa.length > 0) return Object.fromEntries(c.qa.map((q) => [q.question_id, String(q.answer).toLowerCase()]));
  return runOracle(c.groundTruth, questions).labels;
}

/** The ground truth at the clip's frames (KITTI poses) or on its arrays' grid (npz), as a trajectory. */
function truthPoses(c, full) {
  if (c.groundTruth) return c.groundTruth;
  const a = groundTruthArrays(c).arrays;
  const at = (v) => Float64Array.from(full.timestamps, (t) => interp(a.timestamps, v, t));
  return { id: c.id, t: Float64Array.from(full.timestamps), x: at(a.x), y: at(a.y), yaw: at(a.yaw) };
}
function interp(ts, v, t) {
  let i = 0;
  while (i < ts.length - 2 && ts[i + 1] < t) i++;
  const w = Math.min(1, Math.max(0, (t - ts[i]) / (ts[i + 1] - ts[i])));
  return v[i] + w * (v[i + 1] - v[i]);
}

/** One clip through the engine at `frames` (null: every frame) and `scale`: what the path steps need, kept as JSON. */
function engineRun(c, frames, scale) {
  const full = loadFrames(c);
  const { clip, options, alternative } = engineInput(full, engineConfig({ frames, scale }));
  const est = estimateClip(clip, options, alternative);
  const raw = planarFromCameraPoses(c.id, clip.timestamps, est.native.rotations, est.native.positions);
  const pick = (a) => Array.from(a);
  return { t: pick(raw.t), x: pick(raw.x), y: pick(raw.y), yaw: pick(raw.yaw), pairs: est.native.pairs, profile: { jerkPsd: est.native.speedProfile.jerkPsd, noiseScale: est.native.speedProfile.noiseScale, roadCorrTime: est.native.speedProfile.roadCorrTime } };
}

/**
 * A trajectory through a path step: what the oracle is given. `pairs`: the engine's per-pair
 * results (their speed uncertainty picks densify's rule), null for the ground truth (exact).
 */
function through(path, traj, pairs) {
  const sparse = sparseFrames(traj.t, HZ);
  if (path === 'raw' || !sparse) return traj;
  const times = denseTimes(traj.t, HZ);
  if (path === 'pair-rates') return fromPairRates(traj, times, 'rates');
  if (path === 'spline-distance') return fromPairRates(traj, times, 'spline');
  if (path === 'spline') return interpolated(traj, times, 'spline');
  if (path === 'densify') return densify(traj, HZ, pairs ? speedUncertainty({ pairs }, traj.t) : 0).trajectory;
  throw new Error(`--paths: unknown path step '${path}' (pair-rates, spline-distance, spline, densify, raw)`);
}

function grade(preds) {
  const all = evaluate(preds, questions), six = evaluate(preds.filter((p) => subset.has(p.question_id)), questions);
  return {
    bacc6: six.global.balanced_acc,
    bacc14: all.global.balanced_acc,
    perQuestion: Object.fromEntries(Object.entries(all.per_question).map(([q, m]) => [q, m.balanced_acc])),
  };
}

/** `tr` scaled about its first pose to path length `len`. */
function atLength(tr, len) {
  const f = len / Math.max(1e-9, pathLength(tr));
  return { ...tr, x: tr.x.map((v) => tr.x[0] + f * (v - tr.x[0])), y: tr.y.map((v) => tr.y[0] + f * (v - tr.y[0])) };
}
const toTraj = (id, r) => ({ id, t: Float64Array.from(r.t), x: Float64Array.from(r.x), y: Float64Array.from(r.y), yaw: Float64Array.from(r.yaw) });
const paths = args.paths.split(',');
const results = { ...measuredWith(), paths, sets: {} };
for (const set of args.sets.split(',')) {
  const clips = await clipsOf(set);
  for (const f of args.frames.split(',')) {
    const frames = f === 'all' ? null : Number(f);
    const key = `${set}/${f}`;
    const scales = clips.every((c) => c.groundTruth) ? ['road', 'gt'] : ['road'];
    const runs = {};
    for (const scale of scales) {
      const file = join(args.cache, `${key.replace(/\//g, '_')}_${scale}.json`);
      if (!existsSync(file)) {
        const t0 = performance.now();
        writeFileSync(file, JSON.stringify(clips.map((c) => engineRun(c, frames, scale))));
        console.error(`${key} ${scale}: ${clips.length} clips in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      }
      runs[scale] = JSON.parse(readFileSync(file, 'utf8'));
    }
    const labels = clips.map(truthLabels);
    const truths = clips.map((c) => {
      const full = loadFrames(c);
      const g = truthPoses(c, full);
      const idx = evenFrames(g.t.length, frames ?? g.t.length);
      const pick = (a) => Float64Array.from(idx, (i) => a[i]);
      return { id: c.id, t: pick(g.t), x: pick(g.x), y: pick(g.y), yaw: pick(g.yaw) };
    });
    const row = (results.sets[key] = {});
    const line = [];
    for (const path of paths) {
      const graded = {};
      const records = (trajOf) => clips.flatMap((c, i) => predictionRecords(c, questions, runOracle(trajOf(i), questions).labels, { truth: labels[i], answer: null, qaBase: i * 14 }));
      graded.truth = grade(records((i) => through(path, truths[i], null)));
      for (const scale of scales) graded[scale === 'road' ? 'engine' : 'gt-scale'] = grade(records((i) => through(path, toTraj(clips[i].id, runs[scale][i]), runs[scale][i].pairs)));
      // The engine's path scaled to the truth's length over the clip: what one global scale error costs, the rest being the speeds' shape.
      if (args.level) graded['gt-level'] = grade(records((i) => through(path, atLength(toTraj(clips[i].id, runs.road[i]), pathLength(truths[i])), runs.road[i].pairs)));
      row[path] = graded;
      line.push(`${path}: ${Object.entries(graded).map(([k, g]) => `${k} ${g.bacc6.toFixed(3)}/${g.bacc14.toFixed(3)}`).join(' ')}`);
    }
    console.log(`${key.padEnd(26)} ${line.join(' | ')}`);
  }
}
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');
