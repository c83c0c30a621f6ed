/**
 * Float64 helpers that reproduce NumPy/Python rounding and summation order, so the oracle and the
 * grader agree with the published reference to the last bit where it matters (labels at thresholds).
 */

type Num = ArrayLike<number>;

/** NumPy's pairwise summation of a contiguous float64 block (`pairwise_sum_DOUBLE`). */
function pairwise(a: Num, start: number, n: number): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += a[start + i];
    return res;
  }
  if (n <= 128) {
    let r0 = a[start], r1 = a[start + 1], r2 = a[start + 2], r3 = a[start + 3];
    let r4 = a[start + 4], r5 = a[start + 5], r6 = a[start + 6], r7 = a[start + 7];
    const end8 = n - (n % 8);
    let i = 8;
    for (; i < end8; i += 8) {
      const s = start + i;
      r0 += a[s]; r1 += a[s + 1]; r2 += a[s + 2]; r3 += a[s + 3];
      r4 += a[s + 4]; r5 += a[s + 5]; r6 += a[s + 6]; r7 += a[s + 7];
    }
    let res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    for (; i < n; i++) res += a[start + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwise(a, start, n2) + pairwise(a, start + n2, n - n2);
}

/**
 * `np.sum` of a 1-D float64 array: NumPy 2 starts the reduction from the identity and sums the
 * whole block pairwise (1.x seeded it with the first element, which differs in the last bit; the
 * golden oracle cases are NumPy 2's).
 */
export function npSum(a: Num, start = 0, end = a.length): number {
  const n = end - start;
  if (n <= 0) return 0;
  return 0 + pairwise(a, start, n);
}

/** `np.mean` (pairwise sum divided by the count). */
export function npMean(a: Num, start = 0, end = a.length): number {
  return npSum(a, start, end) / (end - start);
}

/** `np.percentile(a[start..end), q)` with the default linear method (NumPy >= 1.22 arithmetic). */
export function npPercentile(a: Num, q: number, start = 0, end = a.length): number {
  const n = end - start;
  const sorted = sortedCopy(a, start, end);
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

const sortBuf = new Float64Array(64);

/**
 * `a[start..end)` in ascending order (NaN last, as NumPy), in a reused buffer: insertion sort for
 * short NaN-free runs, the typed-array sort otherwise. Valid until the next call.
 */
function sortedCopy(a: Num, start: number, end: number): Float64Array {
  const n = end - start;
  if (n <= sortBuf.length) {
    const b = sortBuf;
    let i = 0;
    for (; i < n; i++) {
      const v = a[start + i];
      if (v !== v) break;
      let j = i - 1;
      while (j >= 0 && b[j] > v) {
        b[j + 1] = b[j];
        j--;
      }
      b[j + 1] = v;
    }
    if (i === n) return b;
  }
  const c = new Float64Array(n);
  for (let k = 0; k < n; k++) c[k] = a[start + k];
  return c.sort();
}

/** Index of the first maximum (`np.argmax`). */
export function argmax(a: Num): number {
  let best = 0;
  for (let i = 1; i < a.length; i++) if (a[i] > a[best]) best = i;
  return best;
}

/** Python's float modulo (result has the sign of the divisor), as NumPy's `np.mod`. */
export function pyMod(a: number, b: number): number {
  let m = a % b;
  if (m !== 0) {
    if (b < 0 !== m < 0) m += b;
  } else {
    m = b < 0 ? -0 : 0;
  }
  return m;
}

/** `np.unwrap(p)` with the default discontinuity of pi and period 2*pi. */
export function unwrap(p: Num): Float64Array {
  const n = p.length;
  const out = new Float64Array(n);
  if (n === 0) return out;
  out[0] = p[0];
  let correction = 0;
  for (let i = 1; i < n; i++) {
    const dd = p[i] - p[i - 1];
    let ddmod = pyMod(dd + Math.PI, 2 * Math.PI) - Math.PI;
    if (ddmod === -Math.PI && dd > 0) ddmod = Math.PI;
    let phCorrect = ddmod - dd;
    if (Math.abs(dd) < Math.PI) phCorrect = 0;
    correction += phCorrect;
    out[i] = p[i] + correction;
  }
  return out;
}

/**
 * Python's `round(x, ndigits)`: round half to even on the exact binary value, then the nearest
 * double to that decimal. `Number.toFixed` rounds ties away from zero, which differs on exact
 * ties such as 0.03125 (a plausible metric value, 1/32).
 */
export function pyRound(x: number, ndigits = 4): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const [mant, exp] = decompose(x);
  const ten = 10n ** BigInt(ndigits);
  let q: bigint;
  if (exp >= 0) {
    q = (mant << BigInt(exp)) * ten;
  } else {
    const num = mant * ten;
    const den = 1n << BigInt(-exp);
    const neg = num < 0n;
    const absNum = neg ? -num : num;
    let qq = absNum / den;
    const rem2 = (absNum % den) * 2n;
    if (rem2 > den || (rem2 === den && qq % 2n === 1n)) qq += 1n;
    q = neg ? -qq : qq;
  }
  const r = Number(`${q}e-${ndigits}`);
  return r === 0 && x < 0 ? -0 : r;
}

/** x = mant * 2^exp exactly, mant an integer. */
function decompose(x: number): [bigint, number] {
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  const hi = buf.getUint32(0), lo = buf.getUint32(4);
  const sign = hi >>> 31 ? -1n : 1n;
  const e = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp: number;
  if (e === 0) exp = -1074;
  else {
    m |= 1n << 52n;
    exp = e - 1075;
  }
  return [sign * m, exp];
}
