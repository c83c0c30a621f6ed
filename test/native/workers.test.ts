/**
 * The addon is context-aware: it loads and runs in several worker_threads Workers at once (each
 * with its own instance), alongside the main thread, and every copy computes the same result.
 * The workers load build/Release/egogeo_native.node with require (createRequire-style), not the
 * compiled dist/, so the test needs no `npm run build`.
 */
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
