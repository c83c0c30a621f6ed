/**
 * The addon's frame caches (VoOptions.frameCache, native/vo/decode/frame_cache.h): clips that share
 * image files decode each file, and detect corners on each frame, once, and every result is the one
 * a fresh decode and detection give, whatever the photometric stage, the working size, the frames'
 * form (files or pixels) or the order of calls; a file rewritten in between (the caches are keyed by
 * content) is decoded again. Frames are rendered here and written as JPEG and PGM files.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frameCacheStats, type NativeClip, type NativeResult, processClip, processClipAsync, type VoOptions } from '../../src/native/index.js';
import { drivingClip, type SyntheticClip } from '../helpers/render.js';
import { thrown } from '../helpers/throws.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const BUILT = existsSync(ADDON);

/** What a result says about the motion (timing aside). */
const motion = (r: NativeResult) => ({ size: [r.width, r.height], rotations: Array.from(r.rotations), positions: Array.from(r.positions), pairs: r.pairs, speed: Array.from(r.speedProfile.speed) });

describe.skipIf(!BUILT)('the decoded-frame cache', () => {
  let dir: string;
  let rendered: SyntheticClip;
  let jpegs: string[];
  const opts: VoOptions = { cameraHeight: 1.5, scale: 'road' };
  /** Frames [from, to) of the rendered clip as files. */
  const window = (files: string[], from: number, to: number): NativeClip => ({ frames: files.slice(from, to), timestamps: rendered.timestamps.slice(from, to), intrinsics: rendered.intrinsics });
  const fresh = (clip: NativeClip, o: VoOptions = opts) => motion(processClip(clip, { ...o, frameCache: false }));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'egogeo-frame-cache-'));
    rendered = drivingClip({ frames: 9, speed: 10, yawRate: 0.1, seed: 47 });
    jpegs = [];
    for (const [k, f] of rendered.frames.entries()) {
      const j = join(dir, `${k}.jpg`);
      await sharp(Buffer.from(f.data), { raw: { width: f.width, height: f.height, channels: 1 } }).jpeg({ quality: 90 }).toFile(j);
      jpegs.push(j);
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('decodes the frames two overlapping windows share once, and answers as a fresh decode', () => {
    const a = window(jpegs, 0, 6), b = window(jpegs, 3, 9);
    const want = [fresh(a), fresh(b)];
    const before = frameCacheStats();
    const got = [motion(processClip(a, opts)), motion(processClip(b, opts))];
    const after = frameCacheStats();
    expect(got).toEqual(want);
    // Frames 3-5 were decoded for the first window (or earlier); at least those three hit for the second.
    expect(after.hits - before.hits).toBeGreaterThanOrEqual(3);
    expect(after.hits + after.misses - before.hits - before.misses).toBe(12);
    expect(after.frames).toBeGreaterThan(0);
    expect(after.bytes).toBe(after.frames * rendered.frames[0].width * rendered.frames[0].height);
    // The second window detected corners on frames the first had detected on.
    expect(after.corners.hits - before.corners.hits).toBeGreaterThan(0);
    expect(after.corners.entries).toBeGreaterThan(0);
    // frameCache: false neither reads nor fills it.
    processClip(a, { ...opts, frameCache: false });
    expect(frameCacheStats().hits + frameCacheStats().misses).toBe(after.hits + after.misses);
    expect(frameCacheStats().corners.hits + frameCacheStats().corners.misses).toBe(after.corners.hits + after.corners.misses);
  });

  it('gives every photometric stage and working size the pixels of a fresh decode (nothing writes into a kept frame)', () => {
    const clip = window(jpegs, 1, 7);
    const variants: VoOptions[] = [
      { ...opts, photometric: 'equalize' },
      { ...opts, photometric: 'clahe', denoiseSigma: 1 },
      { ...opts, photometric: 'global' },
      { ...opts, photometric: 'match' },
      { ...opts, photometric: 'gain', keepMatches: true },
      // Half size: libjpeg's DCT scaling (kept apart from the full-size decode), then the area average of the full-size one.
      { ...opts, downsample: 2, kltWindow: 9, minDistance: 4 },
      { ...opts, downsample: 2, kltWindow: 9, minDistance: 4, areaShrink: true },
    ];
    for (const v of variants) {
      const want = fresh(clip, v);
      // Twice through the cache: the second run reads only kept frames.
      expect(motion(processClip(clip, v))).toEqual(want);
      expect(motion(processClip(clip, v))).toEqual(want);
    }
    expect(fresh(clip)).toEqual(motion(processClip(clip, opts)));
    // Frames given as pixels: nothing to decode, their corners kept all the same.
    const pixels: NativeClip = { frames: rendered.frames.slice(1, 7), timestamps: rendered.timestamps.slice(1, 7), intrinsics: rendered.intrinsics };
    const before = frameCacheStats().corners.hits;
    expect(motion(processClip(pixels, opts))).toEqual(fresh(pixels));
    expect(motion(processClip(pixels, opts))).toEqual(fresh(pixels));
    expect(frameCacheStats().corners.hits).toBeGreaterThan(before);
  });

  it('serves calls in flight at once on the libuv pool alike', async () => {
    const a = window(jpegs, 0, 7), b = window(jpegs, 2, 9);
    const want = [fresh(a), fresh(b)];
    const got = await Promise.all([processClipAsync(a, opts), processClipAsync(b, opts), processClipAsync(a, opts)]);
    expect(got.map(motion)).toEqual([want[0], want[1], want[0]]);
  });

  it('decodes a file again once it was rewritten', () => {
    const pgms = rendered.frames.map((f, k) => {
      const p = join(dir, `${k}.pgm`);
      writeFileSync(p, Buffer.concat([Buffer.from(`P5\n${f.width} ${f.height}\n255\n`, 'latin1'), Buffer.from(f.data)]));
      return p;
    });
    const clip = window(pgms, 0, 6);
    const before = motion(processClip(clip, opts));
    // Frame 2's file now holds frame 8's pixels (same size, same inode, at once): the result must be the new file's.
    const f = rendered.frames[8];
    writeFileSync(pgms[2], Buffer.concat([Buffer.from(`P5\n${f.width} ${f.height}\n255\n`, 'latin1'), Buffer.from(f.data)]));
    const want = fresh(clip);
    expect(want).not.toEqual(before);
    expect(motion(processClip(clip, opts))).toEqual(want);
  });

  it('refuses a bad value with one line naming it', () => {
    expect(thrown(() => processClip(window(jpegs, 0, 3), { ...opts, frameCache: 'no' as unknown as boolean })).message).toMatch(/options\.frameCache/);
  });
});
