/**
 * core/pyrandom — CPython's `random.Random` as far as egogeo needs it (EgoGears' option shuffle,
 * the reference's clip bootstrap), bit for bit: the Mersenne Twister MT19937 (`init_genrand`, `init_by_array`, `genrand_uint32`),
 * seeding by an int or a str (version 2: a str becomes the big-endian integer of its UTF-8 bytes
 * followed by their SHA-512 digest; the integer's absolute value is cut into 32-bit words, least
 * significant first, for `init_by_array`), `getrandbits`, `_randbelow` (rejection sampling with
 * `getrandbits(n.bit_length())`), `shuffle` (Fisher–Yates from the end), `random()` (53 bits from
 * two outputs, `genrand_res53`) and unweighted `choices` (`floor(random() * n)` per draw). Pure. May import nothing
 * but node:crypto.
 */
import { createHash } from 'node:crypto';

const N = 624;
const M = 397;

export class PyRandom {
  private readonly mt = new Uint32Array(N);
  private mti = N + 1;

  constructor(seed: string | bigint | number) {
    this.seed(seed);
  }

  /** `random.seed(a)` (version 2) for a str or an int. */
  seed(a: string | bigint | number): void {
    let key: Uint32Array;
    if (typeof a === 'string') {
      const bytes = Buffer.from(a, 'utf8');
      const digest = createHash('sha512').update(bytes).digest();
      key = wordsOfBigEndian(Buffer.concat([bytes, digest]));
    } else {
      if (typeof a === 'number' && !Number.isInteger(a)) throw new RangeError(`seed: ${a} is not an integer (CPython hashes floats; not reproduced)`);
      let n = BigInt(a);
      if (n < 0n) n = -n;
      const words: number[] = [];
      while (n > 0n) {
        words.push(Number(n & 0xffffffffn));
        n >>= 32n;
      }
      key = Uint32Array.from(words.length ? words : [0]);
    }
    this.initByArray(key);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const p = mt[i - 1];
      mt[i] = (Math.imul(1812433253, p ^ (p >>> 30)) + i) >>> 0;
    }
    this.mti = N;
  }

  private initByArray(key: Uint32Array): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const p = mt[i - 1];
      mt[i] = ((mt[i] ^ Math.imul(p ^ (p >>> 30), 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const p = mt[i - 1];
      mt[i] = ((mt[i] ^ Math.imul(p ^ (p >>> 30), 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  /** The next 32-bit output. */
  genrandUint32(): number {
    const mt = this.mt;
    if (this.mti >= N) {
      let kk = 0;
      for (; kk < N - M; kk++) {
        const y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7fffffff);
        mt[kk] = mt[kk + M] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      for (; kk < N - 1; kk++) {
        const y = (mt[kk] & 0x80000000) | (mt[kk + 1] & 0x7fffffff);
        mt[kk] = mt[kk + (M - N)] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      const y = (mt[N - 1] & 0x80000000) | (mt[0] & 0x7fffffff);
      mt[N - 1] = mt[M - 1] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      this.mti = 0;
    }
    let y = mt[this.mti++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `getrandbits(k)` for 0 < k ≤ 32 (all `_randbelow` needs for lists shorter than 2^32). */
  getrandbits(k: number): number {
    if (!(k > 0 && k <= 32)) throw new RangeError(`getrandbits: k = ${k} outside 1..32`);
    return this.genrandUint32() >>> (32 - k);
  }

  /** `_randbelow_with_getrandbits(n)`: uniform in [0, n), n ≥ 1. */
  randbelow(n: number): number {
    const k = 32 - Math.clz32(n); // n.bit_length()
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** `random()`: a double in [0, 1) from two outputs (`genrand_res53`). */
  random(): number {
    const a = this.genrandUint32() >>> 5;
    const b = this.genrandUint32() >>> 6;
    return (a * 67108864 + b) * (1 / 9007199254740992);
  }

  /** Unweighted `choices(range(n), k=k)`: k indices drawn with replacement. */
  choiceIndices(n: number, k: number): Int32Array {
    const out = new Int32Array(k);
    for (let i = 0; i < k; i++) out[i] = Math.floor(this.random() * n);
    return out;
  }

  /** `shuffle(x)` in place. */
  shuffle<T>(x: T[]): T[] {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      const t = x[i];
      x[i] = x[j];
      x[j] = t;
    }
    return x;
  }
}

/** The 32-bit words of a big-endian byte string's integer, least significant first (no leading zero words). */
function wordsOfBigEndian(b: Uint8Array): Uint32Array {
  let start = 0;
  while (start < b.length && b[start] === 0) start++;
  const len = b.length - start;
  if (len === 0) return Uint32Array.of(0);
  const nw = Math.ceil(len / 4);
  const out = new Uint32Array(nw);
  for (let w = 0; w < nw; w++) {
    let v = 0;
    for (let byte = 0; byte < 4; byte++) {
      const idx = b.length - 1 - (w * 4 + byte);
      if (idx >= start) v |= b[idx] << (8 * byte);
    }
    out[w] = v >>> 0;
  }
  return out;
}
