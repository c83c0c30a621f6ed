/**
 * Video clips decoded inside the engine (processClip({ video }), native/vo/video.cc): every frame or
 * the frames named, timestamps from the caller or the frame rate, clear errors for missing and
 * unreadable videos, and decoding in several worker threads at once (no main-thread decoder).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NativeResult, probeVideo, processClip, processClipAsync, renderClip } from '../../src/native/index.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const BUILT = existsSync(ADDON);

const N = 8;
const FPS = 10;

describe.skipIf(!BUILT)('video clips in the engine', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'egogeo-video-'));
  const mp4 = join(tmp, 'clip.mp4');
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  beforeAll(() => {
    const ramp = (f: (i: number) => number) => Array.from({ length: N }, (_, i) => f(i));
    renderClip({
      trajectory: { t: ramp((i) => i / FPS), x: ramp((i) => i * 0.8), y: ramp(() => 0), yaw: ramp((i) => i * 0.01) },
      camera: { width: 320, height: 192 },
      world: { seed: 5 },
      output: { pixels: false, videoPath: mp4, videoFps: FPS },
    });
  });

  it("probeVideo: the container's frame count, rate and size", () => {
    expect(probeVideo(mp4)).toEqual({ frames: N, fps: FPS, width: 320, height: 192 });
  });

  it('decodes every frame; timestamps from the container frame rate', () => {
    const r = processClip({ video: mp4 }, { scale: 'none' });
    expect(r.video).toEqual({ frames: N, fps: FPS });
    expect(Array.from(r.frameIndices!)).toEqual([...Array(N).keys()]);
    expect(Array.from(r.timestamps!)).toEqual([...Array(N).keys()].map((i) => i / FPS));
    expect(r.width).toBe(320);
    expect(r.rotations.length).toBe(9 * N);
    expect(r.pairs).toHaveLength(N - 1);
    expect(r.timing.decode).toBeGreaterThan(0);
  });

  it('uses the frames named, with the timestamps given (or index / clip.fps)', () => {
    const r = processClip({ video: mp4, frameIndices: [0, 3, 7], timestamps: [0, 0.31, 0.72] }, { scale: 'none' });
    expect(Array.from(r.frameIndices!)).toEqual([0, 3, 7]);
    expect(Array.from(r.timestamps!)).toEqual([0, 0.31, 0.72]);
    expect(r.pairs).toHaveLength(2);
    const f = processClip({ video: mp4, frameIndices: [1, 2], fps: 20 }, { scale: 'none' });
    expect(Array.from(f.timestamps!)).toEqual([0.05, 0.1]);
  });

  it('gives the same estimate through the async form', async () => {
    const a: NativeResult = await processClipAsync({ video: mp4 }, { scale: 'none' });
    const s = processClip({ video: mp4 }, { scale: 'none' });
    expect(a.rotations).toEqual(s.rotations);
    expect(a.positions).toEqual(s.positions);
  });

  it('names missing and unreadable videos and inconsistent requests', async () => {
    const junk = join(tmp, 'junk.mp4');
    writeFileSync(junk, 'not a video\n');
    expect(() => processClip({ video: join(tmp, 'none.mp4') })).toThrow(/processClip: '.*none\.mp4' does not exist/);
    expect(() => processClip({ video: junk })).toThrow(/processClip: '.*junk\.mp4' is not a readable video/);
    await expect(processClipAsync({ video: junk })).rejects.toThrow(/is not a readable video/);
    expect(() => probeVideo(junk)).toThrow(/probeVideo: '.*junk\.mp4' is not a readable video/);
    expect(() => processClip({ video: mp4, timestamps: [0, 0.1] })).toThrow(new RegExp(`has ${N} frames but clip.timestamps has 2 entries`));
    expect(() => processClip({ video: mp4, frameIndices: [0, N] })).toThrow(new RegExp(`names frame ${N} but clip.video .* has ${N} frames`));
    expect(() => processClip({ video: mp4, frameIndices: [2, 1] })).toThrow(/frameIndices must be increasing/);
    expect(() => processClip({ video: mp4, frameIndices: [0, 1], timestamps: [0] })).toThrow(/1 entries for 2 clip.frameIndices/);
    expect(() => processClip({ video: mp4, frames: ['a.jpg', 'b.jpg'], timestamps: [0, 1] } as never)).toThrow(/not both/);
    expect(() => processClip({ video: '' })).toThrow(/clip.video must be a video file path/);
  });

  it('decodes in several worker threads at once, each with the same result', async () => {
    const body = `
      const { parentPort, workerData } = require('node:worker_threads');
      const addon = require(workerData.addon);
      addon.setThreads(1);
      const r = addon.processClip({ video: workerData.mp4 }, { scale: 'none' });
      parentPort.postMessage({ positions: r.positions, frames: r.video.frames });`;
    const run = () =>
      new Promise<{ positions: Float64Array; frames: number }>((resolve, reject) => {
        const w = new Worker(body, { eval: true, workerData: { addon: ADDON, mp4 } });
        w.once('message', resolve);
        w.once('error', reject);
      });
    const main = processClip({ video: mp4 }, { scale: 'none' });
    const results = await Promise.all([run(), run(), run()]);
    for (const r of results) {
      expect(r.frames).toBe(N);
      expect(r.positions).toEqual(main.positions);
    }
  });
});
