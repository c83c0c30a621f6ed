/**
 * The tracker's own pyramidal KLT (native/vo/track/klt.cc, through kltTrack) against OpenCV's
 * calcOpticalFlowPyrLK on the same pyramids: the same algorithm, its window sums exact integers
 * where OpenCV's are float, so the same tracks but for the few points whose window is nearly flat
 * (a float rounding there moves the answer) or whose last step sits on the stopping threshold.
 * On rendered frames with a known shift, on rendered driving, and on KITTI frames (../shared).
 */
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { kltTrack, type KltOptions, type PixelFrame } from '../../src/native/index.js';
import { drivingClip } from '../helpers/render.js';
import { needsShared, sharedPath } from '../helpers/shared.js';
import { thrown } from '../helpers/throws.js';
import { NATIVE_BUILT } from '../run/fixtures.js';

/** A grid of points `margin` px inside the frame. */
function grid(f: PixelFrame, step: number, margin = 4): Float32Array {
  const p: number[] = [];
  for (let y = margin; y < f.height - margin; y += step) for (let x = margin; x < f.width - margin; x += step) p.push(x + 0.37, y + 0.61);
  return Float32Array.from(p);
}

/** How egogeo's tracks compare with OpenCV's for the same points and options. */
function agreement(a: PixelFrame, b: PixelFrame, pts: Float32Array, o: KltOptions) {
  const e = kltTrack(a, b, pts, o), r = kltTrack(a, b, pts, { ...o, reference: 'opencv' });
  const n = pts.length / 2;
  let both = 0, statusDiffers = 0, within1e3 = 0, within5e2 = 0, found = 0;
  for (let i = 0; i < n; i++) {
    if (e.status[i] !== r.status[i]) statusDiffers++;
    if (r.status[i]) found++;
    if (!e.status[i] || !r.status[i]) continue;
    both++;
    const d = Math.hypot(e.points[2 * i] - r.points[2 * i], e.points[2 * i + 1] - r.points[2 * i + 1]);
    if (d <= 1e-3) within1e3++;
    if (d <= 0.05) within5e2++;
  }
  return { n, found, statusDiffers, both, within1e3, within5e2, e, r };
}

