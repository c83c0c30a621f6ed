// Does the scale chain drift in turns? Per window, the mean error of the engine's relative scales
// (log ratio of a pair's length to the previous pair's, against the steadied truth; all frames): a
// mean away from zero is a speed read as growing or shrinking by that much a pair. Windows are
// binned by the truth's mean |yaw rate|. Run on the KITTI windows and on rendered clips (--preset),
// whose intrinsics are exact, each with the focal length the engine is given scaled by --focal
// (how sensitive the chain is to a calibration error, in turns and on the straight), and the windowed
// bundle adjustment's reprojection error under each (NativeResult.bundleResidual): which focal length
// the images themselves prefer, per band (how many windows have their lowest residual at each).
//
//   npm run build && node bench/turn-drift.mjs [--kitti ROOT] [--seqs 00,01,06] [--clips 30] [--seed 313] [--preset carla] [--speed MIN:MAX] [--focal 0.98,1,1.02]
// Writes bench/results/turn-drift.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readDataset } from '../dist/datasets/benchmark.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { groundTruth, synthesize } from '../dist/synth/index.js';
import { engineConfig, engineInput } from '../dist/vo/config.js';
import { estimateClip } from '../dist/vo/estimate.js';
import { loadFrames } from '../dist/vo/frames.js';
import { ratioDrift } from './lib/drift.mjs';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({
  options: {
    kitti: { type: 'string', default: new URL('../../shared/data/kitti', import.meta.url).pathname },
    seqs: { type: 'string', default: '00,01,06' },
    clips: { type: 'string', default: '30' },
    seed: { type: 'string', default: '313' },
    speed: { type: 'string' }, // MIN:MAX cruise speeds (m/s) of the rendered clips; slow turns have the most rotation a metre
    preset: { type: 'string', default: 'carla' }, // the rendered set's look: carla or nuscenes (urban, sharper turns)
    focal: { type: 'string', default: '0.98,1,1.02' },
    out: { type: 'string', default: new URL('./results/turn-drift.json', import.meta.url).pathname },
  },
});
const BINS = [[0, 0.05], [0.05, 0.2], [0.2, 0.35], [0.35, Infinity]]; // mean |yaw rate|, rad/s
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;

/** One window's mean relative-scale error (log, a pair), the truth's mean |yaw rate| and the bundle's residual. */
function windowDrift(frames, truth, focal) {
  const I = frames.camera.intrinsics;
  const input = engineInput({ ...frames, camera: { ...frames.camera, intrinsics: { ...I, fx: I.fx * focal, fy: I.fy * focal } } }, engineConfig({ frames: null }));
  const est = estimateClip(input.clip, input.options);
  const d = ratioDrift(est, truth, input.clip.timestamps);
  return d ? { id: frames.id, ...d, residual: est.native.bundleResidual } : null;
}

function summarize(windows) {
  const bins = BINS.map(([lo, hi]) => {
    const w = windows.filter((x) => x.yawRate >= lo && x.yawRate < hi);
    return { yawRate: [lo, hi], windows: w.length, meanDrift: w.length ? mean(w.map((x) => x.drift)) : NaN, meanResidual: w.length ? mean(w.map((x) => x.residual)) : NaN };
  });
  const a = windows.map((x) => x.drift), b = windows.map((x) => x.yawRate), ma = mean(a), mb = mean(b);
  const corr = a.reduce((s, x, i) => s + (x - ma) * (b[i] - mb), 0) / Math.sqrt(a.reduce((s, x) => s + (x - ma) ** 2, 0) * b.reduce((s, x) => s + (x - mb) ** 2, 0));
  return { windows: windows.length, corrDriftYawRate: corr, bins };
}

const focals = args.focal.split(',').map(Number);
const perWindow = { kitti: {}, rendered: {} };
const result = { seqs: args.seqs, clips: Number(args.clips), seed: Number(args.seed), preset: args.preset, speed: args.speed ?? null, sets: {} };
const kitti = args.seqs.split(',').flatMap((s) => kittiClips(readKittiSequence(join(args.kitti, s))));
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-turn-'));
try {
  const s = await synthesize({ out: join(tmp, 'data'), clips: Number(args.clips), seed: Number(args.seed), preset: args.preset, ...(args.speed ? { speed: args.speed.split(':').map(Number) } : {}), progress: false });
  const truthOf = new Map(s.clips.map((c) => [c.id, groundTruth(c)]));
  const rendered = readDataset(s.dir).clips;
  for (const focal of focals) {
    const k = kitti.map((c) => windowDrift(loadFrames(c), c.groundTruth, focal)).filter(Boolean);
    const r = rendered.map((c) => windowDrift(loadFrames(c), truthOf.get(c.id), focal)).filter(Boolean);
    result.sets[`focal x${focal}`] = { kitti: summarize(k), rendered: summarize(r) };
    for (const [set, w] of [['kitti', k], ['rendered', r]]) for (const x of w) ((perWindow[set][x.id] ??= { yawRate: x.yawRate, residual: {} }).residual[focal] = x.residual);
  }
  // Per band, how many windows have their lowest reprojection error at each focal scale.
  result.lowestResidual = Object.fromEntries(['kitti', 'rendered'].map((set) => [set, BINS.map(([lo, hi]) => {
    const counts = Object.fromEntries(focals.map((f) => [f, 0]));
    for (const w of Object.values(perWindow[set])) {
      if (w.yawRate < lo || w.yawRate >= hi || !focals.every((f) => w.residual[f] > 0)) continue;
      counts[focals.reduce((a, b) => (w.residual[b] < w.residual[a] ? b : a))]++;
    }
    return counts;
  })]));
  result.perWindow = perWindow;
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
mkdirSync(join(args.out, '..'), { recursive: true });
writeFileSync(args.out, `${JSON.stringify({ date: new Date().toISOString(), ...measuredWith(), ...result }, null, 1)}\n`);
const pct = (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(100 * x).toFixed(2)}%` : '—');
console.log(`relative scales' mean error a pair (all frames) by the truth's mean |yaw rate| (rad/s): KITTI ${args.seqs} / rendered ${args.preset} (seed ${args.seed})`);
console.log(`${'focal'.padEnd(12)} ${'set'.padEnd(9)} ${BINS.map(([lo, hi]) => `${lo}-${hi === Infinity ? '' : hi}`.padStart(16)).join('')}   corr`);
for (const [name, v] of Object.entries(result.sets)) {
  for (const set of ['kitti', 'rendered']) {
    const r = v[set];
    console.log(`${name.padEnd(12)} ${set.padEnd(9)} ${r.bins.map((b) => `${pct(b.meanDrift)} (${b.windows})`.padStart(16)).join('')}   ${r.corrDriftYawRate.toFixed(2)}`);
  }
}
console.log(`bundle adjustment's reprojection error (px, mean over the band's windows), then where each band's windows have their lowest`);
for (const [name, v] of Object.entries(result.sets)) {
  for (const set of ['kitti', 'rendered']) console.log(`${name.padEnd(12)} ${set.padEnd(9)} ${v[set].bins.map((b) => (Number.isFinite(b.meanResidual) ? b.meanResidual.toFixed(4) : '—').padStart(16)).join('')}`);
}
for (const set of ['kitti', 'rendered']) {
  console.log(`${'lowest at'.padEnd(12)} ${set.padEnd(9)} ${result.lowestResidual[set].map((c) => Object.entries(c).filter(([, n]) => n).map(([f, n]) => `x${f}:${n}`).join(' ') || '—').join(' | ')}`);
}
