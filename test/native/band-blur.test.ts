/**
 * The direct road alignment's Gaussian blurs (native/vo/track/band_blur.cc) against cv::GaussianBlur of
 * the float frame's band, which they replace: every float the same, for each width's tail
 * (width mod 8), bands starting at the top, inside the kernel's reach of it and further down, both
 * sigmas the alignment uses. On rendered driving, noise, and KITTI frames (../shared).
 */
import { readFileSync } from 'node:fs';
import { arch } from 'node:os';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { bandBlur, type PixelFrame } from '../../src/native/index.js';
import { drivingClip } from '../helpers/render.js';
import { needsShared, sharedPath } from '../helpers/shared.js';
import { thrown } from '../helpers/throws.js';
import { NATIVE_BUILT } from '../run/fixtures.js';

/** Noise frames, one for each width mod 8 (the filters' scalar tails). */
function noise(width: number, height: number, seed: number): PixelFrame {
  const data = new Uint8Array(width * height);
  let s = seed >>> 0;
  for (let i = 0; i < data.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    data[i] = s >>> 24;
  }
  return { data, width, height };
}

/** Rows of the band where the two blurs differ (bitwise), as "row:col" of the first difference. */
function differences(f: PixelFrame, top: number, sigma: number): string[] {
  const own = bandBlur(f, { top, sigma }), ref = bandBlur(f, { top, sigma, reference: 'opencv' });
  expect(own.pixels.length).toBe(f.width * (f.height - top));
  const a = new Uint32Array(own.pixels.buffer), b = new Uint32Array(ref.pixels.buffer);
  const out: string[] = [];
  for (let y = 0; y < f.height - top; y++)
    for (let x = 0; x < f.width; x++)
      if (a[y * f.width + x] !== b[y * f.width + x]) {
        out.push(`${y + top}:${x}`);
        break;
      }
  return out;
}

describe.skipIf(!NATIVE_BUILT)('bandBlur', () => {
  it('computes the floats itself on an x86-64 CPU with AVX2 (else it is OpenCV, and the rest compares OpenCV with itself)', () => {
    const { own } = bandBlur(noise(40, 40, 1));
    // The CI and development machines have AVX2; elsewhere this only documents which path ran.
    if (arch() === 'x64' && own === false) console.warn('bandBlur: no AVX2/FMA here, the comparisons below are OpenCV against itself');
    expect(typeof own).toBe('boolean');
  });

  it('gives OpenCV\'s floats on noise, every width mod 8, bands from the top, within the kernel\'s reach of it and below', () => {
    for (let w = 32; w < 40; w++) {
      const f = noise(w, 61, w);
      for (const top of [0, 3, 12, 30, 59]) for (const sigma of [3, 1]) expect(differences(f, top, sigma), `width ${w} top ${top} sigma ${sigma}`).toEqual([]);
    }
  });

  it('gives OpenCV\'s floats on rendered driving (full and half width) with the alignment\'s band', () => {
    const clip = drivingClip({ frames: 2, speed: 10, yawRate: 0.1, seed: 3, fps: 10 });
    const f = clip.frames[1];
    // A half-size copy (every other pixel): another width's tail.
    const h: PixelFrame = { width: f.width >> 1, height: f.height >> 1, data: new Uint8Array((f.width >> 1) * (f.height >> 1)) };
    for (let y = 0; y < h.height; y++) for (let x = 0; x < h.width; x++) h.data[y * h.width + x] = f.data[2 * y * f.width + 2 * x];
    for (const g of [f, h]) for (const sigma of [3, 1]) expect(differences(g, Math.round(g.height * 0.45), sigma)).toEqual([]);
  });

  it.skipIf(!needsShared('KITTI frames', 'data/kitti/00/image_0/000000.jpg'))('gives OpenCV\'s floats on a KITTI frame', async () => {
    const { data, info } = await sharp(readFileSync(sharedPath('data/kitti/00/image_0', '000000.jpg'))).greyscale().raw().toBuffer({ resolveWithObject: true });
    const f: PixelFrame = { data: new Uint8Array(data), width: info.width, height: info.height };
    for (const sigma of [3, 1]) expect(differences(f, 150, sigma)).toEqual([]);
  });

  it('refuses bad input with one line naming it', () => {
    const f = noise(40, 40, 2);
    expect(thrown(() => bandBlur({ ...f, width: 39 })).message).toMatch(/^bandBlur: frame\.data has \d+ bytes, expected width\*height/);
    expect(thrown(() => bandBlur(f, { top: 40 })).message).toMatch(/options\.top must be in \[0, 39\]/);
    expect(thrown(() => bandBlur(f, { sigma: 0 })).message).toMatch(/options\.sigma must be in/);
    expect(thrown(() => bandBlur(f, { reference: 'ipp' as 'opencv' })).message).toMatch(/options\.reference must be one of/);
  });
});
