/**
 * The native VO engine on frames rendered here (test/helpers/render.ts): a level camera 1.65 m
 * above a textured road with a textured wall 150 m ahead, driving known circles at 10 Hz. The truth
 * is exact, so the bounds are tight: per-pair rotation within 0.1°, per-pair distance and path
 * length within 2% (metric scale from the road plane and the camera height alone).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { type NativeResult, processClip, type VoOptions } from '../../src/native/index.js';
import { WIDE_BASELINE } from '../../src/vo/config.js';
import { planarFromCameraPoses } from '../../src/vo/planar.js';
import {
  block,
  DEFAULT_CAMERA,
  drivingClip,
  makeScene,
  mulTN,
  planarYaw,
  renderFrame,
  rotationAngle,
  rotationDistance,
  type SyntheticClip,
  yawRotation,
} from '../helpers/render.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const BUILT = existsSync(ADDON);
if (!BUILT) console.warn(`[egogeo tests] ${ADDON} is not built (npx cmake-js compile): native VO tests are skipped.`);

const DEG = Math.PI / 180;
/** KITTI 00's left grey camera (calib.txt P0). */
const KITTI_CAMERA = { width: 1241, height: 376, fx: 718.856, fy: 718.856, cx: 607.1928, cy: 185.2157 };
const ROT_TOL = 0.1 * DEG; // per pair
const DIST_TOL = 0.02; // relative, per pair and over the path
// The road fit's one-sided weights (native/vo/scale/road_scale.cc) read this renderer's clean road up to
// ~2.5% short: they treat tracking noise along the parallax as they treat obstacles, which real
// roads need (bench/RESULTS.md, "A noise band for the one-sided weights"). Where the pairs' own
// headings set the road's pitch, their error happened to offset that on some clips (3.3 mrad, +2.6%
// on the 20 m/s one); with the bundle's headings (0.1-0.5 mrad) those clips show it: 2.5% there.
const DIST_TOL_BIASED = 0.025;

function run(clip: SyntheticClip, options: VoOptions = {}): NativeResult {
  return processClip(
    { frames: clip.frames, timestamps: clip.timestamps, intrinsics: clip.intrinsics },
    { cameraHeight: clip.cameraHeight, ...options },
  );
}

/** Per pair: true and estimated relative rotation, distance and planar yaw change. */
function perPair(clip: SyntheticClip, r: NativeResult) {
  return r.pairs.map((p, k) => {
    const relTrue = mulTN(clip.poses[k].R, clip.poses[k + 1].R);
    const relEst = mulTN(block(r.rotations, k), block(r.rotations, k + 1));
    const [a, b] = [clip.poses[k].C, clip.poses[k + 1].C];
    return {
      k,
      quality: p.quality,
      rotErr: rotationDistance(relTrue, relEst),
      dyawTrue: planarYaw(relTrue),
      dyawEst: planarYaw(relEst),
      distTrue: Math.hypot(b[0] - a[0], b[1] - a[1], b[2] - a[2]),
      distEst: p.distance,
      inliers: p.inliers,
      roadPoints: p.roadPoints,
      parallax: p.parallax,
    };
  });
}

/** One line per pair, printed when an assertion fails so the report has the numbers. */
const table = (rows: ReturnType<typeof perPair>): string =>
  rows
    .map(
      (p) =>
        `#${p.k} ${p.quality} inl=${p.inliers} road=${p.roadPoints} par=${p.parallax.toFixed(2)}px ` +
        `rot=${(p.rotErr / DEG).toFixed(4)}° dist=${p.distEst.toFixed(4)}/${p.distTrue.toFixed(4)} ` +
        `(${((p.distEst / p.distTrue - 1) * 100).toFixed(2)}%)`,
    )
    .join('\n');

const positionsOf = (r: NativeResult): number[][] =>
  Array.from({ length: r.positions.length / 3 }, (_, i) => Array.from(r.positions.subarray(i * 3, i * 3 + 3)));

/** The assertions every moving clip must meet. */
function expectAccurate(clip: SyntheticClip, r: NativeResult, distTol = DIST_TOL): void {
  const rows = perPair(clip, r);
  const info = table(rows);
  expect(r.pairs.map((p) => p.quality), info).toEqual(r.pairs.map(() => 'ok'));
  for (const p of rows) {
    expect(p.rotErr, `pair ${p.k} rotation error\n${info}`).toBeLessThan(ROT_TOL);
    expect(Math.abs(p.distEst / p.distTrue - 1), `pair ${p.k} distance\n${info}`).toBeLessThan(distTol);
  }
  const pathTrue = rows.reduce((s, p) => s + p.distTrue, 0);
  const pathEst = rows.reduce((s, p) => s + p.distEst, 0);
  expect(Math.abs(pathEst / pathTrue - 1), `path ${pathEst} m vs ${pathTrue} m\n${info}`).toBeLessThan(distTol);
}

