// Photometric robustness of the VO front end (issue #8 item 3): the same CARLA-shaped clips as
// plain ("simulation") and restyled frame by frame ("transferred": colour gains, tone curve, blur,
// sensor noise), plus the KITTI 00 windows (31 frames) as the guard that normal frames do not
// lose, for each front-end variant: pooled balanced accuracy on the 6 geometric questions and on
// all 14 (the reference grader's `global` metric).
//
// The CARLA clips come from ../shared/data/published/egodyn-bench (the stand-in copy: KITTI frames
// scaled to CARLA's 90° camera on a grey canvas). Their records name video paths on the authors'
// machine, so convenience copies with absolute mp4 paths, intrinsics (fx = fy = 640, principal
// point (640, 360)) and camera height 1.65 m are written to $TMPDIR/egogeo-photometric/<domain>/
// (usable with `egogeo run --dataset`). Answers: the oracle over the estimated trajectory; labels:
// qa.jsonl. Nothing here is tuned per clip; variants are whole-engine options (VoOptions).
//
// Run: npm run build && node bench/photometric.mjs [--quick] [--variants a,b]
//      → bench/results/photometric.json
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GEOMETRIC_SUBSET, predictClip } from '../dist/baseline/baseline.js';
import { readDataset } from '../dist/datasets/benchmark.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { decodeVideo } from '../dist/datasets/video.js';
import { evaluate } from '../dist/grade/index.js';
import { loadQuestions, runOracle } from '../dist/oracle/index.js';
import { estimateClipAsync } from '../dist/vo/estimate.js';
import { measuredWith } from './lib/provenance.mjs';

const SHARED = new URL('../../shared/data/', import.meta.url).pathname;
const BENCH = join(SHARED, 'published/egodyn-bench');
const KITTI = join(SHARED, 'kitti/00');
const OUT = new URL('./results/photometric.json', import.meta.url).pathname;
const CARLA_CAMERA = { intrinsics: { fx: 640, fy: 640, cx: 640, cy: 360 }, camera_height: 1.65 };

/** Front-end variants, each a set of VoOptions over the engine's defaults. */
const VARIANTS = {
  none: { photometric: 'none', denoiseSigma: 0, fastNoiseFactor: 0 },
  global: { photometric: 'global', denoiseSigma: 0, fastNoiseFactor: 0 },
  equalize: { photometric: 'equalize', denoiseSigma: 0, fastNoiseFactor: 0 },
  clahe: { photometric: 'clahe', denoiseSigma: 0, fastNoiseFactor: 0 },
  pair: { photometric: 'pair', denoiseSigma: 0, fastNoiseFactor: 0 },
  gain: { photometric: 'gain', denoiseSigma: 0, fastNoiseFactor: 0 },
  match: { photometric: 'match', denoiseSigma: 0, fastNoiseFactor: 0 },
  'match+denoise': { photometric: 'match', denoiseSigma: 1.0, fastNoiseFactor: 0 },
  denoise: { photometric: 'none', denoiseSigma: 1.0, fastNoiseFactor: 0 },
  fastNoise: { photometric: 'none', denoiseSigma: 0, fastNoiseFactor: 3 },
  'equalize+denoise': { photometric: 'equalize', denoiseSigma: 1.0, fastNoiseFactor: 0 },
  'equalize+fastNoise': { photometric: 'equalize', denoiseSigma: 0, fastNoiseFactor: 3 },
  'equalize+denoise+fastNoise': { photometric: 'equalize', denoiseSigma: 1.0, fastNoiseFactor: 3 },
  default: {},
};

const { values: args } = parseArgs({ options: { variants: { type: 'string' }, quick: { type: 'boolean', default: false } } });
const pick = args.variants !== undefined ? args.variants.split(',') : Object.keys(VARIANTS);
for (const v of pick) if (!VARIANTS[v]) throw new Error(`unknown variant '${v}' (known: ${Object.keys(VARIANTS).join(', ')})`);
const quick = args.quick;

if (!existsSync(BENCH) || !existsSync(KITTI)) {
  console.error(`photometric bench: ${BENCH} or ${KITTI} is missing (the shared data); nothing measured`);
  process.exit(1);
}

/** Writes the convenience copy for one CARLA domain; returns its directory. */
function carlaCopy(domain) {
  const dir = join(process.env.TMPDIR ?? tmpdir(), 'egogeo-photometric', domain);
  mkdirSync(dir, { recursive: true });
  const lines = readFileSync(join(BENCH, 'carla_clips/clips_index.jsonl'), 'utf8').split('\n').filter((l) => l.trim());
  const recs = lines.map((l) => {
    const r = JSON.parse(l);
    return {
      clip_id: r.clip_id,
      source: 'carla',
      video_path: join(BENCH, `carla_videos_${domain}`, `${r.clip_id}.mp4`),
      array_ref: join(BENCH, 'carla_clips', r.array_ref),
      ...CARLA_CAMERA,
    };
  });
  writeFileSync(join(dir, 'clips_index.jsonl'), recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeFileSync(join(dir, 'qa.jsonl'), readFileSync(join(BENCH, 'carla_clips/qa.jsonl')));
  return dir;
}

const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);

