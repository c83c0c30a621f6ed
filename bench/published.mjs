// EgoDyn-Bench as published, end to end: `egogeo run` over a published root (nuScenes clips through
// the nuScenes tables, CARLA clips from carla_videos_<domain>/), once per CARLA domain, graded
// against the oracle's answers per domain (pooled balanced accuracy, 6-question subset and all 14),
// the runs' clips/s, and the engine's ms per frame at 1600×900 (nuScenes' camera size: KITTI frames
// resized) beside KITTI's own size, in the same process.
// At the published 10 frames, per domain: how many clips are off by more than 3 m/s in speed and
// whether the quality verdict flags them, and whether any is written as standing still while moving.
// Run: npm run build && node bench/published.mjs [--root DIR] [--workers N] [--resolution auto|half|full (the 10-frame runs')]
//      [--out FILE]  → bench/results/published.json
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { GEOMETRIC_SUBSET } from '../dist/baseline/baseline.js';
import { readCalib } from '../dist/datasets/kitti.js';
import { evaluate } from '../dist/grade/index.js';
import { qualityFromTum, readTum } from '../dist/io/trajectories.js';
import { processClip } from '../dist/native/index.js';
import { loadQuestions } from '../dist/oracle/index.js';
import { measuredWith } from './lib/provenance.mjs';
import { speedRmse } from './lib/speed-rmse.mjs';

const { values: args } = parseArgs({
  options: {
    root: { type: 'string', default: new URL('../../shared/data/published', import.meta.url).pathname },
    workers: { type: 'string', default: '2' },
    kitti: { type: 'string', default: new URL('../../shared/data/kitti/00', import.meta.url).pathname },
    resolution: { type: 'string', default: 'auto' },
    out: { type: 'string', default: new URL('./results/published.json', import.meta.url).pathname },
  },
});
const BIN = new URL('../bin/egogeo.js', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-published-'));
const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);
const readJsonl = (p) => readFileSync(p, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

function grade(preds) {
  const all = evaluate(preds, questions);
  const six = evaluate(preds.filter((p) => subset.has(p.question_id)), questions);
  return {
    clips: new Set(preds.map((p) => p.clip_id)).size,
    bacc6: six.global.balanced_acc,
    bacc14: all.global.balanced_acc,
    acc14: all.global.accuracy,
    perQuestion: Object.fromEntries(Object.entries(all.per_question).map(([q, m]) => [q, m.balanced_acc])),
  };
}

// 1. Both leaderboard runs over the published root.
const cameras = join(tmp, 'cameras.json');
writeFileSync(cameras, JSON.stringify({ carla: { hfov_deg: 90, height: 1.65 } }));
const runs = {};
const domains = {};
for (const domain of ['simulation', 'transferred']) {
  const out = join(tmp, `${domain}.jsonl`);
  const argv = [BIN, 'run', '--dataset', join(args.root, 'egodyn-bench'), '--nuscenes-root', join(args.root, 'nuscenes'), '--carla-domain', domain,
    '--cameras', cameras, '--cache', join(tmp, 'cache'), '--questions', 'all', '--workers', args.workers, '--no-progress', '-o', out];
  const t0 = performance.now();
  const r = spawnSync(process.execPath, argv, { encoding: 'utf8' });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) {
    console.error(r.stderr);
    process.exit(1);
  }
  const preds = readJsonl(out);
  const clips = new Set(preds.map((p) => p.clip_id)).size;
  runs[domain] = { clips, seconds, clipsPerSecond: clips / seconds, model: JSON.parse(readFileSync(`${out}.manifest.json`, 'utf8')).model };
  domains[`carla ${domain}`] = grade(preds.filter((p) => p.source === 'carla'));
  if (domain === 'simulation') domains.nuscenes = grade(preds.filter((p) => p.source === 'nuscenes'));
  else {
    // nuScenes clips are the same in both runs: their answers must be too.
    const a = readJsonl(join(tmp, 'simulation.jsonl')).filter((p) => p.source === 'nuscenes').map((p) => p.model_answer).join();
    const b = preds.filter((p) => p.source === 'nuscenes').map((p) => p.model_answer).join();
    runs.nuscenesIdentical = a === b;
  }
}

