// How far do the KITTI proxies move when the images change by nothing a viewer could see, and
// what does a residual radial distortion change? Each variant rewrites every frame of the KITTI
// sequences into a temporary copy (calib, poses and times unchanged), runs the engine on every
// window and grades it against the reference oracle's labels:
//   original       the frames as published
//   jpeg:Q         re-encoded as JPEG at quality Q
//   noise:S:SEED   Gaussian noise of S grey levels added, written losslessly (PNG)
//   shift:DX       resampled DX px to the right (bilinear, PNG): the resampling's blur alone, the
//                  control for radial
//   radial:K1      corrected for a radial distortion K1 (a pixel at normalised radius r is read at
//                  r (1 + K1 r^2), the focal length's units; bilinear, PNG), what cv::undistort does
// Per variant and set: 6 / 14 questions at all frames and at 10 frames, and at both the scale
// chain's mean drift a pair (bench/lib/drift.mjs) over every window, the straight ones (under 0.05
// rad/s) and the ones turning faster than 0.2 rad/s; at all frames also the bundle adjustment's
// reprojection error on the turning windows. The imperceptible variants' spread (jpeg, noise) is the
// proxies' noise floor: a difference between two engines smaller than it is not a finding.
//
//   npm run build && node bench/image-perturb.mjs [--kitti ROOT] [--sets 00,01+06]
//       [--variants original,jpeg:95,jpeg:98,noise:0.5:1,noise:0.5:2,noise:0.5:3,shift:0.5,radial:0.01]
//       [--frames all,10] [--config '{"resolution":"full"}' (engine configuration, vo/config.ts)]
//       [--options '{"ratioDrift":0.4}' (addon options over the run's, both tracking sizes: VoOptions)]
//       [--against bench/results/image-perturb-auto-10.json (a previous run: the differences
//        variant by variant, paired, mean ± SD and how many copies rose and fell)]
// Writes bench/results/image-perturb.json. Two engines compared over the same copies differ far less
// than either moves over them: the paired difference is what decides (bench/RESULTS.md).
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { GEOMETRIC_SUBSET, predictClip } from '../dist/baseline/baseline.js';
import { Rng } from '../dist/core/random.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evaluate } from '../dist/grade/index.js';
import { loadQuestions } from '../dist/oracle/index.js';
import { engineConfig, engineInput } from '../dist/vo/config.js';
import { parseFrames } from '../dist/cli/options.js';
import { estimateClip } from '../dist/vo/estimate.js';
import { loadFrames } from '../dist/vo/frames.js';
import { ratioDrift } from './lib/drift.mjs';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({
  options: {
    kitti: { type: 'string', default: new URL('../../shared/data/kitti', import.meta.url).pathname },
    sets: { type: 'string', default: '00,01+06' },
    variants: { type: 'string', default: 'original,jpeg:95,jpeg:98,noise:0.5:1,noise:0.5:2,noise:0.5:3,shift:0.5,radial:0.01' },
    frames: { type: 'string', default: 'all,10' },
    config: { type: 'string', default: '{}' },
    options: { type: 'string', default: '{}' },
    against: { type: 'string' },
    out: { type: 'string', default: new URL('./results/image-perturb.json', import.meta.url).pathname },
  },
});
const TURNING = 0.2; // rad/s, truth's mean |yaw rate|
const STRAIGHT = 0.05; // rad/s: below it a window counts as straight
const IMPERCEPTIBLE = /^(original|jpeg|noise)/;
const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);
const config = JSON.parse(args.config);
const options = JSON.parse(args.options);
const modes = args.frames.split(',').map((f) => ({ key: f === 'all' ? 'all' : `f${f}`, frames: parseFrames(f) }));
const mean = (a) => (a.length ? a.reduce((x, y) => x + y, 0) / a.length : NaN);

/** Bilinear sample of a greyscale image at (x, y), coordinates clamped to the image (no black border to track). */
function bilinear(src, w, h, x, y) {
  x = Math.min(Math.max(x, 0), w - 1);
  y = Math.min(Math.max(y, 0), h - 1);
  const x0 = Math.min(Math.floor(x), w - 2), y0 = Math.min(Math.floor(y), h - 2), fx = x - x0, fy = y - y0;
  const i = y0 * w + x0;
  return (src[i] * (1 - fx) + src[i + 1] * fx) * (1 - fy) + (src[i + w] * (1 - fx) + src[i + w + 1] * fx) * fy;
}