/** Runs `jobs` (async thunks) two at a time (the machine's cores), in order of completion. */
async function pool(jobs, width = 2) {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]();
  };
  await Promise.all(Array.from({ length: width }, worker));
}

function score(preds) {
  const all = evaluate(preds, questions);
  const sub = evaluate(preds.filter((p) => subset.has(p.question_id)), questions);
  return { clips: new Set(preds.map((p) => p.clip_id)).size, bacc6: sub.global.balanced_acc, bacc14: all.global.balanced_acc };
}

/** CARLA domain: clip-major (each video decoded once), every variant on it. */
async function carla(domain, variants) {
  const b = readDataset(carlaCopy(domain));
  const clips = quick ? b.clips.slice(0, 6) : b.clips;
  const preds = Object.fromEntries(variants.map((v) => [v, []]));
  const ms = Object.fromEntries(variants.map((v) => [v, 0]));
  for (const c of clips) {
    const video = decodeVideo(c.video);
    const clip = { ...c, frames: video.frames, timestamps: Float64Array.from(video.frames.map((_, i) => i / 10)) };
    await pool(
      variants.map((v) => async () => {
        const est = await estimateClipAsync(clip, VARIANTS[v]);
        ms[v] += est.native.timing.total;
        const labels = runOracle(est.trajectory, questions).labels;
        for (const q of c.qa) {
          preds[v].push({ qa_id: q.qa_id, clip_id: q.clip_id, question_id: q.question_id, category: q.category, oracle_label: q.answer, model_answer: labels[q.question_id] ?? null, source: c.source });
        }
      }),
    );
  }
  return Object.fromEntries(variants.map((v) => [v, { ...score(preds[v]), msPerClip: ms[v] / clips.length }]));
}

/** KITTI 00 benchmark windows, 31 frames (the README's 0.924 / 0.769 configuration). */
async function kitti(variants) {
  const all = kittiClips(readKittiSequence(KITTI));
  const clips = quick ? all.slice(0, 12) : all;
  const out = {};
  for (const v of variants) {
    const preds = new Array(clips.length);
    let ms = 0;
    await pool(
      clips.map((clip, i) => async () => {
        const est = await estimateClipAsync(clip, VARIANTS[v]);
        ms += est.native.timing.total;
        preds[i] = predictClip(clip, est.trajectory, questions, null, i * questions.questions.length);
      }),
    );
    out[v] = { ...score(preds.flat()), msPerClip: ms / clips.length };
  }
  return out;
}

const t0 = performance.now();
const results = { simulation: await carla('simulation', pick), transferred: await carla('transferred', pick), kitti00: await kitti(pick) };
const f3 = (x) => (x == null ? '  -  ' : x.toFixed(3));
console.log(`photometric robustness: pooled balanced accuracy, 6-question subset / all 14${quick ? ' (--quick: a few clips only)' : ''}`);
console.log(`${'variant'.padEnd(28)} ${'simulation'.padStart(13)} ${'transferred'.padStart(13)} ${'KITTI 00'.padStart(13)}   ms/clip (sim, tr, kitti)`);
for (const v of pick) {
  const cell = (r) => `${f3(r.bacc6)} / ${f3(r.bacc14)}`;
  const { simulation: s, transferred: t, kitti00: k } = { simulation: results.simulation[v], transferred: results.transferred[v], kitti00: results.kitti00[v] };
  console.log(`${v.padEnd(28)} ${cell(s).padStart(13)} ${cell(t).padStart(13)} ${cell(k).padStart(13)}   ${[s, t, k].map((r) => r.msPerClip.toFixed(0)).join(', ')}`);
}
console.log(`(${((performance.now() - t0) / 1000).toFixed(0)} s)`);
if (!quick) {
  mkdirSync(new URL('./results/', import.meta.url).pathname, { recursive: true });
  // A run over some variants (--variants) updates those and keeps the others' earlier figures.
  const prev = existsSync(OUT) ? JSON.parse(readFileSync(OUT, 'utf8')) : { variants: {}, results: {} };
  // Each variant's commit and engine: the run that measured it (measuredWith), older variants keep theirs.
  const merged = { measured: new Date().toISOString(), ...measuredWith(), variants: { ...prev.variants }, measuredWith: { ...(prev.measuredWith ?? {}) }, results: { ...prev.results } };
  for (const v of pick) {
    merged.variants[v] = VARIANTS[v];
    merged.measuredWith[v] = measuredWith();
  }
  for (const [set, byVariant] of Object.entries(results)) merged.results[set] = { ...(prev.results?.[set] ?? {}), ...byVariant };
  writeFileSync(OUT, JSON.stringify(merged, null, 2) + '\n');
  console.log(`wrote ${OUT}`);
}
