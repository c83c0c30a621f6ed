#!/usr/bin/env node
// Synthetic renderer speed: frames/s at 1280×720 (the carla preset) including JPEG encoding, on
// 2 cores (two worker threads rendering whole clips from a shared queue, like `egogeo synth`'s
// pool), median of several runs; plus the per-frame cost by stage on one core, the JPEG encoder
// comparison (cv::imencode inside the render call vs sharp on the raw frame) and the end-to-end
// `synthesize` rate (frames, arrays, QA written to disk). Target: >= 50 frames/s on 2 cores.
//
//   npm run build && node bench/render.mjs [--runs 5] [--clips 16] [--workers 2]
// Writes bench/results/render.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import { loadQuestions } from '../dist/oracle/index.js';
import { native } from '../dist/native/index.js';
import { planDataset, synthesize } from '../dist/synth/index.js';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '5' }, clips: { type: 'string', default: '16' }, workers: { type: 'string', default: '2' } } });
const RUNS = Number(args.runs);
const CLIPS = Number(args.clips);
const WORKERS = Number(args.workers);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const questions = loadQuestions();
const clips = planDataset({ clips: CLIPS, seed: 11, preset: 'carla', questions });
const requests = clips.map((c) => c.render);
const frames = requests.reduce((s, r) => s + r.trajectory.t.length, 0);

// 1. One core, by stage.
const stage = { world: 0, render: 0, encode: 0, frames: 0 };
for (const r of requests.slice(0, 6)) {
  const res = native().renderClip({ ...r, output: { pixels: false, jpeg: true, jpegQuality: 90 } });
  stage.world += res.timing.world;
  stage.render += res.timing.render;
  stage.encode += res.timing.encode;
  stage.frames += res.jpegs.length;
}
const perFrame = {
  world: stage.world / stage.frames,
  render: stage.render / stage.frames,
  encode: stage.encode / stage.frames,
};
perFrame.total = perFrame.world + perFrame.render + perFrame.encode;

// 2. Encoder comparison on the same frames (one core each).
sharp.concurrency(1);
const raw = native().renderClip({ ...requests[0], output: { pixels: true, jpeg: true, jpegQuality: 90 } });
let t0 = performance.now();
let sharpBytes = 0;
for (const f of raw.frames) {
  sharpBytes += (await sharp(f, { raw: { width: raw.width, height: raw.height, channels: 1 } }).jpeg({ quality: 90 }).toBuffer()).length;
}
const encoders = {
  opencvImencodeMsPerFrame: raw.timing.encode / raw.frames.length,
  opencvKbPerFrame: raw.jpegs.reduce((s, j) => s + j.length, 0) / raw.frames.length / 1e3,
  sharpMsPerFrame: (performance.now() - t0) / raw.frames.length,
  sharpKbPerFrame: sharpBytes / raw.frames.length / 1e3,
};

// 3. Two cores: worker threads rendering whole clips (JPEG in the call) from a shared queue.
const addon = fileURLToPath(new URL('../build/Release/egogeo_native.node', import.meta.url));
const workerCode = `
const { parentPort, workerData } = require('node:worker_threads');
const a = require(workerData.addon);
a.setThreads(1);
parentPort.on('message', (req) => {
  if (req === null) { parentPort.close(); return; }
  const r = a.renderClip({ ...req, output: { pixels: false, jpeg: true, jpegQuality: 90 } });
  parentPort.postMessage(r.jpegs.length);
});`;
async function throughput() {
  const ws = Array.from({ length: WORKERS }, () => new Worker(workerCode, { eval: true, workerData: { addon } }));
  // warm up: load the addon in every worker
  await Promise.all(ws.map((w) => new Promise((res) => { w.once('message', res); w.postMessage({ ...requests[0], trajectory: { t: [0], x: [0], y: [0], yaw: [0] } }); })));
  let next = 0;
  let done = 0;
  const start = performance.now();
  await Promise.all(ws.map((w) => new Promise((res) => {
    const feed = () => {
      if (next >= requests.length) { res(); return; }
      w.postMessage(requests[next++]);
    };
    w.on('message', (n) => { done += n; feed(); });
    feed();
  })));
  const sec = (performance.now() - start) / 1000;
  await Promise.all(ws.map((w) => w.terminate()));
  return done / sec;
}
const runs = [];
for (let i = 0; i < RUNS; i++) runs.push(await throughput());

// 4. End to end: plan + render + JPEG + arrays + QA + index written (the synth command's path).
const e2e = [];
for (let i = 0; i < Math.min(3, RUNS); i++) {
  const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-render-'));
  try {
    const s = await synthesize({ out: join(tmp, 'd'), clips: CLIPS, seed: 11, preset: 'carla', workers: WORKERS, progress: false });
    e2e.push(s.frames / s.seconds);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const result = {
  resolution: '1280x720',
  preset: 'carla (noise 1.5, no blur, JPEG quality 90)',
  cores: WORKERS,
  clipsPerRun: CLIPS,
  framesPerRun: frames,
  runs: RUNS,
  framesPerSecond: median(runs),
  framesPerSecondRuns: runs,
  target: 50,
  meetsTarget: median(runs) >= 50,
  endToEndFramesPerSecond: median(e2e),
  endToEndRuns: e2e,
  oneCoreMsPerFrame: perFrame,
  jpegEncoders: encoders,
  defaultEncoder: 'opencv (cv::imencode)',
};
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/render.json', import.meta.url), `${JSON.stringify({ ...measuredWith(), ...result }, null, 2)}\n`);
const f1 = (x) => x.toFixed(1);
console.log(`renderer, 1280x720 + JPEG, ${WORKERS} cores: ${f1(result.framesPerSecond)} frames/s (median of ${RUNS}: ${runs.map(f1).join(', ')}; target 50)`);
console.log(`end to end (egogeo synth: files, arrays, QA): ${f1(result.endToEndFramesPerSecond)} frames/s`);
console.log(`one core, ms per frame: world ${perFrame.world.toFixed(2)}, render ${perFrame.render.toFixed(2)}, JPEG ${perFrame.encode.toFixed(2)}, total ${perFrame.total.toFixed(2)}`);
console.log(`JPEG encoders, ms per frame: cv::imencode ${encoders.opencvImencodeMsPerFrame.toFixed(2)} (${f1(encoders.opencvKbPerFrame)} kB), sharp ${encoders.sharpMsPerFrame.toFixed(2)} (${f1(encoders.sharpKbPerFrame)} kB)`);
