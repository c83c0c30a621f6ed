#!/usr/bin/env node
// Does the quality verdict separate? (src/vo/quality.ts; issue 53.) Every clip of each set through
// the run's own path (`answerClips`: the worker pool, `engineInput`, resolution auto), its verdict
// as the run writes it, and its speed RMSE against the ground truth at the same timestamps (the
// estimate's TUM poses, as bench/published.mjs counts them). Per set and frame count: clips
// flagged (weak, failed) and their share, the median speed RMSE of the flagged and the unflagged
// clips and their ratio, the clips off by more than 3 m/s and how many are flagged, the worst
// unflagged clip. Issue 53's bar, at the published 10 frames on the stand-in: at most a third
// flagged, the flagged median at least twice the unflagged.
//
// Sets: 'published' (the stand-in in its published layout, both CARLA domains, the 27 nuScenes
// clips counted once in the pooled row), 'kitti' (the 64 KITTI windows in the benchmark layout),
// 'rendered' (sets `egogeo synth` renders here: --render preset:seed:clips[:min-max speed], comma-separated).
//
//   npm run build && node bench/verdict.mjs [--sets published,kitti,rendered] [--frames 10,all]
//     [--root DIR] [--kitti DIR] [--render carla:5151:40:20-33,mixed:7:60] [--workers 2] [--out FILE]
// Writes bench/results/verdict.json (or --out FILE).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { readDataset } from '../dist/datasets/benchmark.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../dist/oracle/index.js';
import { answerClips } from '../dist/run/clips.js';
import { synthesize } from '../dist/synth/index.js';
import { engineConfig } from '../dist/vo/config.js';
import { WEAK_SPEED_UNCERTAINTY } from '../dist/vo/quality.js';
import { measuredWith } from './lib/provenance.mjs';
import { meanSpeed, speedRmse } from './lib/speed-rmse.mjs';

const { values: args } = parseArgs({
  strict: true,
  options: {
    sets: { type: 'string', default: 'published,kitti,rendered' },
    frames: { type: 'string', default: '10,all' },
    root: { type: 'string', default: new URL('../../shared/data/published', import.meta.url).pathname },
    kitti: { type: 'string', default: new URL('../../shared/data/egodyn_kitti', import.meta.url).pathname },
    render: { type: 'string', default: 'carla:5151:40:20-33,mixed:7:60' },
    workers: { type: 'string', default: '2' },
    out: { type: 'string', default: new URL('./results/verdict.json', import.meta.url).pathname },
  },
});
const SETS = args.sets.split(',').filter(Boolean);
for (const s of SETS) if (!['published', 'kitti', 'rendered'].includes(s)) throw new Error(`--sets: unknown set '${s}' (published, kitti, rendered)`);
const FRAMES = args.frames.split(',').map((f) => {
  if (f === 'all') return null;
  const n = Number(f);
  if (!Number.isInteger(n) || n < 2) throw new Error(`--frames: 'all' or an integer >= 2, got '${f}'`);
  return n;
});
const WORKERS = Number(args.workers);
const RENDER = args.render.split(',').filter(Boolean).map((spec) => {
  const [preset, seed, clips, speed] = spec.split(':');
  if (!['carla', 'nuscenes', 'mixed'].includes(preset) || !Number.isInteger(Number(seed)) || !(Number(clips) > 0)) throw new Error(`--render: preset:seed:clips[:min-max], got '${spec}'`);
  const sp = speed ? speed.split('-').map(Number) : undefined;
  if (sp && (sp.length !== 2 || !sp.every((v) => v > 0))) throw new Error(`--render: speed as min-max in m/s, got '${speed}'`);
  return { name: `rendered ${preset} seed ${seed}${sp ? ` at ${sp.join('-')} m/s` : ''}`, preset, seed: Number(seed), clips: Number(clips), speed: sp };
});

