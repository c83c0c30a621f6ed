/**
 * The engine's jerk-driven speed smoother (native/vo/scale/speed_smoother.cc, through smoothSpeed) on analytic
 * per-pair measurements: a known speed profile, road distances with 6% log noise and relative
 * scales with 1% noise (the engine's nominal figures), from a seeded generator. A ratio's error is
 * made like the engine's: each pair's own error u_k, shared with opposite signs by its two ratios,
 * plus an independent part carrying the share `drift` of the variance (0.2, as calibrated).
 * `roadBias` adds a level error shared by a clip's road distances (the engine assumes 5%);
 * `roadCorr` makes the road errors AR(1) (KITTI's correlate at lag 1 by 0.6-0.8 against truth).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processClip, smoothSpeed } from '../../src/native/index.js';
import { drivingClip } from '../helpers/render.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));

function rng(seed: number): () => number {
  let s = seed >>> 0;
  const u = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) + 0.5) / 2 ** 32;
  return () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
}

/** Speed profile: `v(t)`; returns per-pair true distances, the noisy measurements and the truth at pair midpoints. */
function measure(v: (t: number) => number, seed: number, n = 30, dt = 0.1, road = 0.06, ratio = 0.01, drift = 0.2, roadBias = 0, roadCorr = 0) {
  const g = rng(seed);
  const bias = roadBias * g();
  // Road errors: AR(1) with lag-1 correlation roadCorr (0 = white), stationary sd `road`.
  const e: number[] = [];
  for (let k = 0; k < n; k++) e.push(k === 0 ? road * g() : roadCorr * e[k - 1] + road * Math.sqrt(1 - roadCorr * roadCorr) * g());
  const ts = Array.from({ length: n + 1 }, (_, i) => i * dt);
  const dist = Array.from({ length: n }, (_, k) => {
    let s = 0;
    for (let j = 0; j < 100; j++) s += v(ts[k] + ((j + 0.5) / 100) * dt) * (dt / 100);
    return s;
  });
  const u = dist.map(() => ratio * Math.sqrt((1 - drift) / 2) * g());
  return {
    truth: dist.map((d) => d / dt),
    input: {
      timestamps: ts,
      distances: dist.map((d, k) => d * Math.exp(bias + e[k])),
      distanceSigma: dist.map(() => road),
      logRatios: dist.map((d, k) => (k === 0 ? 0 : Math.log(d / dist[k - 1]) + u[k] - u[k - 1] + ratio * Math.sqrt(drift) * g())),
      ratioSigma: dist.map((_, k) => (k === 0 ? 0 : ratio)),
    },
  };
}

const accel = (v: ArrayLike<number>, dt: number) => Array.from({ length: v.length - 1 }, (_, k) => (v[k + 1] - v[k]) / dt);
const rmse = (a: number[], b: number[]) => Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0) / a.length);

