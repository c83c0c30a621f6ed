/**
 * The project's seeded random numbers, in one place: `Rng` (splitmix32-style hashing; every
 * synthetic clip is a pure function of its seed) and `mulberry32` (a tiny stream generator for
 * benchmarks and tests that need reproducible inputs).
 */

/** mulberry32: a small, fast, seedable generator of uniforms in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 32-bit integer hash (the same mixer as native/render/texture.h). */
export function hash32(x: number): number {
  x = x >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d) >>> 0;
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b) >>> 0;
  x ^= x >>> 16;
  return x >>> 0;
}

export function hashSeeds(...xs: number[]): number {
  let h = 0x9e3779b9;
  for (const x of xs) h = hash32(h ^ hash32((x >>> 0) + 0x6d2b79f5));
  return h;
}

export class Rng {
  private state: number;
  constructor(...seeds: number[]) {
    this.state = hashSeeds(...seeds);
  }
  /** Next 32-bit value. */
  next(): number {
    this.state = hash32((this.state + 0x6d2b79f5) >>> 0);
    return this.state;
  }
  /** Uniform in [0, 1). */
  unit(): number {
    return this.next() / 4294967296;
  }
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.unit();
  }
  /** Integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.unit() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.below(xs.length)];
  }
  /** Index drawn with probability proportional to `weights`. */
  weighted(weights: readonly number[]): number {
    const total = weights.reduce((a, b) => a + b, 0);
    let r = this.unit() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i];
      if (r < 0) return i;
    }
    return weights.length - 1;
  }
  /** ±1 with equal probability. */
  sign(): 1 | -1 {
    return this.unit() < 0.5 ? 1 : -1;
  }
  /** Approximately normal (sum of four uniforms), mean 0, std 1. */
  normal(): number {
    return (this.unit() + this.unit() + this.unit() + this.unit() - 2) * Math.sqrt(3);
  }
}