describe('the test renderer', () => {
  it('is deterministic, seed-dependent and textured on both the road and the wall', () => {
    const pose = { R: yawRotation(0.05), C: [0.3, 0, 2] as [number, number, number] };
    const a = renderFrame(makeScene({ seed: 9 }), DEFAULT_CAMERA, pose);
    const b = renderFrame(makeScene({ seed: 9 }), DEFAULT_CAMERA, pose);
    const c = renderFrame(makeScene({ seed: 10 }), DEFAULT_CAMERA, pose);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const { width: w } = DEFAULT_CAMERA;
    const std = (rows: [number, number]) => {
      const v = Array.from(a.subarray(rows[0] * w, rows[1] * w));
      const m = v.reduce((s, x) => s + x, 0) / v.length;
      return Math.sqrt(v.reduce((s, x) => s + (x - m) ** 2, 0) / v.length);
    };
    expect(std([0, 150])).toBeGreaterThan(40); // the wall
    expect(std([220, 360])).toBeGreaterThan(40); // the road
  });
});

describe.skipIf(!BUILT)('native VO on rendered frames', () => {
  describe('driving 10 m/s with a 0.1 rad/s left turn (21 frames, 640×360)', () => {
    let clip: SyntheticClip;
    let r: NativeResult;
    beforeAll(() => {
      clip = drivingClip({ frames: 21, speed: 10, yawRate: 0.1, seed: 1 });
      r = run(clip);
    });

    it('returns one pose per frame and one pair per frame pair, starting at the identity', () => {
      expect(r.width).toBe(640);
      expect(r.height).toBe(360);
      expect(r.intrinsics).toEqual(clip.intrinsics);
      expect(r.rotations).toBeInstanceOf(Float64Array);
      expect(r.rotations.length).toBe(21 * 9);
      expect(r.positions.length).toBe(21 * 3);
      expect(r.pairs).toHaveLength(20);
      expect(Array.from(r.rotations.subarray(0, 9))).toEqual([1, 0, 0, 0, 1, 0, 0, 0, 1]);
      expect(Array.from(r.positions.subarray(0, 3))).toEqual([0, 0, 0]);
      for (const x of [...r.rotations, ...r.positions]) expect(Number.isFinite(x)).toBe(true);
      // The road normal is the camera's +y axis here (a level camera): within 0.5°.
      const [nx, ny, nz] = r.roadNormal;
      expect(Math.hypot(nx, ny, nz)).toBeCloseTo(1, 9);
      expect(Math.acos(Math.min(1, ny)) / DEG).toBeLessThan(0.5);
    });

    it('every pair is ok, with inliers and road points', () => {
      for (const p of r.pairs) {
        expect(p.quality).toBe('ok');
        expect(p.inliers).toBeGreaterThanOrEqual(20);
        expect(p.roadPoints).toBeGreaterThanOrEqual(15);
        expect(p.inliers).toBeLessThanOrEqual(p.tracks);
        expect(p.parallax).toBeGreaterThan(0.6);
      }
    });

    it('per-pair rotation within 0.1° and per-pair distance and path length within 2%', () => {
      expectAccurate(clip, r);
    });

    it('turns left (positive planar yaw), heading after 2 s within 0.3° of the truth', () => {
      const rows = perPair(clip, r);
      for (const p of rows) expect(p.dyawEst).toBeGreaterThan(0);
      const n = r.pairs.length;
      const yawEnd = planarYaw(r.rotations, n * 9);
      expect(Math.abs(yawEnd - clip.yaw[n]) / DEG).toBeLessThan(0.3);
    });

    it('the planar trajectory ends within 2% of the path length of the true end point', () => {
      const tr = planarFromCameraPoses('synthetic', clip.timestamps, r.rotations, r.positions);
      const n = r.pairs.length;
      const C = clip.poses[n].C;
      const [X, Y] = [C[2], -C[0]];
      expect(Y).toBeGreaterThan(1); // the true path bends left by ~2 m
      expect(Math.hypot(tr.x[n] - X, tr.y[n] - Y)).toBeLessThan(0.02 * 20);
      // The camera stays on the road plane: no vertical drift beyond a few centimetres.
      for (const p of positionsOf(r)) expect(Math.abs(p[1])).toBeLessThan(0.1);
    });

    it("scale 'gt' takes the distances from gtSpeeds exactly and leaves rotations unchanged", () => {
      const speeds = Array.from({ length: 20 }, (_, k) => 9 + 0.1 * k);
      const g = run(clip, { scale: 'gt', gtSpeeds: speeds });
      g.pairs.forEach((p, k) => expect(p.distance).toBeCloseTo(speeds[k] * 0.1, 12));
      expect(g.rotations).toEqual(r.rotations);
    });

    // The three-frame ratios here err by 0.6% rms; the bundle-adjusted ones (the default) by 0.9%,
    // at most 2.1%: at constant speed their errors, the tracks' own, have nothing to average out
    // (on uneven gaps and on KITTI they are the more accurate; the next describe block).
    it("reports the scale stage's own measurements: road distances within 3%, relative scales within 2% (three-frame) or 2.5% (bundle-adjusted), rms 1%", () => {
      const rows = perPair(clip, r);
      for (const [res, tol] of [[run(clip, { bundleScale: false }), 0.02], [r, 0.025]] as const) {
        const errs = res.pairs.slice(1).map((p, k) => p.logRatio - Math.log(rows[k + 1].distTrue / rows[k].distTrue));
        errs.forEach((e, k) => expect(Math.abs(e), `link ${k + 1}`).toBeLessThan(tol));
        expect(Math.sqrt(errs.reduce((s, e) => s + e * e, 0) / errs.length)).toBeLessThan(0.01);
      }
      const ratioErr: number[] = [];
      r.pairs.forEach((p, k) => {
        expect(p.roadDistance / rows[k].distTrue, `pair ${k}`).toBeCloseTo(1, 1);
        expect(Math.abs(p.roadDistance / rows[k].distTrue - 1), `pair ${k}`).toBeLessThan(0.03);
        expect(p.roadSigma).toBeGreaterThanOrEqual(0.06);
        if (k === 0) {
          expect(p.ratioSigma).toBe(0); // no pair before the first
          return;
        }
        expect(p.ratioSigma).toBeGreaterThan(0);
        ratioErr.push(p.logRatio - Math.log(rows[k].distTrue / rows[k - 1].distTrue));
      });
      expect(ratioErr).toHaveLength(19);
      // Only the road scale measures them; 'gt' and 'none' leave them empty.
      const g = run(clip, { scale: 'gt', gtSpeeds: Array.from({ length: 20 }, () => 10) });
      for (const p of g.pairs) expect([p.roadDistance, p.ratioSigma]).toEqual([0, 0]);
    });

    it("scale 'none' gives unit steps", () => {
      const u = run(clip, { scale: 'none' });
      for (const p of u.pairs) expect(p.distance).toBe(1);
      const pos = positionsOf(u);
      expect(Math.hypot(...pos[20].map((v, i) => v - pos[19][i]))).toBeCloseTo(1, 9);
    });
  });

  // Frames taken 1 and 2 apart in turn (as evenly spaced subsets of a clip are): the pair lengths
  // alternate by a factor of 2, so every ratio is ±log 2 and a scale error cannot hide in a
  // constant speed.
  describe('relative scales by bundle adjustment, 8 m/s with uneven frame gaps (20 pairs)', () => {
    let clip: SyntheticClip;
    let idx: number[];
    let dist: number[];
    const ratioErrors = (r: NativeResult) => r.pairs.slice(1).map((p, k) => p.logRatio - Math.log(dist[k + 1] / dist[k]));
    const rms = (xs: number[]) => Math.sqrt(xs.reduce((s, x) => s + x * x, 0) / xs.length);
    const runSubset = (options: VoOptions) =>
      processClip(
        { frames: idx.map((i) => clip.frames[i]), timestamps: Float64Array.from(idx, (i) => clip.timestamps[i]), intrinsics: clip.intrinsics },
        { cameraHeight: clip.cameraHeight, ...options },
      );
    beforeAll(() => {
      clip = drivingClip({ frames: 31, speed: 8, yawRate: 0.05, seed: 3 });
      idx = [0];
      for (let g = 0; idx.at(-1)! + 1 + (g % 2) < 31; g++) idx.push(idx.at(-1)! + 1 + (g % 2));
      dist = idx.slice(1).map((i, k) => {
        const [a, b] = [clip.poses[idx[k]].C, clip.poses[i].C];
        return Math.hypot(b[0] - a[0], b[1] - a[1], b[2] - a[2]);
      });
    });

    it('every ratio within 1.5% and 0.6% rms of the truth, closer than the three-frame ratios, with smaller standard errors', () => {
      const ba = runSubset({});
      const tf = runSubset({ bundleScale: false });
      expect(ba.pairs).toHaveLength(20);
      const e = ratioErrors(ba), e3 = ratioErrors(tf);
      e.forEach((x, k) => expect(Math.abs(x), `link ${k + 1}`).toBeLessThan(0.015));
      expect(rms(e)).toBeLessThan(0.006);
      expect(rms(e)).toBeLessThan(rms(e3));
      ba.pairs.slice(1).forEach((p, k) => {
        expect(p.ratioSigma, `link ${k + 1}`).toBeGreaterThan(0);
        expect(p.ratioSigma, `link ${k + 1}`).toBeLessThan(tf.pairs[k + 1].ratioSigma);
      });
      // The speed profile follows: every pair's distance within 1% of the truth.
      ba.pairs.forEach((p, k) => expect(Math.abs(p.distance / dist[k] - 1), `pair ${k}`).toBeLessThan(0.01));
      // Rotations come from the pairs' own poses either way.
      expect(ba.rotations).toEqual(tf.rotations);
    });
  });

  // A 376-row image leaves few road rows below the horizon: at 1.5 m per frame the default 500
  // corners give the last pair only ~17 road points, so this case tracks twice as many.
  it('a right turn at 15 m/s on a KITTI-sized camera (1241×376, 1000 corners): same bounds, negative yaw', () => {
    const clip = drivingClip({ frames: 11, speed: 15, yawRate: -0.15, seed: 7, camera: KITTI_CAMERA });
    const r = run(clip, { maxFeatures: 1000 });
    expectAccurate(clip, r);
    for (const p of perPair(clip, r)) expect(p.dyawEst).toBeLessThan(0);
  });

  // The published baselines' spacing (10 frames over 3 s) at half resolution (WIDE_BASELINE): the
  // tracker sees 621×188 frames, the caller gets its own pixels back (size, intrinsics, matches).
  // 2.7 m per pair moves near road patches by ~100 px, so the bounds are those of this regime.
  it('wide baseline (0.33 s per pair) at half resolution: rotation within 0.2°, distance within 3%, results in the caller\'s pixels', () => {
    const clip = drivingClip({ frames: 6, speed: 8, yawRate: 0.12, seed: 7, fps: 3, camera: KITTI_CAMERA });
    const half = run(clip, { ...WIDE_BASELINE, keepMatches: true });
    const rows = perPair(clip, half);
    for (const p of rows) {
      expect(p.quality, table(rows)).toBe('ok');
      expect(p.rotErr, table(rows)).toBeLessThan(0.2 * DEG);
      expect(Math.abs(p.distEst / p.distTrue - 1), table(rows)).toBeLessThan(0.03);
    }
    expect([half.width, half.height]).toEqual([1241, 376]);
    expect(half.intrinsics).toEqual(clip.intrinsics);
    // The same scene points tracked at full resolution sit at the same input pixels: the median flow
    // of the first pair agrees, and the track points span the whole 1241-pixel width.
    const full = run(clip, { ...WIDE_BASELINE, downsample: 1, kltLevels: 4, minDistance: 8, keepMatches: true });
    const medianFlow = (r: NativeResult) => {
      const m = r.matches![0];
      const f = Array.from({ length: m.ids.length }, (_, k) => Math.hypot(m.curr[2 * k] - m.prev[2 * k], m.curr[2 * k + 1] - m.prev[2 * k + 1]));
      return f.sort((a, b) => a - b)[f.length >> 1];
    };
    expect(medianFlow(half) / medianFlow(full)).toBeGreaterThan(0.95);
    expect(medianFlow(half) / medianFlow(full)).toBeLessThan(1.05);
    const xs = half.matches!.flatMap((m) => Array.from(m.prev).filter((_, i) => i % 2 === 0));
    expect(Math.max(...xs)).toBeGreaterThan(1150);
  });

  // JPEG frames shrink inside libjpeg (DCT scaling: ceil(W/2) × ceil(H/2), an area average), other
  // frames by an area average to the same size: an odd-sized clip gives the same motion either way.
  it('half resolution from JPEG files (libjpeg DCT scaling) matches half resolution from pixels; odd sizes round up', async () => {
    const cam = { width: 641, height: 361, fx: 576, fy: 576, cx: 320, cy: 180 };
    const clip = drivingClip({ frames: 6, speed: 10, yawRate: 0.1, seed: 5, camera: cam });
    const dir = mkdtempSync(join(tmpdir(), 'egogeo-jpeg-'));
    try {
      const files = await Promise.all(
        clip.frames.map(async (f, k) => {
          const path = join(dir, `${k}.jpg`);
          await sharp(Buffer.from(f.data), { raw: { width: f.width, height: f.height, channels: 1 } }).jpeg({ quality: 98 }).toFile(path);
          return path;
        }),
      );
      // The default tracker scaled to half size (window and corner spacing in working pixels).
      const half: VoOptions = { downsample: 2, kltWindow: 7, minDistance: 4, keepMatches: true };
      const fromPixels = run(clip, half);
      const fromJpeg = processClip({ frames: files, timestamps: clip.timestamps, intrinsics: clip.intrinsics }, { cameraHeight: clip.cameraHeight, ...half });
      expect([fromJpeg.width, fromJpeg.height]).toEqual([641, 361]);
      expect(fromJpeg.intrinsics).toEqual(clip.intrinsics);
      const a = perPair(clip, fromPixels), b = perPair(clip, fromJpeg);
      for (const rows of [a, b])
        for (const p of rows) {
          expect(p.rotErr, table(rows)).toBeLessThan(ROT_TOL);
          expect(Math.abs(p.distEst / p.distTrue - 1), table(rows)).toBeLessThan(0.03 + (DIST_TOL_BIASED - DIST_TOL));
        }
      // Distances agree within 2%: the scale stage follows the relative scales' running sum, which
      // carries the two decodes' small tracking differences along the clip's five pairs.
      for (let k = 0; k < a.length; k++) expect(Math.abs(a[k].distEst / b[k].distEst - 1), `${table(a)}\n${table(b)}`).toBeLessThan(0.02);
      // Track points of the working grid map back to stored pixels: inside the 641×361 frame.
      for (const m of fromJpeg.matches!) for (let i = 0; i < m.prev.length; i += 2) expect(m.prev[i]).toBeLessThan(641);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Netpbm frames are read without a codec library: 8-bit grey (P5), colour (P6, grey = 0.299 R +
  // 0.587 G + 0.114 B) and 16-bit samples (maxval 65535) all give the 8-bit grey frame back.
  it('PGM and PPM frames (8-bit, 16-bit, colour) give the same motion as the grey pixels', () => {
    const clip = drivingClip({ frames: 4, speed: 10, yawRate: 0.1, seed: 5 });
    const dir = mkdtempSync(join(tmpdir(), 'egogeo-pnm-'));
    try {
      const write = (name: string, magic: string, maxval: number, body: Buffer) => {
        const path = join(dir, name);
        writeFileSync(path, Buffer.concat([Buffer.from(`${magic}\n# egogeo test\n${clip.frames[0].width} ${clip.frames[0].height}\n${maxval}\n`), body]));
        return path;
      };
      const pgm8 = clip.frames.map((f, k) => write(`${k}.pgm`, 'P5', 255, Buffer.from(f.data)));
      const pgm16 = clip.frames.map((f, k) => {
        const b = Buffer.alloc(f.data.length * 2);
        f.data.forEach((v, i) => b.writeUInt16BE(v * 257, 2 * i));
        return write(`${k}-16.pgm`, 'P5', 65535, b);
      });
      const ppm = clip.frames.map((f, k) => write(`${k}.ppm`, 'P6', 255, Buffer.from(Array.from(f.data).flatMap((v) => [v, v, v]))));
      const ref = run(clip);
      for (const files of [pgm8, pgm16, ppm]) {
        const r = processClip({ frames: files, timestamps: clip.timestamps, intrinsics: clip.intrinsics }, { cameraHeight: clip.cameraHeight });
        expect(Array.from(r.positions)).toEqual(Array.from(ref.positions));
      }
      const cut = write('cut.pgm', 'P5', 255, Buffer.from(clip.frames[0].data.subarray(0, 100)));
      expect(() => processClip({ frames: [cut, pgm8[1]], timestamps: [0, 0.1] })).toThrow(/cut\.pgm.*corrupt PGM\/PPM \(file ends before its last pixel\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('turning in place (0.5 rad/s): low_parallax pairs, zero translation, rotation within 0.1°', () => {
    const clip = drivingClip({ frames: 11, speed: 0, yawRate: 0.5, seed: 3 });
    const r = run(clip);
    const rows = perPair(clip, r);
    const info = table(rows);
    for (const p of rows) {
      expect(p.quality, info).toBe('low_parallax');
      expect(p.distEst, info).toBe(0);
      expect(p.rotErr, info).toBeLessThan(ROT_TOL);
      expect(p.dyawEst, info).toBeGreaterThan(0);
    }
    for (const p of positionsOf(r)) expect(p).toEqual([0, 0, 0]);
    const yawEnd = planarYaw(r.rotations, 10 * 9);
    expect(Math.abs(yawEnd - 0.5) / DEG).toBeLessThan(0.3);
  });

  it('standing still (identical frames): low_parallax, zero translation, identity rotations', () => {
    const clip = drivingClip({ frames: 6, speed: 0, yawRate: 0, seed: 4 });
    const r = run(clip);
    for (const p of r.pairs) {
      expect(p.quality).toBe('low_parallax');
      expect(p.distance).toBe(0);
      expect(p.parallax).toBeLessThan(0.01);
    }
    for (const p of positionsOf(r)) expect(p).toEqual([0, 0, 0]);
    for (let k = 0; k < 6; k++) expect(rotationAngle(block(r.rotations, k))).toBeLessThan(1e-6);
  });

  it('defaults the intrinsics to fx = fy = 0.9 W and the image centre (SPEC.md)', () => {
    const cam = { width: 640, height: 360, fx: 576, fy: 576, cx: 320, cy: 180 };
    const clip = drivingClip({ frames: 6, speed: 10, yawRate: 0.1, seed: 5, camera: cam });
    const r = processClip({ frames: clip.frames, timestamps: clip.timestamps }, { cameraHeight: clip.cameraHeight });
    expect(r.intrinsics).toEqual({ fx: 576, fy: 576, cx: 320, cy: 180 });
    expectAccurate(clip, r);
  });

  // A slow turn, as at a junction (KITTI 00 turns at ~4-5 m/s and ~0.4-0.5 rad/s). Most tracks
  // are on the distant wall, which barely moves after de-rotation: the median rotation-compensated
  // flow is ~0.5-0.8 px (minParallax is 0.6) although road points move many pixels, so a
  // median-based low-parallax test calls many of these pairs 'standing still'.
  it('a slow turn (5 m/s, 0.4 rad/s) past a distant backdrop is not mistaken for standing still', () => {
    const clip = drivingClip({ frames: 21, speed: 5, yawRate: 0.4, seed: 1 });
    expectAccurate(clip, run(clip), DIST_TOL_BIASED);
  });

  // Highway speed at 10 Hz: 2 m between frames, so near road patches grow by ~20% from one frame to
  // the next and leave a 376-row frame within one or two frames. (The KITTI excerpts in ../shared
  // stop at ~11.5 m/s.) With the default 500 corners the road region used to starve (1-41 road
  // points a pair) and the scale came out 6-9% short; the tracker now re-detects where the road
  // runs short of corners and gives corners the plain search loses a second, guided try from the
  // previous pair's motion over the road plane (guided tracking).
  it('highway speed (20 m/s, 2 m per frame) on a KITTI-sized camera: road scale within 3% with guided tracking, 6-9% short without', () => {
    const clip = drivingClip({ frames: 11, speed: 20, yawRate: 0.05, seed: 9, camera: KITTI_CAMERA });
    const r = run(clip);
    const rows = perPair(clip, r);
    const info = table(rows);
    expect(r.pairs.map((p) => p.quality), info).toEqual(r.pairs.map(() => 'ok'));
    for (const p of rows) {
      expect(p.rotErr, `pair ${p.k} rotation error\n${info}`).toBeLessThan(0.2 * DEG);
      expect(Math.abs(p.distEst / p.distTrue - 1), `pair ${p.k} distance\n${info}`).toBeLessThan(0.03);
    }
    const pathErr = (rs: typeof rows) => rs.reduce((s, p) => s + p.distEst, 0) / rs.reduce((s, p) => s + p.distTrue, 0) - 1;
    expect(Math.abs(pathErr(rows)), info).toBeLessThan(0.03);
    const plain = perPair(clip, run(clip, { guidedTracking: false }));
    expect(pathErr(plain), table(plain)).toBeLessThan(-0.05);
    // With twice the corners the road never starves at this speed: the same bound either way.
    expectAccurate(clip, run(clip, { maxFeatures: 1000 }), DIST_TOL_BIASED);
  });
});
