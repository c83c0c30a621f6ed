/**
 * Savitzky–Golay smoothing as scipy's `savgol_filter(x, window, order, mode='mirror')`:
 * least-squares coefficients (minimum-norm solve, like `savgol_coeffs`) applied as a correlation
 * with mirror extension (d c b | a b c d | c b a).
 */

const cache = new Map<string, Float64Array>();

/** Coefficients in correlation order for an odd window and polynomial order (derivative 0). */
export function savgolCoeffs(window: number, order: number): Float64Array {
  const key = `${window}/${order}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const half = (window - 1) / 2;
  const m = order + 1;
  // A[k][j] = x_j^k with x = -half..half; solve (A A^T) z = e0, c = A^T z.
  const g: number[][] = Array.from({ length: m }, () => new Array(m).fill(0));
  for (let r = 0; r < m; r++) {
    for (let c = 0; c < m; c++) {
      let s = 0;
      for (let j = -half; j <= half; j++) s += j ** r * j ** c;
      g[r][c] = s;
    }
  }
  const z = solve(g, Array.from({ length: m }, (_, i) => (i === 0 ? 1 : 0)));
  const coeffs = new Float64Array(window);
  for (let j = -half; j <= half; j++) {
    let s = 0;
    for (let k = 0; k < m; k++) s += j ** k * z[k];
    coeffs[j + half] = s;
  }
  cache.set(key, coeffs);
  return coeffs;
}

/** Gaussian elimination with partial pivoting on a small dense system. */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]]);
  for (let col = 0; col < n; col++) {
    let piv = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r][col]) > Math.abs(m[piv][col])) piv = r;
    [m[col], m[piv]] = [m[piv], m[col]];
    for (let r = col + 1; r < n; r++) {
      const f = m[r][col] / m[col][col];
      for (let c = col; c <= n; c++) m[r][c] -= f * m[col][c];
    }
  }
  const x = new Array(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = m[r][n];
    for (let c = r + 1; c < n; c++) s -= m[r][c] * x[c];
    x[r] = s / m[r][r];
  }
  return x;
}

/**
 * The reference's `_smooth`: signals shorter than order + 2 pass unchanged; the window shrinks to
 * the (odd) signal length when the signal is shorter than the window.
 */
export function smooth(signal: Float64Array, window: number, order: number): Float64Array {
  const n = signal.length;
  if (n < order + 2) return signal;
  const out = new Float64Array(n);
  smoothInto(signal, n, window, order, out);
  return out;
}

/**
 * `smooth` of `signal[0..n)` written into `out` (which must not alias `signal`). Each output is the
 * correlation sum in window order starting from 0, as the generic loop; the 5-point window has an
 * unrolled interior path with the same operation order.
 */
export function smoothInto(signal: Float64Array, n: number, window: number, order: number, out: Float64Array): void {
  let w = Math.min(window, n);
  if (w % 2 === 0) w -= 1;
  if (n < order + 2 || w < order + 2) {
    for (let i = 0; i < n; i++) out[i] = signal[i];
    return;
  }
  const c = savgolCoeffs(w, order);
  const half = (w - 1) / 2;
  const last = n - 1;
  const edge = (i: number): number => {
    let s = 0;
    for (let k = -half; k <= half; k++) {
      let j = i + k;
      if (j < 0) j = -j;
      else if (j > last) j = 2 * last - j;
      s += c[k + half] * signal[j];
    }
    return s;
  };
  if (w === 5) {
    const c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4];
    for (let i = 2; i < n - 2; i++) {
      out[i] = 0 + c0 * signal[i - 2] + c1 * signal[i - 1] + c2 * signal[i] + c3 * signal[i + 1] + c4 * signal[i + 2];
    }
    const lo = Math.min(2, n);
    for (let i = 0; i < lo; i++) out[i] = edge(i);
    for (let i = Math.max(lo, n - 2); i < n; i++) out[i] = edge(i);
    return;
  }
  for (let i = 0; i < n; i++) out[i] = edge(i);
}
