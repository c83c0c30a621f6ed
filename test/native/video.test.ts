/**
 * Video clips decoded inside the engine (processClip({ video }), native/vo/decode/video.cc): every frame or
 * the frames named, timestamps from the caller or the frame rate, clear errors for missing and
 * unreadable videos, and decoding in several worker threads at once (no main-thread decoder).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  it('names an empty file, a folder, a file without a video stream and a cut file (mid-frame or between frames)', async () => {
    const at = (name: string, data?: Buffer) => {
      const p = join(tmp, name);
      if (data) writeFileSync(p, data);
      return p;
    };
    const empty = at('empty.mp4', Buffer.alloc(0));
    expect(() => processClip({ video: empty })).toThrow(/processClip: '.*empty\.mp4' is not a readable video \(empty file\)$/);
    expect(() => probeVideo(empty)).toThrow(/empty file/);
    mkdirSync(at('folder.mp4'));
    expect(() => processClip({ video: at('folder.mp4') })).toThrow(/'.*folder\.mp4' is not a regular file$/);
    const audio = at('audio.mp4', wav(8000));
    expect(() => processClip({ video: audio })).toThrow(/'.*audio\.mp4' is not a readable video \(no video stream\)$/);
    expect(() => probeVideo(audio)).toThrow(/no video stream/);

    // moov first (as `-movflags faststart` writes it), so a cut file still opens and reads as a shorter one
    const { file, lastFrame } = faststart(readFileSync(mp4));
    const whole = at('faststart.mp4', file);
    expect(processClip({ video: whole }, { scale: 'none' }).positions).toEqual(processClip({ video: mp4 }, { scale: 'none' }).positions);
    const mid = at('cut-mid.mp4', file.subarray(0, Math.round(file.length * 0.6)));
    expect(probeVideo(mid).frames).toBe(N); // the index is all there
    expect(() => processClip({ video: mid })).toThrow(/'.*cut-mid\.mp4' is not a readable video \(truncated or damaged after frame \d\)$/);
    await expect(processClipAsync({ video: mid })).rejects.toThrow(/truncated or damaged/);
    const between = at('cut-between.mp4', file.subarray(0, file.length - lastFrame));
    expect(() => processClip({ video: between })).toThrow(new RegExp(`'.*cut-between\\.mp4' is not a readable video \\(truncated: ${N - 1} of the ${N} packets its index lists\\)$`));
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

/** A mono 16-bit WAV of `n` silent samples: a readable media file without a video stream. */
function wav(n: number): Buffer {
  const b = Buffer.alloc(44 + 2 * n);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + 2 * n, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(8000, 24);
  b.writeUInt32LE(16000, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(2 * n, 40);
  return b;
}

/**
 * An mp4 as FFmpeg's muxer writes it (ftyp, free, mdat, moov) with its moov moved before the mdat
 * and the chunk offsets (stco) moved with it; and the size of its last frame (the mdat's last bytes).
 */
function faststart(mp4: Buffer): { file: Buffer; lastFrame: number } {
  const boxes = (b: Buffer, from: number, to: number) => {
    const out: { at: number; size: number; type: string }[] = [];
    for (let at = from; at < to; at += b.readUInt32BE(at)) out.push({ at, size: b.readUInt32BE(at), type: b.toString('latin1', at + 4, at + 8) });
    return out;
  };
  const top = boxes(mp4, 0, mp4.length);
  expect(top.map((x) => x.type)).toEqual(['ftyp', 'free', 'mdat', 'moov']);
  const m = top[3];
  const moov = Buffer.from(mp4.subarray(m.at, m.at + m.size));
  let lastFrame = 0;
  const walk = (from: number, to: number) => {
    for (const x of boxes(moov, from, to)) {
      if (['trak', 'mdia', 'minf', 'stbl'].includes(x.type)) walk(x.at + 8, x.at + x.size);
      if (x.type === 'stco') {
        for (let i = 0, n = moov.readUInt32BE(x.at + 12); i < n; i++) moov.writeUInt32BE(moov.readUInt32BE(x.at + 16 + 4 * i) + m.size, x.at + 16 + 4 * i);
      }
      if (x.type === 'stsz') {
        const n = moov.readUInt32BE(x.at + 16);
        lastFrame = moov.readUInt32BE(x.at + 12) || moov.readUInt32BE(x.at + 20 + 4 * (n - 1));
      }
    }
  };
  walk(8, m.size);
  expect(lastFrame).toBeGreaterThan(0);
  const part = (x: { at: number; size: number }) => mp4.subarray(x.at, x.at + x.size);
  return { file: Buffer.concat([part(top[0]), moov, part(top[1]), part(top[2])]), lastFrame };
}