/** Writes `variant` of the frame `file` into `dir` (same stem); `k` is the sequence's calibration. */
async function perturb(variant, file, dir, k, frameIndex) {
  const [kind, a, b] = variant.split(':');
  const stem = file.split('/').pop().replace(/\.\w+$/, '');
  if (kind === 'jpeg') return sharp(file).greyscale().jpeg({ quality: Number(a) }).toFile(join(dir, `${stem}.jpg`));
  const { data: src, info } = await sharp(file).greyscale().raw().toBuffer({ resolveWithObject: true });
  const { width: w, height: h } = info, out = Buffer.alloc(w * h);
  if (kind === 'noise') {
    const rng = new Rng(Number(b), frameIndex);
    for (let i = 0; i < out.length; i++) out[i] = Math.min(255, Math.max(0, Math.round(src[i] + Number(a) * rng.normal())));
  } else if (kind === 'shift') {
    for (let v = 0; v < h; v++) for (let u = 0; u < w; u++) out[v * w + u] = Math.round(bilinear(src, w, h, u - Number(a), v));
  } else if (kind === 'radial') {
    const k1 = Number(a);
    for (let v = 0; v < h; v++) for (let u = 0; u < w; u++) {
      const x = (u - k.cx) / k.fx, y = (v - k.cy) / k.fy, s = 1 + k1 * (x * x + y * y);
      out[v * w + u] = Math.round(bilinear(src, w, h, k.cx + k.fx * x * s, k.cy + k.fy * y * s));
    }
  } else throw new Error(`--variants: unknown variant '${variant}' (original, jpeg:Q, noise:S:SEED, shift:DX, radial:K1)`);
  return sharp(out, { raw: { width: w, height: h, channels: 1 } }).png().toFile(join(dir, `${stem}.png`));
}

/** The KITTI sequence `seq` rewritten as `variant` under `root`; its directory. */
async function variantSequence(variant, seq, root) {
  const from = join(args.kitti, seq);
  if (variant === 'original') return from;
  const dir = join(root, seq);
  mkdirSync(join(dir, 'image_0'), { recursive: true });
  for (const f of ['calib.txt', 'poses.txt', 'times.txt']) copyFileSync(join(from, f), join(dir, f));
  const s = readKittiSequence(from);
  for (let i = 0; i < s.frames.length; i++) await perturb(variant, s.frames[i], join(dir, 'image_0'), s.intrinsics, i);
  return dir;
}

function gradeSet(clips, frames) {
  const preds = [], windows = [];
  clips.forEach((full, i) => {
    const input = engineInput(loadFrames(full), engineConfig({ ...config, frames }, '--config'));
    const est = estimateClip(input.clip, { ...input.options, ...options }, input.alternative && { ...input.alternative, ...options });
    preds.push(...predictClip(full, est.trajectory, questions, null, i * questions.questions.length));
    const d = ratioDrift(est, full.groundTruth, input.clip.timestamps);
    if (d) windows.push({ ...d, residual: est.native.bundleResidual });
  });
  const all = evaluate(preds, questions), sub = evaluate(preds.filter((p) => subset.has(p.question_id)), questions);
  const turning = windows.filter((w) => w.yawRate > TURNING), straight = windows.filter((w) => w.yawRate < STRAIGHT);
  return {
    six: sub.global.balanced_acc,
    fourteen: all.global.balanced_acc,
    perQuestion: Object.fromEntries(Object.entries(all.per_question).map(([q, v]) => [q, v.balanced_acc])),
    // The chain's mean drift a pair over every window, the straight ones and the turning ones.
    drift: { all: mean(windows.map((w) => w.drift)), straight: mean(straight.map((w) => w.drift)), straightWindows: straight.length, turning: mean(turning.map((w) => w.drift)) },
    ...(frames === null ? { turningWindows: turning.length, turningDrift: mean(turning.map((t) => t.drift)), turningResidual: mean(turning.map((t) => t.residual)) } : {}),
  };
}