describe.skipIf(!NATIVE_BUILT)('kltTrack', () => {
  const clip = drivingClip({ frames: 4, speed: 10, yawRate: 0.1, seed: 7, fps: 3 });

  it('finds a known sub-pixel shift as OpenCV does', () => {
    // The next frame is the previous one shifted by (3.25, -1.5) px: a point p goes to p + shift.
    const a = clip.frames[0];
    const [dx, dy] = [3.25, -1.5];
    const b = { width: a.width, height: a.height, data: new Uint8Array(a.data.length) };
    // Bilinear resampling of a at (x - dx, y - dy).
    for (let y = 0; y < a.height; y++)
      for (let x = 0; x < a.width; x++) {
        const sx = Math.min(a.width - 2, Math.max(0, x - dx)), sy = Math.min(a.height - 2, Math.max(0, y - dy));
        const x0 = Math.floor(sx), y0 = Math.floor(sy), fx = sx - x0, fy = sy - y0;
        const at = (u: number, v: number) => a.data[v * a.width + u];
        b.data[y * a.width + x] = Math.round((1 - fy) * ((1 - fx) * at(x0, y0) + fx * at(x0 + 1, y0)) + fy * ((1 - fx) * at(x0, y0 + 1) + fx * at(x0 + 1, y0 + 1)));
      }
    const pts = grid(a, 23, 20);
    const g = agreement(a, b, pts, {});
    const errs: number[] = [];
    for (let i = 0; i < g.n; i++) if (g.e.status[i]) errs.push(Math.hypot(g.e.points[2 * i] - pts[2 * i] - dx, g.e.points[2 * i + 1] - pts[2 * i + 1] - dy));
    errs.sort((p, q) => p - q);
    expect(errs.length).toBeGreaterThan(0.9 * g.n);
    expect(errs[Math.floor(errs.length / 2)]).toBeLessThan(0.05);
    expect(g.statusDiffers).toBe(0);
    expect(g.within1e3).toBeGreaterThanOrEqual(0.99 * g.both);
  });

  it('tracks rendered driving as OpenCV does, at both sizes\' windows, with and without starting guesses', () => {
    const [a, b] = [clip.frames[0], clip.frames[1]];
    const pts = grid(a, 7);
    for (const o of [{ window: 13, levels: 4 }, { window: 9, levels: 3 }, { window: 21, levels: 2, iterations: 30, epsilon: 0.01 }] as KltOptions[]) {
      const g = agreement(a, b, pts, o);
      expect(g.found).toBeGreaterThan(0.5 * g.n);
      expect(g.statusDiffers).toBeLessThanOrEqual(0.002 * g.n);
      expect(g.within1e3).toBeGreaterThanOrEqual(0.99 * g.both);
      // Started from OpenCV's own answers, both stay there.
      const init = agreement(a, b, pts, { ...o, initial: g.r.points });
      expect(init.within1e3).toBeGreaterThanOrEqual(0.99 * init.both);
    }
  });

  it('gives the same bits on every instruction set (scalar, SSE2, AVX2, AVX-512 where the CPU has them), windows 9 to 21', () => {
    const [a, b] = [clip.frames[0], clip.frames[2]];
    // Points across the whole frame, the right border included (the paths read past a window's row).
    const pts = grid(a, 5, 1);
    for (const o of [{ window: 13, levels: 4 }, { window: 9, levels: 3 }, { window: 16, levels: 3 }, { window: 21, levels: 2 }] as KltOptions[]) {
      const runs = (['scalar', 'sse2', 'avx2', 'avx512', 'best'] as const).map((instructions) => kltTrack(a, b, pts, { ...o, instructions }));
      expect(runs[0].status.reduce((n, s) => n + s, 0)).toBeGreaterThan(0.5 * (pts.length / 2));
      for (const r of runs.slice(1)) {
        expect(Buffer.from(r.status.buffer).equals(Buffer.from(runs[0].status.buffer))).toBe(true);
        expect(Buffer.from(r.points.buffer).equals(Buffer.from(runs[0].points.buffer))).toBe(true);
      }
    }
  });

  it.skipIf(!needsShared('KITTI frames', 'data/kitti/00/image_0/000000.jpg', 'data/kitti/00/image_0/000003.jpg'))('tracks KITTI frames 0.3 s apart as OpenCV does', async () => {
    const read = async (f: string): Promise<PixelFrame> => {
      const { data, info } = await sharp(readFileSync(sharedPath('data/kitti/00/image_0', f))).greyscale().raw().toBuffer({ resolveWithObject: true });
      return { data: new Uint8Array(data), width: info.width, height: info.height };
    };
    const [a, b] = [await read('000000.jpg'), await read('000003.jpg')];
    // A grid, so sky and smooth road too: windows nearly flat, where float rounding moves answers.
    const g = agreement(a, b, grid(a, 9), { window: 13, levels: 4 });
    expect(g.found).toBeGreaterThan(0.5 * g.n);
    expect(g.statusDiffers).toBeLessThanOrEqual(0.002 * g.n);
    expect(g.within1e3).toBeGreaterThanOrEqual(0.95 * g.both);
    expect(g.within5e2).toBeGreaterThanOrEqual(0.99 * g.both);
  });

  it('refuses bad input with one line naming it', () => {
    const a = clip.frames[0];
    expect(thrown(() => kltTrack(a, { ...a, width: a.width - 1 }, new Float32Array(2))).message).toMatch(/^kltTrack: next\.data has \d+ bytes, expected width\*height/);
    expect(thrown(() => kltTrack(a, a, new Float32Array(3))).message).toMatch(/points must hold x, y pairs/);
    expect(thrown(() => kltTrack(a, a, Float32Array.from([1, Number.NaN]))).message).toMatch(/points: point 0 is not finite/);
    expect(thrown(() => kltTrack(a, a, new Float32Array(2), { window: 3 })).message).toMatch(/options\.window must be in \[5, 101\]/);
    expect(thrown(() => kltTrack(a, a, new Float32Array(4), { initial: new Float32Array(2) })).message).toMatch(/options\.initial must have as many points/);
    expect(thrown(() => kltTrack(a, a, [1, 2] as unknown as Float32Array)).message).toMatch(/points must be a Float32Array/);
    expect(thrown(() => kltTrack(a, a, new Float32Array(2), { instructions: 'neon' as 'best' })).message).toMatch(/options\.instructions must be one of/);
  });
});
