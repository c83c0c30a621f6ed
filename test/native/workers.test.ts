/**
 * The addon is context-aware: it loads and runs in several worker_threads Workers at once (each
 * with its own instance), alongside the main thread, and every copy computes the same result.
 * The workers load build/Release/egogeo_native.node with require (createRequire-style), not the
 * compiled dist/, so the test needs no `npm run build`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { beforeAll, describe, expect, it } from 'vitest';
import { type NativeResult, processClip, processClipAsync } from '../../src/native/index.js';
import { drivingClip, type SyntheticClip } from '../helpers/render.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const BUILT = existsSync(ADDON);
if (!BUILT) console.warn(`[egogeo tests] ${ADDON} is not built (npx cmake-js compile): worker tests are skipped.`);

/** Worker body (CommonJS, eval'd): load the addon, run the clip `repeat` times, post the results. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const addon = require(workerData.addon);
const out = [];
for (let i = 0; i < workerData.repeat; i++) {
  const r = addon.processClip(workerData.clip, workerData.options);
  out.push({ rotations: r.rotations, positions: r.positions, pairs: r.pairs, version: addon.opencvVersion });
}
parentPort.postMessage(out);
`;

type Slim = Pick<NativeResult, 'rotations' | 'positions' | 'pairs'> & { version?: string };

function inWorker(clip: SyntheticClip, repeat = 1): Promise<Slim[]> {
  return new Promise((resolve, reject) => {
    const w = new Worker(WORKER, {
      eval: true,
      workerData: {
        addon: ADDON,
        repeat,
        clip: { frames: clip.frames, timestamps: clip.timestamps, intrinsics: clip.intrinsics },
        options: { cameraHeight: clip.cameraHeight },
      },
    });
    let result: Slim[] | undefined;
    w.once('message', (m: Slim[]) => (result = m));
    w.once('error', reject);
    w.once('exit', (code) => (code === 0 && result ? resolve(result) : reject(new Error(`worker exited with code ${code} and no result`))));
  });
}

describe.skipIf(!BUILT)('native engine in worker threads', () => {
  let clip: SyntheticClip;
  let main: NativeResult;
  beforeAll(() => {
    clip = drivingClip({ frames: 6, speed: 10, yawRate: 0.1, seed: 21 });
    main = processClip({ frames: clip.frames, timestamps: clip.timestamps, intrinsics: clip.intrinsics }, { cameraHeight: clip.cameraHeight });
  });

  const expectSame = (r: Slim) => {
    expect(r.rotations).toEqual(main.rotations);
    expect(r.positions).toEqual(main.positions);
    expect(r.pairs).toEqual(main.pairs);
  };

  it('two workers and the main thread run at once and agree exactly', async () => {
    expect(main.pairs.every((p) => p.quality === 'ok')).toBe(true);
    const workers = [inWorker(clip, 2), inWorker(clip, 2)];
    // Meanwhile the main thread keeps the addon busy too (sync and on the libuv pool).
    const async = processClipAsync({ frames: clip.frames, timestamps: clip.timestamps, intrinsics: clip.intrinsics }, { cameraHeight: clip.cameraHeight });
    const sync = processClip({ frames: clip.frames, timestamps: clip.timestamps, intrinsics: clip.intrinsics }, { cameraHeight: clip.cameraHeight });
    const [a, b] = await Promise.all(workers);
    expectSame(sync);
    expectSame(await async);
    for (const r of [...a, ...b]) {
      expectSame(r);
      expect(r.version).toMatch(/^4\./);
    }
  });

  it('loads again in fresh workers after the first ones exit', async () => {
    const [r] = await inWorker(clip);
    expectSame(r);
  });

  it('a bad clip in a worker throws a JS error there and leaves the others unharmed', async () => {
    const bad = { ...clip, timestamps: new Float64Array([0, 0.1, 0.1, 0.2, 0.3, 0.4]) };
    const [failed, ok] = await Promise.allSettled([inWorker(bad), inWorker(clip)]);
    expect(failed.status).toBe('rejected');
    expect(String((failed as PromiseRejectedResult).reason)).toMatch(/strictly increasing/);
    expect(ok.status).toBe('fulfilled');
    expectSame((ok as PromiseFulfilledResult<Slim[]>).value[0]);
  });
});

/**
 * Child-process body (CommonJS): workers terminated at four exact points, each reached by explicit
 * synchronisation rather than by timing. At each point the worker is inside JS code the addon
 * itself called (a Proxy's set trap while the module registers its exports; a getter of the clip
 * while processClip / processClipAsync read their arguments) or blocked while a call runs on the
 * libuv pool; it tells the parent and waits, and the parent terminates it. The N-API calls that
 * follow then fail in a terminating environment; the addon must swallow what it cannot throw
 * (NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS) instead of std::terminate, which aborted
 * `egogeo worker` when piscina's pool was destroyed while a thread was still loading the addon.
 * A worker that is not terminated at its point says so ('missed'), and the test fails.
 */
