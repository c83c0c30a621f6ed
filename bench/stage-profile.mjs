// Where the default engine's time goes: mean ms per clip by stage (decode, detect, track, pose,
// scale) and tracking size, at the published 10 frames and at all 31, over KITTI windows, in one
// process on one worker (the in-process path of `egogeo run --workers 1`: src/throughput/measure.ts,
// which `egogeo bench` uses too). At 10 frames `--resolution auto` runs the engine at full size and
// at half size on every clip (the two option sets vo/config.ts `engineInput` returns); at all
// frames the frames are 0.1 s apart and the engine runs once, at full size.
//
//   npm run build && taskset -c 1 node bench/stage-profile.mjs [--seq DIR] [--frames 10,all] [--limit N]
// Writes bench/results/stage-profile.json (with the git commit and the engine build).
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readDataset } from '../dist/datasets/benchmark.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../dist/oracle/index.js';
import { answerClips } from '../dist/run/clips.js';
import { benchEngines } from '../dist/throughput/bench.js';
import { STAGE_HEADER, stageLines } from '../dist/throughput/format.js';
import { measureRun } from '../dist/throughput/measure.js';
import { provenance } from '../dist/throughput/provenance.js';
import { parseFrames } from '../dist/cli/options.js';

const { values: args } = parseArgs({
  options: {
    seq: { type: 'string', default: fileURLToPath(new URL('../../shared/data/kitti/00', import.meta.url)) },
    frames: { type: 'string', default: '10,all' },
    limit: { type: 'string' },
  },
});
const die = (line) => {
  console.error(`bench/stage-profile.mjs: ${line}`);
  process.exit(1);
};
let frameSets, clips;
try {
  frameSets = args.frames.split(',').map((f) => parseFrames(f.trim()));
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
const common = { workers: 1, config: DEFAULT_QUESTIONS_PATH, questionSet, progress: false };

const results = [];
for (const frames of frameSets) {
  const { engine } = benchEngines(frames);
  await answerClips(clips.slice(0, 1), { ...common, questions: 'all', engine }); // warm-up, not counted
  const r = await measureRun(clips, { ...common, engine });
  if (r.failed.length > 0) die(`${r.failed.length} windows failed, e.g. ${r.failed[0].clip_id}: ${r.failed[0].reason}`);
  results.push({
    frames: frames ?? 'all',
    clips: r.clips,
    framesPerClip: r.framesPerClip,
    wallMsPerClip: (1000 * r.wallSeconds) / r.clips,
    coreSecondsPerClip: r.coreSecondsPerClip,
    taskMs: r.taskMs,
    stages: r.stages.map((s) => ({ ...s, totalMsPerFrame: s.ms.total / r.framesPerClip })),
  });
}

const p = provenance();
console.log(`stage profile, ${clips.length} KITTI windows of ${args.seq}, one worker (in-process), egogeo ${p.egogeo}, engine ${p.engine.addon}, commit ${p.gitCommit ?? 'unknown'}`);
console.log(`frames  wall ms/clip  core-s/clip  ${STAGE_HEADER}`);
for (const r of results) {
  const lead = `${String(r.frames).padStart(6)}  ${r.wallMsPerClip.toFixed(1).padStart(12)}  ${r.coreSecondsPerClip.toFixed(3).padStart(11)}  `;
  const rows = stageLines(r.stages, '');
  rows.forEach((row, i) => console.log(`${i === 0 ? lead : ' '.repeat(lead.length)}${row}`));
}
const out = new URL('./results/stage-profile.json', import.meta.url);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(out, `${JSON.stringify({ command: ['node bench/stage-profile.mjs', ...process.argv.slice(2)].join(' '), date: new Date().toISOString().slice(0, 10), ...p, sequence: args.seq, results }, null, 2)}\n`);
console.log(`wrote ${fileURLToPath(out)}`);
