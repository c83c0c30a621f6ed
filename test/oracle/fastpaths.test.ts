/**
 * The oracle's speed paths (reused buffers, unrolled filter, insertion-sort percentiles, skipped
 * unwrap) give bit-identical results to the straightforward formulations they replace.
 */
import { describe, expect, it } from 'vitest';
import { npPercentile, unwrap } from '../../src/core/numeric.js';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { computeDynamics, loadQuestions, runOracle } from '../../src/oracle/index.js';
import { savgolCoeffs, smooth } from '../../src/oracle/savgol.js';
import { mulberry32 as prng } from '../../src/core/random.js';

const rnd = prng(7);

/** NumPy's linear percentile on a fully sorted copy (the formulation before the fast path). */
function refPercentile(a: ArrayLike<number>, q: number): number {
  const n = a.length;
  const sorted = Float64Array.from(a).sort();
  const quantile = q / 100;
  const virtual = n * quantile + (1 + quantile * (1 - 1 - 1)) - 1;
  let prev = Math.floor(virtual);
  let next = prev + 1;
  const gamma = virtual - prev;
  prev = Math.min(Math.max(prev, 0), n - 1);
  next = Math.min(Math.max(next, 0), n - 1);
  const lo = sorted[prev], hi = sorted[next];
  const diff = hi - lo;
  return gamma >= 0.5 ? hi - diff * (1 - gamma) : lo + diff * gamma;
}

/** ndimage's symmetric mirror-padded correlation (savgol kernels are symmetric), one output at a time. */
function refSmooth(x: Float64Array, w: number, order: number): Float64Array {
  const c = savgolCoeffs(w, order);
  const half = (w - 1) / 2, last = x.length - 1;
  const at = (j: number) => x[j < 0 ? -j : j > last ? 2 * last - j : j];
  return x.map((_, i) => {
    let s = x[i] * c[half];
    for (let k = -half; k < 0; k++) s += (at(i + k) + at(i - k)) * c[k + half];
    return s;
  });
}

describe('fast paths are bit-identical', () => {
  it('npPercentile (insertion sort ≤ 64, typed sort beyond, NaN last) on random arrays and ranges', () => {
    for (const n of [1, 2, 5, 31, 40, 64, 65, 200]) {
      for (let rep = 0; rep < 20; rep++) {
        const a = Float64Array.from({ length: n }, () => (rnd() - 0.5) * 10 ** Math.floor(rnd() * 6 - 3));
        if (rep % 5 === 0) a[Math.floor(rnd() * n)] = a[0]; // ties
        for (const q of [0, 5, 25, 33.333333333333336, 50, 95, 100]) {
          expect(Object.is(npPercentile(a, q), refPercentile(a, q)), `n=${n} q=${q}`).toBe(true);
        }
        if (n > 4) expect(npPercentile(a, 95, 1, n - 1)).toBe(refPercentile(a.subarray(1, n - 1), 95));
      }
    }
    expect(npPercentile([3, NaN, 1], 50)).toBeNaN(); // NumPy: NaN sorts last and propagates
    expect(npPercentile([3, NaN, 1, 2], 25)).toBe(refPercentile([3, NaN, 1, 2], 25));
  });

  it('the 5-point smoothing equals the generic correlation for every length', () => {
    for (let n = 4; n <= 45; n++) {
      const x = Float64Array.from({ length: n }, () => rnd() * 20 - 10);
      // n = 4: the window shrinks to 3 < order + 2, so the signal passes unchanged
      const want = n < 5 ? x : refSmooth(x, 5, 2);
      expect(Array.from(smooth(x, 5, 2)), `n=${n}`).toEqual(Array.from(want));
      expect(Array.from(smooth(x, 7, 2)), `n=${n} w=7`).toEqual(Array.from(n < 5 ? x : refSmooth(x, Math.min(7, n % 2 ? n : n - 1), 2)));
    }
    const short = Float64Array.from([1, 2, 3]);
    expect(smooth(short, 5, 2)).toBe(short); // shorter than order + 2: unchanged
  });

  it('yaw with and without wraps: the skipped unwrap equals np.unwrap', () => {
    const t = Array.from({ length: 35 }, (_, i) => i * 0.09 + 0.01 * Math.sin(i));
    const yawUn = t.map((s) => 3 + 0.4 * s); // crosses π
    const wrapped = yawUn.map((v) => (v > Math.PI ? v - 2 * Math.PI : v));
    const x = t.map((s) => 8 * s), y = t.map(() => 0);
    const a = computeDynamics(makeTrajectory('w', { t, x, y, yaw: wrapped }));
    const b = computeDynamics(makeTrajectory('u', { t, x, y, yaw: Array.from(unwrap(wrapped)) }));
    expect(Array.from(a.yaw)).toEqual(Array.from(b.yaw));
    expect(Array.from(a.yaw_rate)).toEqual(Array.from(b.yaw_rate));
  });

  it('results do not share reused buffers: an earlier result is unchanged by later calls', () => {
    const Q = loadQuestions();
    const mk = (v: number, w: number) => {
      const t = Array.from({ length: 31 }, (_, i) => i / 10);
      return makeTrajectory(`v${v}`, { t, x: t.map((s) => v * s), y: t.map((s) => w * s * s), yaw: t.map((s) => w * s) });
    };
    const r1 = runOracle(mk(5, 0.1), Q);
    const snap = JSON.stringify({ a: Object.fromEntries(Object.entries(r1.arrays).map(([k, v]) => [k, Array.from(v)])), f: r1.features, l: r1.labels });
    for (let i = 0; i < 50; i++) runOracle(mk(20 - i / 5, -0.3 + i / 100), Q);
    expect(JSON.stringify({ a: Object.fromEntries(Object.entries(r1.arrays).map(([k, v]) => [k, Array.from(v)])), f: r1.features, l: r1.labels })).toBe(snap);
    expect(runOracle(mk(5, 0.1), Q)).toEqual(r1);
  });
});