const TERMINATOR = `
const { Worker } = require('node:worker_threads');
const addon = process.argv[1];
const clipJson = require('node:fs').readFileSync(0, 'utf8'); // the clips come on stdin (too large for argv)
const decode = (c) => ({ ...c, frames: c.frames.map((f) => ({ ...f, data: Uint8Array.from(f.data) })), timestamps: Float64Array.from(c.timestamps) });
const clips = JSON.parse(clipJson);
const short = decode(clips.short), long = decode(clips.long);
const body = [
  "const { workerData: w, parentPort } = require('node:worker_threads');",
  "const wait = new Int32Array(new SharedArrayBuffer(4));",
  // At the point: tell the parent, then block until terminated (10 s without termination = missed).
  "const here = () => { parentPort.postMessage('at'); Atomics.wait(wait, 0, 0, 10000); parentPort.postMessage('missed'); };",
  "const trapped = (clip) => Object.defineProperty({ ...clip }, 'timestamps', { enumerable: true, get() { here(); return clip.timestamps; } });",
  "if (w.point === 'registering') {",
  "  const exportsTrap = new Proxy({}, { set(t, k, v) { if (k === 'processClip') here(); t[k] = v; return true; } });",
  "  process.dlopen({ exports: exportsTrap }, w.addon);",
  "} else {",
  "  const a = require(w.addon);",
  "  if (w.point === 'processClip arguments') a.processClip(trapped(w.short), {});",
  "  if (w.point === 'processClipAsync arguments') a.processClipAsync(trapped(w.short), {}).then(() => {}, () => {});",
  "  if (w.point === 'processClipAsync in flight') { a.processClipAsync(w.long, {}).then(() => parentPort.postMessage('missed'), () => {}); here(); }",
  "}",
].join('\\n');
// The clip is one the engine answers (checked here, on the main thread), so the calls are real.
console.log('pairs ' + require(addon).processClip(short, {}).pairs.filter((p) => p.quality === 'ok').length);
(async () => {
  const missed = [];
  for (const point of ['registering', 'processClip arguments', 'processClipAsync arguments', 'processClipAsync in flight']) {
    for (let i = 0; i < 5; i++) {
      const w = new Worker(body, { eval: true, workerData: { addon, short, long, point } });
      w.on('error', () => {});
      await new Promise((res, rej) => {
        w.on('message', (m) => { if (m === 'at') w.terminate().then(res, rej); else missed.push(point); });
        w.on('exit', res);
      });
    }
  }
  console.log(missed.length ? 'missed ' + missed.join(', ') : 'survived 20 terminations at 4 points');
})();
`;

describe.skipIf(!BUILT)('native engine in terminated worker threads', () => {
  it('workers terminated while the addon registers, while a call reads its arguments, and while an async call runs: the process survives', () => {
    const json = (c: SyntheticClip) => ({ frames: c.frames.map((f) => ({ ...f, data: Array.from(f.data) })), timestamps: Array.from(c.timestamps), intrinsics: c.intrinsics });
    const short = drivingClip({ frames: 3, speed: 10, yawRate: 0, seed: 5 });
    const long = drivingClip({ frames: 24, speed: 10, yawRate: 0.1, seed: 6 });
    const r = spawnSync(process.execPath, ['-e', TERMINATOR, ADDON], { input: JSON.stringify({ short: json(short), long: json(long) }), encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 26 });
    expect(r.error).toBeUndefined();
    expect(r.signal, r.stderr).toBeNull();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^pairs 2\nsurvived 20 terminations at 4 points$/m);
  }, 150_000);
});