const sets = args.sets.split(',').map((s) => s.split('+'));
const result = { date: new Date().toISOString(), ...measuredWith(), kitti: args.kitti, config, options, turningAbove: TURNING, variants: {} };
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-perturb-'));
try {
  for (const variant of args.variants.split(',')) {
    const root = join(tmp, variant.replace(/[^\w.-]/g, '_'));
    const dirs = {};
    for (const seq of new Set(sets.flat())) dirs[seq] = await variantSequence(variant, seq, root);
    result.variants[variant] = {};
    for (const set of sets) {
      const clips = set.flatMap((seq) => kittiClips(readKittiSequence(dirs[seq])));
      const row = { windows: clips.length };
      for (const m of modes) row[m.key] = gradeSet(clips, m.frames);
      result.variants[variant][set.join('+')] = row;
      const t = row.all;
      const drift = (g) => `drift ${(100 * g.drift.all).toFixed(2)}% (straight ${(100 * g.drift.straight).toFixed(2)}%, turning ${(100 * g.drift.turning).toFixed(2)}%)`;
      console.log(`${variant.padEnd(12)} ${set.join('+').padEnd(6)} ${modes.map((m) => `${m.frames ?? 'all'} frames ${row[m.key].six.toFixed(3)} / ${row[m.key].fourteen.toFixed(3)} ${drift(row[m.key])}`).join('  ')}${t ? `  turning (${t.turningWindows}): residual ${t.turningResidual.toFixed(4)} px` : ''}`);
    }
    rmSync(root, { recursive: true, force: true });
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
// The noise floor: each figure's spread over the imperceptible variants.
result.noiseFloor = {};
const floor = Object.entries(result.variants).filter(([v]) => IMPERCEPTIBLE.test(v));
for (const set of sets.map((s) => s.join('+'))) {
  result.noiseFloor[set] = {};
  for (const mode of modes) for (const key of ['six', 'fourteen']) {
    const v = floor.map(([, r]) => r[set][mode.key][key]), m = mean(v);
    const sd = Math.sqrt(v.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, v.length - 1));
    result.noiseFloor[set][`${mode.frames ?? 'all'} frames ${key === 'six' ? '6q' : '14q'}`] = { n: v.length, mean: m, sd, min: Math.min(...v), max: Math.max(...v) };
  }
}
console.log(`noise floor over ${floor.length} imperceptible variants (${floor.map(([v]) => v).join(', ')}): mean ± SD [min–max]`);
for (const [set, figs] of Object.entries(result.noiseFloor)) {
  console.log(`${set.padEnd(6)} ${Object.entries(figs).map(([k, s]) => `${k} ${s.mean.toFixed(3)} ± ${s.sd.toFixed(3)} [${s.min.toFixed(3)}–${s.max.toFixed(3)}]`).join('  ')}`);
}
// Paired against a previous run: the same copies, so each difference is the engines' alone.
if (args.against) {
  const before = JSON.parse(readFileSync(args.against, 'utf8')).variants;
  result.against = { file: args.against, differences: {} };
  console.log(`paired against ${args.against}: mean ± SD of the differences over the variants both ran (rose / fell)`);
  for (const set of sets.map((s) => s.join('+'))) for (const mode of modes) for (const key of ['six', 'fourteen']) {
    const d = Object.entries(result.variants).filter(([v]) => before[v]?.[set]?.[mode.key]).map(([v, r]) => r[set][mode.key][key] - before[v][set][mode.key][key]);
    if (!d.length) continue;
    const m = mean(d), sd = Math.sqrt(d.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, d.length - 1));
    const name = `${set} ${mode.frames ?? 'all'} frames ${key === 'six' ? '6q' : '14q'}`;
    result.against.differences[name] = { n: d.length, mean: m, sd, rose: d.filter((x) => x > 0).length, fell: d.filter((x) => x < 0).length };
    console.log(`${name.padEnd(24)} ${m >= 0 ? '+' : ''}${m.toFixed(4)} ± ${sd.toFixed(4)} (${d.filter((x) => x > 0).length} / ${d.filter((x) => x < 0).length} of ${d.length})`);
  }
}
mkdirSync(join(args.out, '..'), { recursive: true });
writeFileSync(args.out, `${JSON.stringify(result, null, 1)}\n`);
