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

/**
 * The cubic smoothing spline of a channel measured by its increments: knot values v at t (v[0]
 * given) minimising Σ_k (v[k+1] − v[k] − d[k])² / variance[k] + λ ∫ v''² dt, with d the measured
 * increments. Its minimiser is the natural cubic spline through the returned values. Bayesian
 * reading: the posterior mean when the channel's second derivative is white noise of PSD 1/λ
 * (an integrated random walk) and each increment carries independent noise of that variance;
 * λ → 0 or zero variances give the increments back (the interpolating natural spline).
 * Increments rather than values because an odometer measures steps: its position error is a
 * random walk, not white. O(n): by Woodbury the update is a tridiagonal solve,
 * u = d − Σ Bᵀ z with (R + λ B Σ Bᵀ) z = λ B d, where Bu = Qᵀv (Green & Silverman's Q, R).
 */
export function smoothIncrements(t: ArrayLike<number>, v0: number, d: ArrayLike<number>, variance: ArrayLike<number>, lambda: number): Float64Array {
  const n = t.length;
  if (d.length !== n - 1 || variance.length !== n - 1) throw new RangeError(`smoothIncrements: ${n} knots need ${n - 1} increments and variances, got ${d.length} and ${variance.length}`);
  const u = Float64Array.from(d);
  const m = n - 2; // interior knots
  if (m > 0 && lambda > 0) {
    const h = Float64Array.from({ length: n - 1 }, (_, k) => t[k + 1] - t[k]);
    const diag = new Float64Array(m), off = new Float64Array(m), rhs = new Float64Array(m);
    for (let r = 0; r < m; r++) {
      const a = variance[r] / (h[r] * h[r]), b = variance[r + 1] / (h[r + 1] * h[r + 1]);
      diag[r] = (h[r] + h[r + 1]) / 3 + lambda * (a + b);
      off[r] = h[r + 1] / 6 - lambda * b; // (r, r+1); unused for the last row
      rhs[r] = lambda * (d[r + 1] / h[r + 1] - d[r] / h[r]);
    }
    const z = solveTridiagonal(diag, off, rhs);
    // u = d − Σ Bᵀ z: B[r][r] = −1/h[r], B[r][r+1] = 1/h[r+1].
    for (let k = 0; k < n - 1; k++) {
      const bz = (k < m ? -z[k] / h[k] : 0) + (k >= 1 ? z[k - 1] / h[k] : 0);
      u[k] = d[k] - variance[k] * bz;
    }
  }
  const v = new Float64Array(n);
  v[0] = v0;
  for (let k = 0; k + 1 < n; k++) v[k + 1] = v[k] + u[k];
  return v;
}

/** The symmetric tridiagonal system with diagonal `diag` and super/sub-diagonal `off` (off[i] couples i and i+1), by the Thomas algorithm. */
function solveTridiagonal(diag: Float64Array, off: Float64Array, rhs: Float64Array): Float64Array {
  const m = diag.length;
  const c = new Float64Array(m), x = new Float64Array(m);
  let prev = 0;
  for (let i = 0; i < m; i++) {
    const den = diag[i] - (i > 0 ? off[i - 1] * c[i - 1] : 0);
    c[i] = off[i] / den;
    x[i] = (rhs[i] - (i > 0 ? off[i - 1] * prev : 0)) / den;
    prev = x[i];
  }
  for (let i = m - 2; i >= 0; i--) x[i] -= c[i] * x[i + 1];
  return x;
}
