/**
 * processClip's areaShrink: image files below their own size are decoded at their stored size and
 * area-averaged, exactly as frames given as pixels are (resolution 'auto''s half-size run sees the
 * pixels of its full-size run, vo/estimate.ts), where without it libjpeg's DCT scaling gives other
 * pixels. Frames are rendered here and written as PGM and JPEG files.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NativeClip, type NativeResult, processClip, processClipAsync, type VoOptions } from '../../src/native/index.js';
import { drivingClip, type SyntheticClip } from '../helpers/render.js';
import { thrown } from '../helpers/throws.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const BUILT = existsSync(ADDON);

/** What a result says about the motion and the work's inputs (timing aside). */
const motion = (r: NativeResult) => ({ size: [r.width, r.height], rotations: Array.from(r.rotations), positions: Array.from(r.positions), pairs: r.pairs, speed: Array.from(r.speedProfile.speed) });

describe.skipIf(!BUILT)('processClip with areaShrink', () => {
  let dir: string;
  let rendered: SyntheticClip;
  let pgm: NativeClip;
  let jpeg: NativeClip;
  let pixels: NativeClip;
  let jpegPixels: NativeClip;
  const full: VoOptions = { cameraHeight: 1.5, scale: 'road' };
  const half: VoOptions = { cameraHeight: 1.5, scale: 'road', downsample: 2, kltWindow: 9, minDistance: 4 };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'egogeo-shrink-'));
    rendered = drivingClip({ frames: 6, speed: 10, yawRate: 0.1, seed: 31 });
    const pgms: string[] = [], jpegs: string[] = [];
    const decoded: { data: Uint8Array; width: number; height: number }[] = [];
    for (const [k, f] of rendered.frames.entries()) {
      const p = join(dir, `${k}.pgm`);
      writeFileSync(p, Buffer.concat([Buffer.from(`P5\n${f.width} ${f.height}\n255\n`, 'latin1'), Buffer.from(f.data)]));
      pgms.push(p);
      const j = join(dir, `${k}.jpg`);
      await sharp(Buffer.from(f.data), { raw: { width: f.width, height: f.height, channels: 1 } }).jpeg({ quality: 90 }).toFile(j);
      jpegs.push(j);
      const { data, info } = await sharp(j).greyscale().raw().toBuffer({ resolveWithObject: true });
      decoded.push({ data: new Uint8Array(data), width: info.width, height: info.height });
    }
    const base = { timestamps: rendered.timestamps, intrinsics: rendered.intrinsics };
    pgm = { frames: pgms, ...base };
    jpeg = { frames: jpegs, ...base };
    pixels = { frames: rendered.frames, ...base };
    jpegPixels = { frames: decoded, ...base };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sees the area average of the full-size decode, as frames given as pixels', async () => {
    const a = processClip(pgm, { ...half, areaShrink: true });
    expect(motion(a)).toEqual(motion(processClip(pixels, half)));
    expect(a.width).toBe(rendered.frames[0].width); // the caller's pixels, whatever the working size
    expect(a.pairs.some((p) => p.distance > 0)).toBe(true);
    expect(motion(await processClipAsync(pgm, { ...half, areaShrink: true }))).toEqual(motion(a));
    // Full size has nothing to shrink: the flag changes nothing.
    expect(motion(processClip(pgm, { ...full, areaShrink: true }))).toEqual(motion(processClip(pgm, full)));
  });

  it('replaces libjpeg\'s DCT scaling for JPEG files', () => {
    const dct = processClip(jpeg, half), area = processClip(jpeg, { ...half, areaShrink: true });
    // libjpeg-turbo decodes as sharp's libjpeg does at full size; the DCT-scaled half size differs.
    expect(motion(area)).toEqual(motion(processClip(jpegPixels, half)));
    expect(motion(dct)).not.toEqual(motion(area));
  });

  it('refuses a bad value with one line naming it', () => {
    expect(thrown(() => processClip(pgm, { ...half, areaShrink: 1 as unknown as boolean })).message).toMatch(/options\.areaShrink/);
  });

  it('names a missing frame once, as without it', () => {
    const broken = { ...pgm, frames: [...(pgm.frames as string[]).slice(0, 5), join(dir, 'missing.pgm')] };
    const plain = thrown(() => processClip(broken, half)).message;
    expect(plain).toMatch(/missing\.pgm/);
    expect(thrown(() => processClip(broken, { ...half, areaShrink: true })).message).toBe(plain);
  });
});