// 1b. The published baselines' 10 frames: never silent. Per clip the speed RMSE against the
// ground truth the run writes beside each estimate (<clip>.gt.tum, the same timestamps), whether
// the clip's quality verdict flags it, and whether it was written as (nearly) standing still while
// the truth moves.
const silent = {};
for (const domain of ['simulation', 'transferred']) {
  const out = join(tmp, `${domain}-10.jsonl`);
  const argv = [BIN, 'run', '--dataset', join(args.root, 'egodyn-bench'), '--nuscenes-root', join(args.root, 'nuscenes'), '--carla-domain', domain,
    '--cameras', cameras, '--cache', join(tmp, 'cache'), '--frames', '10', '--resolution', args.resolution, '--questions', 'subset', '--workers', args.workers, '--no-progress', '-o', out];
  const r = spawnSync(process.execPath, argv, { encoding: 'utf8' });
  if (r.status !== 0) {
    console.error(r.stderr);
    process.exit(1);
  }
  const dir = `${out}.trajectories`;
  const row = { clips: 0, rmseOver3: 0, rmseOver3Flagged: 0, flagged: 0, standingWhileMoving: 0, worstUnflaggedRmse: 0 };
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.gt.tum'))) {
    const id = f.slice(0, -'.gt.tum'.length);
    const g = readTum(join(dir, f)), e = readTum(join(dir, `${id}.tum`));
    const speeds = (t) => Array.from({ length: t.t.length - 1 }, (_, k) => Math.hypot(t.x[k + 1] - t.x[k], t.y[k + 1] - t.y[k]) / (t.t[k + 1] - t.t[k]));
    const gs = speeds(g), es = speeds(e);
    const rmse = speedRmse(e, g);
    const length = (v, t) => v.reduce((a, x, k) => a + x * (t.t[k + 1] - t.t[k]), 0);
    const q = qualityFromTum(readFileSync(join(dir, `${id}.tum`), 'utf8'));
    const flagged = q !== null && q.verdict !== 'ok';
    row.clips++;
    if (flagged) row.flagged++;
    if (rmse > 3) {
      row.rmseOver3++;
      if (flagged) row.rmseOver3Flagged++;
    }
    if (!flagged) row.worstUnflaggedRmse = Math.max(row.worstUnflaggedRmse, rmse);
    if (length(gs, g) > 3 && length(es, e) < 0.05 * length(gs, g)) row.standingWhileMoving++;
  }
  silent[domain] = row;
}

// 2. ms per frame at 1600×900 against KITTI's own 1241×376, same clip, same process, one thread.
const calib = readCalib(join(args.kitti, 'calib.txt'));
const times = readFileSync(join(args.kitti, 'times.txt'), 'utf8').trim().split('\n').slice(0, 31).map(Number);
const src = Array.from({ length: 31 }, (_, i) => join(args.kitti, 'image_0', `${String(i).padStart(6, '0')}.jpg`));
const meta = await sharp(src[0]).metadata();
const big = [];
for (const [i, f] of src.entries()) {
  const p = join(tmp, `big_${i}.jpg`);
  await sharp(f).resize(1600, 900, { fit: 'fill' }).jpeg({ quality: 90 }).toFile(p);
  big.push(p);
}
const sx = 1600 / meta.width, sy = 900 / meta.height;
const sizes = {
  [`${meta.width}x${meta.height}`]: { frames: src, intrinsics: calib },
  '1600x900': { frames: big, intrinsics: { fx: calib.fx * sx, fy: calib.fy * sy, cx: calib.cx * sx, cy: calib.cy * sy } },
};
const { native } = await import('../dist/native/index.js');
native().setThreads(1);
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const speed = {};
for (const [name, s] of Object.entries(sizes)) {
  const reps = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    const r = processClip({ frames: s.frames, timestamps: times, intrinsics: s.intrinsics }, { cameraHeight: 1.65 });
    reps.push({ wall: performance.now() - t0, ...r.timing });
  }
  const per = (k) => median(reps.map((r) => r[k])) / 31;
  speed[name] = { msPerFrame: per('wall'), decode: per('decode'), detect: per('detect'), track: per('track'), pose: per('pose'), scale: per('scale') };
}

const f3 = (v) => v.toFixed(3);
console.log(`published layout (${args.root}): egogeo run, all frames, ${args.workers} workers`);
console.log('domain               clips  BAcc 6q  BAcc 14  acc 14');
for (const [d, g] of Object.entries(domains)) console.log(`${d.padEnd(20)} ${String(g.clips).padStart(5)}  ${f3(g.bacc6).padStart(7)}  ${f3(g.bacc14).padStart(7)}  ${f3(g.acc14).padStart(6)}`);
for (const d of ['simulation', 'transferred']) console.log(`run ${d} (${runs[d].model}): ${runs[d].clips} clips in ${runs[d].seconds.toFixed(1)} s = ${runs[d].clipsPerSecond.toFixed(2)} clips/s (process start and the nuScenes join included)`);
console.log(`nuScenes answers identical in both runs: ${runs.nuscenesIdentical}`);
console.log(`\nthe published 10 frames (--frames 10 --resolution ${args.resolution} --questions subset): clips, speed RMSE > 3 m/s (flagged by the quality verdict), flagged, written standing still while moving, worst unflagged RMSE`);
for (const [d, r] of Object.entries(silent)) console.log(`${d.padEnd(12)} ${r.clips} clips: ${r.rmseOver3} (${r.rmseOver3Flagged} flagged), ${r.flagged} flagged, ${r.standingWhileMoving} standing while moving, ${r.worstUnflaggedRmse.toFixed(2)} m/s`);
console.log('\nVO ms per frame (31-frame KITTI 00 clip, one thread, median of 5): size  total  decode  detect  track  pose  scale');
for (const [n, s] of Object.entries(speed)) console.log(`${n.padEnd(10)} ${[s.msPerFrame, s.decode, s.detect, s.track, s.pose, s.scale].map((v) => v.toFixed(2).padStart(6)).join(' ')}`);

mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, JSON.stringify({ date: new Date().toISOString(), ...measuredWith(), root: args.root, workers: Number(args.workers), resolution: args.resolution, domains, runs, tenFrames: silent, speed }, null, 2) + '\n');
rmSync(tmp, { recursive: true, force: true });
