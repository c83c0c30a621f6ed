// Engine variants side by side on the same windows and rendered sets: pooled balanced accuracy
// (6-question subset / all 14, the reference grader) per set for each variant: VoOptions, and
// `resolution` (the run's --resolution: half, full, or auto, both sizes and the surer estimate). The
// studies of the speed smoother use it with EGOGEO_NATIVE pointing at another build of the addon
// (a study branch) to compare it with this one, in one run of each on the same machine.
// KITTI sets are SEQ[+SEQ]/FRAMES from ../shared/data/kitti; rendered sets are carla/FRAMES (40
// clips) and nus/FRAMES (nuScenes-like, 50 clips), seed 2026, FRAMES 0 = all. Each variant's time
// in the engine (estimateClip, ms a clip) is printed beside its scores.
// Run: npm run build && node bench/variants.mjs [--sets 00/31,01+06/31,carla/0] [--variants '{"engine":{}}']
//      [--cache DIR (rendered sets kept there)] [--out bench/results/variants.json]
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { GEOMETRIC_SUBSET, predictClip, predictionRecords } from '../dist/baseline/baseline.js';
import { evenFrames, loadFrames, selectFrames } from '../dist/vo/frames.js';
import { readDataset } from '../dist/datasets/benchmark.js';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evaluate } from '../dist/grade/index.js';
import { loadQuestions } from '../dist/oracle/index.js';
import { runOracle } from '../dist/oracle/oracle.js';
import { synthesize } from '../dist/synth/index.js';
import { estimateClip } from '../dist/vo/estimate.js';
import { engineConfig, engineInput } from '../dist/vo/config.js';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({
  options: {
    kitti: { type: 'string', default: new URL('../../shared/data/kitti', import.meta.url).pathname },
    sets: { type: 'string', default: '00/31,01+06/31,00/10,01+06/10,carla/0,carla/10,nus/0,nus/10' },
    variants: { type: 'string', default: '{"engine":{}}' },
    cache: { type: 'string' },
    out: { type: 'string', default: new URL('./results/variants.json', import.meta.url).pathname },
  },
});
const questions = loadQuestions();
const subset = new Set(GEOMETRIC_SUBSET);
const variants = JSON.parse(args.variants);
const cache = args.cache ?? mkdtempSync(join(tmpdir(), 'egogeo-variants-'));

/** A rendered set, read like any dataset; its labels are the dataset's own QA answers. */
async function rendered(preset, clips) {
  const dir = join(cache, preset);
  if (!existsSync(join(dir, 'qa.jsonl'))) await synthesize({ out: dir, clips, seed: 2026, preset, workers: 2, progress: false });
  return readDataset(dir).clips.map((c) => ({ ...loadFrames(c), labels: Object.fromEntries(c.qa.map((q) => [q.question_id, String(q.answer).toLowerCase()])) }));
}
const bases = {};
async function clipsOf(set) {
  const [name, f] = set.split('/');
  const frames = Number(f) || null;
  const base =
    name === 'carla' ? (bases.carla ??= await rendered('carla', 40))
    : name === 'nus' ? (bases.nus ??= await rendered('nuscenes', 50))
    : name.split('+').flatMap((s) => (bases[s] ??= kittiClips(readKittiSequence(join(args.kitti, s)))));
  return base.map((c) => (frames ? selectFrames(c, evenFrames(c.frames.length, frames)) : c));
}

/** A variant's options for estimateClip: addon options, or with `resolution` the run's choice of tracking sizes (engineInput). */
function estimateArgs(clip, opts) {
  const { resolution, ...vo } = opts;
  if (!resolution) return [vo];
  const { options, alternative } = engineInput(clip, engineConfig({ resolution }));
  return [{ ...options, ...vo }, alternative && { ...alternative, ...vo }];
}

const results = { native: process.env.EGOGEO_NATIVE ?? 'build/Release', ...measuredWith(), variants, sets: {} };
try {
  for (const set of args.sets.split(',')) {
    const clips = await clipsOf(set);
    const line = [];
    for (const [name, opts] of Object.entries(variants)) {
      const preds = [];
      let seconds = 0;
      for (const [i, clip] of clips.entries()) {
        const t0 = performance.now();
        const est = estimateClip(clip, ...estimateArgs(clip, opts));
        seconds += (performance.now() - t0) / 1000;
        const qaBase = i * questions.questions.length;
        preds.push(...(clip.labels
          ? predictionRecords(clip, questions, runOracle(est.trajectory, questions).labels, { truth: clip.labels, answer: null, qaBase })
          : predictClip(clip, est.trajectory, questions, null, qaBase)));
      }
      const all = evaluate(preds, questions), sub = evaluate(preds.filter((p) => subset.has(p.question_id)), questions);
      (results.sets[set] ??= {})[name] = {
        clips: clips.length,
        subsetBalancedAcc: sub.global.balanced_acc,
        allBalancedAcc: all.global.balanced_acc,
        msPerClip: (1000 * seconds) / clips.length,
        perQuestion: Object.fromEntries(Object.entries(all.per_question).map(([q, m]) => [q, m.balanced_acc])),
      };
      line.push(`${name} ${sub.global.balanced_acc.toFixed(3)} / ${all.global.balanced_acc.toFixed(3)} (${((1000 * seconds) / clips.length).toFixed(0)} ms a clip)`);
    }
    console.log(`${set.padEnd(12)} ${line.join('   ')}`);
  }
} finally {
  if (!args.cache) rmSync(cache, { recursive: true, force: true });
}
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, JSON.stringify(results, null, 2) + '\n');