const questions = loadQuestions();
const median = (v) => {
  if (v.length === 0) return null;
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Every clip's verdict and speed RMSE at one frame count, through the run's path. */
async function measure(clips, frames, label) {
  const run = await answerClips(clips, { questions: 'subset', engine: engineConfig({ frames }), config: DEFAULT_QUESTIONS_PATH, questionSet: questions, workers: WORKERS, progress: false, label });
  if (run.failed.length) throw new Error(`${label}: ${run.failed[0].clip_id}: ${run.failed[0].reason}`);
  return run.outputs.map((o, i) => {
    if (!o.gtTum) throw new Error(`${label}: ${o.id} has no ground truth at its timestamps`);
    const q = o.quality;
    return { id: o.id, source: clips[i].source, rmse: speedRmse(o.tum, o.gtTum), meanSpeed: meanSpeed(o.gtTum), verdict: q.verdict, speed_uncertainty: q.speed_uncertainty ?? null, ...(q.size_ratio !== undefined ? { size_ratio: q.size_ratio } : {}), reasons: q.reasons };
  });
}

/** The separation over a set of clips. */
function summary(perClip) {
  const flagged = perClip.filter((c) => c.verdict !== 'ok'), unflagged = perClip.filter((c) => c.verdict === 'ok');
  const mf = median(flagged.map((c) => c.rmse)), mu = median(unflagged.map((c) => c.rmse));
  const over3 = perClip.filter((c) => c.rmse > 3);
  return {
    clips: perClip.length,
    flagged: flagged.length,
    weak: flagged.filter((c) => c.verdict === 'weak').length,
    failed: flagged.filter((c) => c.verdict === 'failed').length,
    flaggedShare: flagged.length / perClip.length,
    medianRmseFlagged: mf,
    medianRmseUnflagged: mu,
    ratio: mf !== null && mu ? mf / mu : null,
    over3ms: over3.length,
    over3msFlagged: over3.filter((c) => c.verdict !== 'ok').length,
    worstUnflaggedRmse: unflagged.length ? Math.max(...unflagged.map((c) => c.rmse)) : null,
  };
}

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-verdict-'));
const rows = [];
try {
  const sets = [];
  if (SETS.includes('published')) {
    const cameras = join(tmp, 'cameras.json');
    writeFileSync(cameras, JSON.stringify({ carla: { hfov_deg: 90, height: 1.65 } }));
    for (const domain of ['simulation', 'transferred']) {
      const { clips } = readDataset(join(args.root, 'egodyn-bench'), { nuscenesRoot: join(args.root, 'nuscenes'), carlaDomain: domain, cameras, cacheDir: join(tmp, 'cache') });
      sets.push({ name: `published ${domain}`, group: 'published', clips });
    }
  }
  if (SETS.includes('kitti')) sets.push({ name: 'kitti windows', clips: readDataset(args.kitti).clips });
  if (SETS.includes('rendered')) {
    for (const r of RENDER) {
      const s = await synthesize({ out: join(tmp, `render-${r.preset}-${r.seed}`), clips: r.clips, seed: r.seed, preset: r.preset, ...(r.speed ? { speed: r.speed } : {}), workers: WORKERS, progress: false });
      sets.push({ name: r.name, clips: readDataset(s.dir).clips });
    }
  }
  for (const frames of FRAMES) {
    const label = frames === null ? 'all frames' : `${frames} frames`;
    const pooled = new Map();
    for (const set of sets) {
      const perClip = await measure(set.clips, frames, `${set.name}, ${label}`);
      rows.push({ set: set.name, frames: label, ...summary(perClip), perClip });
      // The stand-in's nuScenes clips are the same frames in both domains: counted once when pooled
      // (a CARLA clip id names a different video in each domain).
      if (set.group) for (const c of perClip) pooled.set(c.source === 'nuscenes' ? `nuscenes/${c.id}` : `${set.name}/${c.id}`, c);
    }
    if (pooled.size > 0) rows.push({ set: 'published, both domains (distinct clips)', frames: label, ...summary([...pooled.values()]) });
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const bar = rows.find((r) => r.set.startsWith('published, both') && r.frames === '10 frames');
const result = {
  date: new Date().toISOString(),
  ...measuredWith(),
  rule: { weakSpeedUncertainty: WEAK_SPEED_UNCERTAINTY, sizes: 'the two tracking sizes more than a third apart', failed: 'unchanged (scale collapsed, or most pairs without a pose)' },
  workers: WORKERS,
  // Issue 53: at 10 frames on the stand-in, at most a third flagged and the flagged median at least twice the unflagged.
  issueBar: bar ? { flaggedShare: bar.flaggedShare, ratio: bar.ratio, met: bar.flaggedShare <= 1 / 3 && bar.ratio !== null && bar.ratio >= 2 } : null,
  rows,
};
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, `${JSON.stringify(result, null, 1)}\n`);

const f2 = (v) => (v === null ? '–' : v.toFixed(2));
console.log(`quality verdict: weak above ${(100 * WEAK_SPEED_UNCERTAINTY).toFixed(1)}% mean relative speed sigma, or the two sizes more than a third apart; failed unchanged`);
console.log('set                                            frames      clips  flagged (weak/failed)  share  median RMSE flagged / unflagged  ratio  >3 m/s (flagged)  worst unflagged');
for (const r of rows) {
  console.log(`${r.set.padEnd(46)} ${r.frames.padEnd(10)} ${String(r.clips).padStart(6)}  ${`${r.flagged} (${r.weak}/${r.failed})`.padStart(21)}  ${(100 * r.flaggedShare).toFixed(0).padStart(4)}%  ${`${f2(r.medianRmseFlagged)} / ${f2(r.medianRmseUnflagged)}`.padStart(31)}  ${(r.ratio === null ? '–' : `${r.ratio.toFixed(1)}×`).padStart(5)}  ${`${r.over3ms} (${r.over3msFlagged})`.padStart(16)}  ${f2(r.worstUnflaggedRmse).padStart(15)}`);
}
if (result.issueBar) console.log(`issue 53's bar (stand-in, 10 frames: share <= 1/3, ratio >= 2): ${result.issueBar.met ? 'met' : 'NOT met'}`);
console.log(`→ ${args.out}`);