describe.skipIf(!existsSync(ADDON))('speed smoother on analytic measurements', () => {
  it('recovers a cruise with a −6 m/s² braking second, keeping the braking', () => {
    // 12 m/s, brakes at −6 m/s² from 1.0 to 2.0 s, then 6 m/s.
    const v = (t: number) => (t < 1 ? 12 : t < 2 ? 12 - 6 * (t - 1) : 6);
    let worstMin = -Infinity, accSm = 0, accRaw = 0;
    for (const seed of [1, 2, 3, 4, 5]) {
      const { truth, input } = measure(v, seed);
      const r = smoothSpeed(input);
      const aTrue = accel(truth, 0.1), aSm = accel(r.speed, 0.1);
      const aRaw = accel(input.distances.map((d) => d / 0.1), 0.1);
      expect(rmse(Array.from(r.speed), truth)).toBeLessThan(0.35);
      accSm += rmse(aSm, aTrue) / 5;
      accRaw += rmse(aRaw, aTrue) / 5;
      // The braking survives: the strongest deceleration reads at least 4.5 m/s².
      worstMin = Math.max(worstMin, Math.min(...aSm));
    }
    expect(worstMin).toBeLessThan(-4.5);
    expect(accSm).toBeLessThan(1.2);
    expect(accSm).toBeLessThan(0.25 * accRaw);
  });

  it('reports the marginal likelihood it maximised: no fixed jerk PSD on the grid beats its choice', () => {
    const v = (t: number) => (t < 1 ? 12 : t < 2 ? 12 - 6 * (t - 1) : 6);
    for (const seed of [1, 2]) {
      const { input } = measure(v, seed);
      const free = smoothSpeed(input);
      expect(Number.isFinite(free.neg2LogMl)).toBe(true);
      // The free fit's q, fixed, reads the same likelihood; others on the grid read worse.
      expect(smoothSpeed({ ...input, jerkPsd: free.jerkPsd }).neg2LogMl).toBeCloseTo(free.neg2LogMl, 6);
      const qs = Array.from({ length: 25 }, (_, i) => 0.05 * 4000 ** (i / 24));
      const others = qs.filter((q) => Math.abs(Math.log(q / free.jerkPsd)) > 0.1).map((q) => smoothSpeed({ ...input, jerkPsd: q }).neg2LogMl);
      expect(Math.min(...others)).toBeGreaterThan(free.neg2LogMl - 1e-9);
      // Far from the choice the likelihood falls clearly.
      expect(smoothSpeed({ ...input, jerkPsd: free.jerkPsd > 10 ? 0.05 : 200 }).neg2LogMl).toBeGreaterThan(free.neg2LogMl + 2);
    }
  });

  it('reads a steady cruise as steady, with a small jerk PSD', () => {
    for (const seed of [11, 12, 13]) {
      const { truth, input } = measure(() => 10, seed);
      const r = smoothSpeed(input);
      const a = accel(r.speed, 0.1);
      expect(Math.max(...a.map(Math.abs))).toBeLessThan(0.6);
      expect(rmse(Array.from(r.speed), truth)).toBeLessThan(0.3);
      expect(r.jerkPsd).toBeLessThan(1);
    }
  });

  it('models the ratios\' error structure: a slow dip survives when the errors are the pairs\' own', () => {
    // 8.4 m/s with a 0.3 m/s dip over 0.8 s (about ±1.2 m/s²): the kind of change the ratios'
    // running sum shows and independent steps would bury.
    const v = (t: number) => 8.4 - (Math.abs(t - 2) < 0.4 ? 0.15 * (1 + Math.cos((Math.PI * (t - 2)) / 0.4)) : 0);
    const run = (noiseDrift: number, ratioDrift: number) => {
      let acc = 0, deepest = 0;
      for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
        const { truth, input } = measure(v, seed, 30, 0.1, 0.06, 0.01, noiseDrift);
        const a = accel(smoothSpeed({ ...input, ratioDrift }).speed, 0.1);
        acc += rmse(a, accel(truth, 0.1)) / 8;
        deepest += Math.min(...a) / 8;
      }
      return { acc, deepest };
    };
    const chained = run(0.2, 0.2), independent = run(0.2, 0.9);
    expect(chained.acc).toBeLessThan(0.9 * independent.acc);
    expect(chained.deepest).toBeLessThan(-0.25);
    expect(independent.deepest).toBeGreaterThan(-0.15);
    // And the other way round: ratios with independent errors want the independent model.
    expect(run(1, 0.9).acc).toBeLessThan(run(1, 0.2).acc);
    expect(() => smoothSpeed({ ...measure(v, 1).input, ratioDrift: 1 })).toThrow(/ratioDrift/);
  });

  it('gives speed uncertainties of the right size', () => {
    const z: number[] = [];
    for (let seed = 20; seed < 40; seed++) {
      const { truth, input } = measure((t) => 8 + 1.5 * Math.sin(1.5 * t), seed, 30, 0.1, 0.06, 0.01, 0.2, 0.05);
      const r = smoothSpeed(input);
      for (let k = 0; k < truth.length; k++) z.push((r.speed[k] - truth[k]) / r.speedSigma[k]);
    }
    const zrms = Math.sqrt(z.reduce((s, x) => s + x * x, 0) / z.length);
    expect(zrms).toBeGreaterThan(0.5);
    expect(zrms).toBeLessThan(2);
  });

  it('widens the sigmas by the road level error without moving the speeds', () => {
    const { input } = measure((t) => 8 + 1.5 * Math.sin(1.5 * t), 3);
    const wide = smoothSpeed(input), narrow = smoothSpeed({ ...input, roadBias: 0 });
    for (let k = 0; k < wide.speed.length; k++) {
      expect(wide.speed[k]).toBeCloseTo(narrow.speed[k], 9);
      // sigma of log speed: sqrt(s^2 + 0.05^2)
      const s = narrow.speedSigma[k] / narrow.speed[k];
      expect(wide.speedSigma[k] / wide.speed[k]).toBeCloseTo(Math.sqrt(s * s + 0.05 * 0.05), 9);
    }
  });

  it('models road errors that last: a correlated run no longer reads as a speed change, and white errors keep the white model', () => {
    // 9 m/s with a gentle sine; road errors 6% with lag-1 correlation 0.8 (KITTI 00 measures 0.8).
    const v = (t: number) => 9 + 0.5 * Math.sin(2 * t);
    let white = 0, chosen = 0, picked = 0;
    for (let seed = 50; seed < 70; seed++) {
      const { truth, input } = measure(v, seed, 30, 0.1, 0.06, 0.01, 0.2, 0, 0.8);
      const a = accel(truth, 0.1);
      const w = smoothSpeed({ ...input, roadCorrTime: 0 }), c = smoothSpeed(input);
      white += rmse(accel(w.speed, 0.1), a) / 20;
      chosen += rmse(accel(c.speed, 0.1), a) / 20;
      picked += c.roadCorrTime > 0 ? 1 : 0;
    }
    expect(chosen).toBeLessThan(0.95 * white);
    expect(picked).toBeGreaterThanOrEqual(16);
    // White road errors: the white model is chosen on most clips.
    let whitePicked = 0;
    for (let seed = 70; seed < 90; seed++) whitePicked += smoothSpeed(measure(v, seed).input).roadCorrTime === 0 ? 1 : 0;
    expect(whitePicked).toBeGreaterThanOrEqual(14);
    // A fixed correlation time is used as given.
    expect(smoothSpeed({ ...measure(v, 1).input, roadCorrTime: 0.3 }).roadCorrTime).toBe(0.3);
    expect(() => smoothSpeed({ ...measure(v, 1).input, roadCorrTime: 11 })).toThrow(/roadCorrTime/);
  });

  it('a log-normal prior on the jerk PSD pulls a weakly determined q towards its centre; a fixed q wins', () => {
    let moved = 0;
    for (const seed of [11, 12, 13, 14, 15]) {
      const { input } = measure(() => 10, seed);
      const ml = smoothSpeed(input).jerkPsd, map = smoothSpeed({ ...input, jerkPsdPrior: 1.6 }).jerkPsd;
      // Between the likelihood's choice and the prior's centre (in log terms), and moved on most clips.
      expect(Math.log(map)).toBeGreaterThanOrEqual(Math.log(ml) - 1e-9);
      expect(Math.log(map)).toBeLessThanOrEqual(Math.log(Math.max(ml, 1.6)) + 1e-9);
      moved += map > ml ? 1 : 0;
    }
    expect(moved).toBeGreaterThanOrEqual(3);
    // A narrow prior holds q near its centre; a fixed jerkPsd is not moved by it.
    const { input } = measure(() => 10, 11);
    expect(Math.abs(Math.log(smoothSpeed({ ...input, jerkPsdPrior: 1.6, jerkPsdPriorWidth: 0.05 }).jerkPsd / 1.6))).toBeLessThan(0.4);
    expect(smoothSpeed({ ...input, jerkPsdPrior: 1.6, jerkPsd: 3 }).jerkPsd).toBe(3);
  });

  it('fixes the jerk PSD when asked and rejects bad input with a message', () => {
    const { input } = measure(() => 10, 7);
    expect(smoothSpeed({ ...input, jerkPsd: 3 }).jerkPsd).toBe(3);
    expect(() => smoothSpeed({ ...input, timestamps: input.timestamps.slice(1) })).toThrow(/one entry more/);
    expect(() => smoothSpeed({ ...input, distances: input.distances.map(() => 0) })).toThrow(/no road distance/);
  });
});

