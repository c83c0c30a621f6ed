/**
 * The tracker's FAST corners (native/vo/track/fast.cc) against cv::FAST with non-maximum suppression,
 * which they replace: the same corners, in the same order, with the same scores (the tracker sorts
 * them by score, ties included), for thresholds 0..255, every width mod 32 near the vector's size,
 * widths below the vector's (the scalar path), noise, rendered driving and KITTI frames (../shared).
 */
import { readFileSync } from 'node:fs';
import { arch } from 'node:os';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { fastCorners, type PixelFrame } from '../../src/native/index.js';
import { drivingClip } from '../helpers/render.js';
import { needsShared, sharedPath } from '../helpers/shared.js';
import { thrown } from '../helpers/throws.js';
import { NATIVE_BUILT } from '../run/fixtures.js';

/** Noise (smoothed by `blur` box passes, so corners of every strength), a frame of w x h. */
function noise(width: number, height: number, seed: number, blur = 1): PixelFrame {
  let v = new Float64Array(width * height);
  let s = seed >>> 0;
  for (let i = 0; i < v.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = s >>> 24;
  }
  for (let b = 0; b < blur; b++) {
    const o = new Float64Array(v.length);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        let sum = 0, n = 0;
        for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) if (x + dx >= 0 && x + dx < width && y + dy >= 0 && y + dy < height) (sum += v[(y + dy) * width + x + dx]), n++;
        o[y * width + x] = sum / n;
      }
    v = o;
  }
  return { data: Uint8Array.from(v, (x) => Math.round(x)), width, height };
}

/** How fast.cc's list differs from cv::FAST's (an empty string: not at all). */
function difference(f: PixelFrame, threshold: number): string {
  const own = fastCorners(f, { threshold }), ref = fastCorners(f, { threshold, reference: 'opencv' });
  if (own.scores.length !== ref.scores.length) return `${own.scores.length} corners, OpenCV ${ref.scores.length}`;
  for (let i = 0; i < ref.scores.length; i++)
    if (own.points[2 * i] !== ref.points[2 * i] || own.points[2 * i + 1] !== ref.points[2 * i + 1] || own.scores[i] !== ref.scores[i])
      return `corner ${i}: (${own.points[2 * i]}, ${own.points[2 * i + 1]}) score ${own.scores[i]}, OpenCV (${ref.points[2 * i]}, ${ref.points[2 * i + 1]}) ${ref.scores[i]}`;
  return '';
}

describe.skipIf(!NATIVE_BUILT)('fastCorners', () => {
  it('computes the corners itself on x86-64 with AVX2 (else it is OpenCV, and the rest compares OpenCV with itself)', () => {
    const { own } = fastCorners(noise(40, 40, 1, 0));
    if (arch() === 'x64' && own === false) console.warn('fastCorners: no AVX2 here, the comparisons below are OpenCV against itself');
    expect(typeof own).toBe('boolean');
  });

  it('lists cv::FAST\'s corners on noise: thresholds 0 to 255, widths around the vector\'s 32, sizes too small for any corner', () => {
    let corners = 0;
    for (const [w, h] of [[16, 16], [17, 30], [30, 17], [37, 16], [38, 20], [39, 21], [40, 33], [64, 40], [71, 45], [100, 16]]) {
      for (const blur of [0, 1, 2]) {
        const f = noise(w, h, w * 31 + h + blur, blur);
        for (const t of [0, 1, 5, 12, 20, 40, 100, 254, 255]) {
          expect(difference(f, t), `${w}x${h} blur ${blur} threshold ${t}`).toBe('');
          corners += fastCorners(f, { threshold: t }).scores.length;
        }
      }
    }
    expect(corners).toBeGreaterThan(1000);
  });

  it('lists cv::FAST\'s corners on rendered driving at the tracker\'s thresholds', () => {
    const clip = drivingClip({ frames: 2, speed: 10, yawRate: 0.1, seed: 5, fps: 10 });
    for (const t of [6, 12, 25]) {
      expect(difference(clip.frames[1], t)).toBe('');
      expect(fastCorners(clip.frames[1], { threshold: t }).scores.length).toBeGreaterThan(50);
    }
  });

  it.skipIf(!needsShared('KITTI frames', 'data/kitti/00/image_0/000000.jpg'))('lists cv::FAST\'s corners on a KITTI frame', async () => {
    const { data, info } = await sharp(readFileSync(sharedPath('data/kitti/00/image_0', '000000.jpg'))).greyscale().raw().toBuffer({ resolveWithObject: true });
    const f: PixelFrame = { data: new Uint8Array(data), width: info.width, height: info.height };
    for (const t of [12, 30]) expect(difference(f, t)).toBe('');
    expect(fastCorners(f).scores.length).toBeGreaterThan(5000);
  });

  it('refuses bad input with one line naming it', () => {
    const f = noise(40, 40, 2, 0);
    expect(thrown(() => fastCorners({ ...f, height: 39 })).message).toMatch(/^fastCorners: frame\.data has \d+ bytes, expected width\*height/);
    expect(thrown(() => fastCorners(f, { threshold: 256 })).message).toMatch(/options\.threshold must be in \[0, 255\]/);
    expect(thrown(() => fastCorners(f, { reference: 'ipp' as 'opencv' })).message).toMatch(/options\.reference must be one of/);
  });
});
