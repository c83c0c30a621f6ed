// What each clip costs in a fresh process: the engine's stage times and the process's page faults
// per clip, in order, with no warm-up (stage-profile.mjs warms up first and so hides them). On
// this host a page fault costs ~11 µs (a first touch of 4 KiB), so a process's first clips, which
// fault in the engine's working set, cost up to twice the later ones (study 48).
//
//   npm run build && taskset -c 0 node bench/cold-clips.mjs [--seq DIR] [--frames 10] [--limit N] [--out FILE]
// Writes bench/results/cold-clips.json (with the git commit and the engine build).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readDataset } from '../dist/datasets/benchmark.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../dist/oracle/index.js';
import { answerClips } from '../dist/run/clips.js';
import { benchEngines } from '../dist/throughput/bench.js';
import { parseFrames } from '../dist/cli/options.js';
import { provenance } from '../dist/throughput/provenance.js';

const t0Process = performance.now(); // ms since the process started, when this module runs
const { values: args } = parseArgs({
  options: {
    seq: { type: 'string', default: fileURLToPath(new URL('../../shared/data/kitti/01', import.meta.url)) },
    frames: { type: 'string', default: '10' },
    limit: { type: 'string' },
    out: { type: 'string', default: fileURLToPath(new URL('./results/cold-clips.json', import.meta.url)) },
  },
});
const die = (line) => {
  console.error(`bench/cold-clips.mjs: ${line}`);
  process.exit(1);
};
let clips, frames;
try {
  frames = parseFrames(args.frames);
  clips = readDataset(args.seq).clips;
} catch (e) {
  die(e.message);
}
if (args.limit !== undefined) {
  const n = Number(args.limit);
  if (!Number.isInteger(n) || n < 1) die(`--limit must be a positive integer, got '${args.limit}'`);
  clips = clips.slice(0, n);
}
const questionSet = loadQuestions(DEFAULT_QUESTIONS_PATH);
const { engine } = benchEngines(frames);
const faults = () => process.resourceUsage().minorPageFault;

const rows = [];
const firstCallMs = performance.now();
for (const clip of clips) {
  const f0 = faults();
  const t0 = performance.now();
  const run = await answerClips([clip], { questions: 'all', engine, config: DEFAULT_QUESTIONS_PATH, questionSet, workers: 1, progress: false });
  const ms = performance.now() - t0;
  const out = run.outputs[0];
  if (!out) die(`${clip.id} failed: ${run.failed[0]?.reason ?? 'no output'}`);
  rows.push({
    clip_id: clip.id,
    ms,
    pageFaults: faults() - f0,
    engineMs: out.ms.vo,
    runs: (out.engineRuns ?? []).map((r) => ({ downsample: r.downsample, timing: r.timing })),
  });
}

const p = provenance();
console.log(`cold clips, ${clips.length} windows of ${args.seq} at ${args.frames} frames in one fresh process, egogeo ${p.egogeo}, engine ${p.engine.addon}, commit ${p.gitCommit ?? 'unknown'}`);
console.log(`module start ${t0Process.toFixed(0)} ms after the process, first clip at ${firstCallMs.toFixed(0)} ms`);
console.log('clip                 ms   faults  engine ms  stages (full | half)');
for (const r of rows) {
  const st = r.runs.map((x) => ['decode', 'detect', 'track', 'pose', 'scale'].map((k) => x.timing[k].toFixed(0)).join('/')).join(' | ');
  console.log(`${r.clip_id.padEnd(18)} ${r.ms.toFixed(1).padStart(6)} ${String(r.pageFaults).padStart(8)} ${r.engineMs.toFixed(1).padStart(10)}  ${st}`);
}
const sum = (k) => rows.reduce((s, r) => s + r[k], 0);
console.log(`total ${sum('ms').toFixed(0)} ms, ${sum('pageFaults')} page faults`);
mkdirSync(dirname(args.out), { recursive: true });
writeFileSync(args.out, `${JSON.stringify({ command: ['node bench/cold-clips.mjs', ...process.argv.slice(2)].join(' '), date: new Date().toISOString().slice(0, 10), ...p, sequence: args.seq, frames: args.frames, firstClipAtMs: firstCallMs, clips: rows }, null, 2)}\n`);
console.log(`wrote ${args.out}`);