describe.skipIf(!existsSync(ADDON))("smoothSpeed on the engine's own measurements", () => {
  it("returns the engine's speed profile: the same preparation (fusion, robust weights) and smoother", () => {
    // A moving clip, and one standing still (no road distance to anchor: the engine's zeros, smoothSpeed's error).
    for (const [speed, frames, seed] of [[9, 21, 4], [0, 6, 2]] as const) {
      const clip = drivingClip({ frames, speed, yawRate: 0.05, seed });
      const r = processClip({ frames: clip.frames, timestamps: clip.timestamps, intrinsics: clip.intrinsics }, { cameraHeight: clip.cameraHeight });
      const p = r.pairs;
      const m = {
        timestamps: clip.timestamps,
        distances: p.map((x) => x.roadDistance),
        distanceSigma: p.map((x) => x.roadSigma),
        logRatios: p.map((x) => x.logRatio),
        ratioSigma: p.map((x) => x.ratioSigma),
        moving: p.map((x) => x.quality !== 'low_parallax'),
      };
      if (p.every((x) => !(x.roadDistance > 0))) {
        expect(() => smoothSpeed(m)).toThrow(/no road distance/);
        continue;
      }
      const s = smoothSpeed(m);
      p.forEach((x, k) => {
        const dt = clip.timestamps[k + 1] - clip.timestamps[k];
        expect(s.speed[k] * dt, `pair ${k}`).toBe(x.distance);
        expect(s.speedSigma[k], `pair ${k}`).toBeCloseTo(x.speedSigma, 12);
      });
    }
  });
});
