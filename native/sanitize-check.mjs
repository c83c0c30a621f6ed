#!/usr/bin/env node
// Runs the ASan/UBSan build of the engine (`npm run build:native:asan`) over every KITTI window in
// ../shared/data/kitti (all frames, and the default at the published 10 frames: both sizes), an mp4 it renders and decodes (FFmpeg, native/vo/decode/video.cc), plus bad input
// (missing file, corrupt JPEG, wrong sizes; an empty, a truncated and a non-video "mp4"), and the GPU path
// (host reference) with three clips on one shared context. Node itself is not
// instrumented, so the sanitizer runtime is preloaded; any report aborts the process non-zero.
//   npm run build && npm run build:native:asan && node native/sanitize-check.mjs
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const addon = `${ROOT}build-asan/Release/egogeo_native.node`;
if (!existsSync(addon)) {
  console.error('egogeo: build-asan/Release/egogeo_native.node is missing; run `npm run build:native:asan` first');
  process.exit(1);
}
if (process.argv[2] !== '--child') {
  const lib = (name) => spawnSync('g++', [`-print-file-name=${name}`], { encoding: 'utf8' }).stdout.trim();
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child'], {
    stdio: 'inherit',
    env: {
      ...process.env,
      EGOGEO_NATIVE: addon,
      LD_PRELOAD: `${lib('libasan.so')} ${lib('libubsan.so')}`,
      // Node's own allocations at exit are not ours to judge; the addon's errors abort at once.
      ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=1:halt_on_error=1',
      UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
    },
  });
  process.exit(r.status ?? 1);
}

const { kittiClips, readKittiSequence } = await import('../dist/datasets/kitti.js');
const { estimateClip } = await import('../dist/vo/estimate.js');
const { engineConfig, engineInput } = await import('../dist/vo/config.js');
const { loadFrames } = await import('../dist/vo/frames.js');
const { native, processClip } = await import('../dist/native/index.js');
const { mkdtempSync, readFileSync, writeFileSync } = await import('node:fs');
const { join } = await import('node:path');
const { tmpdir } = await import('node:os');

