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
 * Child-process body (CommonJS): 100 workers, each loading the addon and starting VO calls (on the
 * libuv pool and on its own thread), terminated after 0–40 ms — while the module registers, mid-call,
 * or while a promise resolves. N-API calls then fail in the terminating environment; the addon must
 * swallow what it cannot throw (NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS) instead of std::terminate,
 * which aborted `egogeo worker` when piscina's pool was destroyed while a thread was still loading.
 */
const TERMINATOR = `
const { Worker } = require('node:worker_threads');
const addon = process.argv[1];
const clipJson = require('node:fs').readFileSync(0, 'utf8'); // the clip comes on stdin (too large for argv)
// Each worker gets the clip (typed arrays, cloned) and starts the VO on the libuv pool and on its own thread.
const decode = (json) => { const c = JSON.parse(json); return { ...c, frames: c.frames.map((f) => ({ ...f, data: Uint8Array.from(f.data) })), timestamps: Float64Array.from(c.timestamps) }; };
const clip = decode(clipJson);
const body = "const { workerData: w } = require('node:worker_threads'); const a = require(w.addon);" +
  "a.processClipAsync(w.clip, {}).then(() => {}, () => {}); a.processClip(w.clip, {});";
// The clip is one the engine answers (checked here, on the main thread), so the workers are cut off inside real calls.
console.log('pairs ' + require(addon).processClip(clip, {}).pairs.filter((p) => p.quality === 'ok').length);
(async () => {
  for (let i = 0; i < 100; i++) {
    const w = new Worker(body, { eval: true, workerData: { addon, clip } });
    w.on('error', () => {});
    await new Promise((r) => setTimeout(r, i % 41));
    await w.terminate();
  }
  console.log('survived 100 terminations');
})();
`;

describe.skipIf(!BUILT)('native engine in terminated worker threads', () => {
  it('workers terminated while loading the addon or mid-call leave the process running', () => {
    const c = drivingClip({ frames: 3, speed: 10, yawRate: 0, seed: 5 });
    const clip = JSON.stringify({ frames: c.frames.map((f) => ({ ...f, data: Array.from(f.data) })), timestamps: Array.from(c.timestamps), intrinsics: c.intrinsics });
    const r = spawnSync(process.execPath, ['-e', TERMINATOR, ADDON], { input: clip, encoding: 'utf8', timeout: 120_000 });
    expect(r.error).toBeUndefined();
    expect(r.signal, r.stderr).toBeNull();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^pairs 2\nsurvived 100 terminations$/m);
  }, 150_000);
});
