/**
 * The natural cubic spline: the C² interpolant with zero second derivative at both ends (SciPy's
 * `CubicSpline(bc_type='natural')`). Two knots give the straight line.
 */

/** v (at sorted, distinct knots t) through the natural cubic spline, at each of `at` (outside the knots: the end cubics extended). */
export function naturalCubic(t: ArrayLike<number>, v: ArrayLike<number>, at: ArrayLike<number>): Float64Array {
  const n = t.length;
  if (n < 2 || v.length !== n) throw new RangeError(`naturalCubic: needs at least 2 knots and one value each, got ${n} and ${v.length}`);
  // Second derivatives m at the knots: the tridiagonal system of C² continuity, m[0] = m[n-1] = 0 (Thomas algorithm).
  const m = new Float64Array(n);
  if (n > 2) {
    const c = new Float64Array(n), d = new Float64Array(n);
    for (let i = 1; i < n - 1; i++) {
      const h0 = t[i] - t[i - 1], h1 = t[i + 1] - t[i];
      const a = h0 / 6, b = (h0 + h1) / 3, cc = h1 / 6;
      const r = (v[i + 1] - v[i]) / h1 - (v[i] - v[i - 1]) / h0;
      const den = b - a * c[i - 1];
      c[i] = cc / den;
      d[i] = (r - a * d[i - 1]) / den;
    }
    for (let i = n - 2; i >= 1; i--) m[i] = d[i] - c[i] * m[i + 1];
  }
  const out = new Float64Array(at.length);
  let j = 0;
  for (let k = 0; k < at.length; k++) {
    const x = at[k];
    while (j < n - 2 && x > t[j + 1]) j++;
    while (j > 0 && x < t[j]) j--;
    const h = t[j + 1] - t[j], a = (t[j + 1] - x) / h, b = (x - t[j]) / h;
    out[k] = a * v[j] + b * v[j + 1] + ((a * a * a - a) * m[j] + (b * b * b - b) * m[j + 1]) * (h * h) / 6;
  }
  return out;
}

