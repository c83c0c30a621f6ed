// VO engine speed on real KITTI frames (1241x376 JPEG), one OpenCV thread: ms per frame by stage
// (decode, detect, track, pose, scale) and per clip at 10 and 31 frames; median of 5 runs.
// Run on one core:  npm run build && taskset -c 0 node bench/vo-speed.mjs [SEQ]   (SEQ default ../shared/data/kitti/00; no flags)
// Writes bench/results/vo-speed.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { kittiClips, readKittiSequence } from '../dist/datasets/kitti.js';
import { evenFrames, selectFrames } from '../dist/vo/frames.js';
import { native } from '../dist/native/index.js';
import { estimateClip } from '../dist/vo/estimate.js';
import { measuredWith } from './lib/provenance.mjs';

const { positionals } = parseArgs({ options: {}, allowPositionals: true }); // strict: any flag is an error
if (positionals.length > 1) throw new Error(`bench/vo-speed: one argument at most, SEQ (got ${positionals.join(' ')})`);
const SEQ = positionals[0] ?? new URL('../../shared/data/kitti/00', import.meta.url).pathname;
const RUNS = 5;
const CLIPS = 8;

native().setThreads(1);
const clips = kittiClips(readKittiSequence(SEQ)).slice(0, CLIPS);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function measure(frames) {
  const runs = [];
  for (let r = 0; r < RUNS; r++) {
    const stages = { decode: 0, detect: 0, track: 0, pose: 0, scale: 0 };
    let nFrames = 0;
    const t0 = performance.now();
    for (const clip of clips) {
      const c = selectFrames(clip, evenFrames(clip.frames.length, frames));
      const est = estimateClip(c);
      for (const k of Object.keys(stages)) stages[k] += est.native.timing[k];
      nFrames += c.frames.length;
    }
    const wall = performance.now() - t0;
    runs.push({ wallPerClip: wall / clips.length, wallPerFrame: wall / nFrames, stages: Object.fromEntries(Object.entries(stages).map(([k, v]) => [k, v / nFrames])) });
  }
  const pick = (f) => median(runs.map(f));
  return {
    frames,
    msPerClip: pick((r) => r.wallPerClip),
    msPerFrame: pick((r) => r.wallPerFrame),
    stagesMsPerFrame: Object.fromEntries(Object.keys(runs[0].stages).map((k) => [k, pick((r) => r.stages[k])])),
  };
}

estimateClip(clips[0]); // warm-up (page cache, lazy init)
const results = [measure(10), measure(31)];
console.log(`VO speed, ${clips.length} KITTI windows of ${SEQ}, one OpenCV thread, median of ${RUNS} runs`);
console.log('frames/clip  ms/clip  ms/frame  decode  detect  track   pose  scale');
for (const r of results) {
  const s = r.stagesMsPerFrame;
  console.log(
    `${String(r.frames).padStart(11)}  ${r.msPerClip.toFixed(1).padStart(7)}  ${r.msPerFrame.toFixed(2).padStart(8)}  ${[s.decode, s.detect, s.track, s.pose, s.scale].map((v) => v.toFixed(2).padStart(6)).join(' ')}`,
  );
}
// No ratio against the published VO proxy here: a figure from another machine or day means nothing
// (machines differ by 1.6x); bench/vo-vs-proxy.mjs times both side by side on one core.
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/vo-speed.json', import.meta.url), JSON.stringify({ ...measuredWith(), sequence: SEQ, clips: clips.length, runs: RUNS, results }, null, 2) + '\n');