const shared = fileURLToPath(new URL('../../shared/data/kitti', import.meta.url));
let clips = 0;
for (const seq of ['00', '01', '06']) {
  if (!existsSync(join(shared, seq))) continue;
  for (const clip of kittiClips(readKittiSequence(join(shared, seq)))) {
    estimateClip(clip);
    // The default at the published 10 frames: both tracking sizes in one call over frames decoded
    // once, full size's tracks refined with their patches' growth, every pair's direct alignment.
    const ten10 = engineInput(loadFrames(clip), engineConfig({ frames: 10 }));
    estimateClip(ten10.clip, ten10.options, ten10.alternative);
    // The published baselines (native/baselines/) on the same window's 10 frames.
    const ten = [0, 3, 7, 10, 13, 17, 20, 23, 27, 30].map((i) => clip.frames[i]);
    native().baselineSignals({ method: 'vo-proxy', frames: ten });
    native().baselineSignals({ method: 'flow-heuristic', frames: ten });
    clips++;
  }
}
// The stages that replace OpenCV calls (fast.cc, band_blur.cc) at every width mod 32 and the
// smallest frames, where their vectors' last, overlapping reads sit at the frame's edge.
const { bandBlur, fastCorners } = await import('../dist/native/index.js');
let edgeFrames = 0;
for (const [w, h] of [[16, 16], [17, 19], [31, 16], [37, 23], [38, 40], ...Array.from({ length: 32 }, (_, k) => [64 + k, 20])]) {
  const data = Uint8Array.from({ length: w * h }, (_, i) => (i * 2654435761) >>> 24);
  const f = { data, width: w, height: h };
  for (const threshold of [0, 12, 255]) fastCorners(f, { threshold });
  for (const top of [0, 5, h - 1]) for (const sigma of [3, 1]) bandBlur(f, { top, sigma });
  edgeFrames++;
}
const dir = mkdtempSync(join(tmpdir(), 'egogeo-asan-'));
writeFileSync(join(dir, 'corrupt.jpg'), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 5]));
// A rendered mp4 (decoded whole, then a few frames of it), and broken ones.
const mp4 = join(dir, 'clip.mp4');
const ramp = (n, f) => Array.from({ length: n }, (_, i) => f(i));
native().renderClip({
  trajectory: { t: ramp(12, (i) => i * 0.1), x: ramp(12, (i) => i * 0.8), y: ramp(12, () => 0), yaw: ramp(12, (i) => i * 0.01) },
  camera: { width: 320, height: 192 },
  world: { seed: 3 },
  output: { pixels: false, videoPath: mp4, videoFps: 10 },
});
native().probeVideo(mp4);
// Highway speed at 0.33 s a frame (the direct road alignment, native/vo/scale/road_direct.cc), as pixels.
const fast = native().renderClip({
  trajectory: { t: ramp(10, (i) => i / 3), x: ramp(10, (i) => (i * 25) / 3), y: ramp(10, () => 0), yaw: ramp(10, () => 0) },
  camera: { width: 640, height: 360 },
  world: { seed: 5, environment: 'highway' },
});
processClip({ frames: fast.frames.map((data) => ({ data, width: fast.width, height: fast.height })), timestamps: ramp(10, (i) => i / 3), intrinsics: fast.intrinsics }, { cameraHeight: 1.65, downsample: 2, kltWindow: 9, kltLevels: 3, minDistance: 4 });
processClip({ video: mp4 });
processClip({ video: mp4, frameIndices: [0, 3, 6, 9], timestamps: [0, 0.3, 0.6, 0.9] });
for (const method of ['vo-proxy', 'flow-heuristic']) native().baselineSignals({ method, video: mp4, frameIndices: [0, 3, 6, 9] });
native().referenceFrames({ video: mp4, frameIndices: [0, 5], paths: [join(dir, 'f0.jpg'), join(dir, 'f5.jpg')] });
const bytes = readFileSync(mp4);
writeFileSync(join(dir, 'empty.mp4'), Buffer.alloc(0));
writeFileSync(join(dir, 'half.mp4'), bytes.subarray(0, bytes.length >> 1));
writeFileSync(join(dir, 'text.mp4'), 'not a video\n');
const bad = [
  { frames: [join(dir, 'missing.jpg'), join(dir, 'missing.jpg')], timestamps: [0, 0.1] },
  { frames: [join(dir, 'corrupt.jpg'), join(dir, 'corrupt.jpg')], timestamps: [0, 0.1] },
  { frames: [{ data: new Uint8Array(64 * 64), width: 64, height: 64 }, { data: new Uint8Array(80 * 64), width: 80, height: 64 }], timestamps: [0, 0.1] },
  { frames: [{ data: new Uint8Array(64 * 64), width: 64, height: 64 }, { data: new Uint8Array(64 * 64), width: 64, height: 64 }], timestamps: [0, 0.1] },
  ...['empty.mp4', 'half.mp4', 'text.mp4', 'missing.mp4'].map((f) => ({ video: join(dir, f) })),
];
let errors = 0;
for (const r of [{ method: 'vo-proxy', frames: [join(dir, 'corrupt.jpg'), join(dir, 'corrupt.jpg')] }, { method: 'flow-heuristic', video: join(dir, 'half.mp4') }, { method: 'vo-proxy', video: mp4, frameIndices: [0, 99] }]) {
  try {
    native().baselineSignals(r);
  } catch {
    errors++;
  }
}
for (const c of bad) {
  try {
    processClip(c);
  } catch {
    errors++;
  }
}
// The GPU path through the library's host reference (where libegogeo_gpu was built beside the
// addon): three windows at once on one shared device context, their calls batched (gpu_backend.cc).
let gpu = '';
if (existsSync(`${ROOT}build-asan/Release/libegogeo_gpu.so`) && existsSync(join(shared, '00'))) {
  process.env.EGOGEO_GPU_REFERENCE = '1';
  const { processClipAsync, gpuInfo } = await import('../dist/native/index.js');
  const windows = kittiClips(readKittiSequence(join(shared, '00'))).slice(0, 3);
  const before = gpuInfo().shared;
  await Promise.all(windows.map((c) => {
    const pick = [0, 3, 7, 10, 13, 17, 20, 23, 27, 30];
    return processClipAsync({ frames: pick.map((i) => c.frames[i]), timestamps: pick.map((i) => c.timestamps[i]), intrinsics: c.camera.intrinsics }, { device: 'gpu', cameraHeight: c.camera.height });
  }));
  const after = gpuInfo().shared;
  gpu = `; the GPU path (host reference): ${windows.length} windows at once, ${after.contexts - before.contexts} shared context, ${after.jobs - before.jobs} jobs in ${after.calls - before.calls} calls`;
}
console.log(`sanitizer check: ${clips} KITTI windows (engine and both published baselines), FAST and the road blur on ${edgeFrames} edge-size frames, a rendered mp4 and ${bad.length + 3} bad inputs (${errors} rejected with a JS error), no ASan/UBSan report${gpu}`);
