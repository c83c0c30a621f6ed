/**
 * Reusable Float64Array buffers for the oracle's hot path (145k trajectories/s needs no per-call
 * allocation). Each module takes its own pool, so buffers never alias across modules; contents
 * are undefined on hand-out. Single-threaded by construction (one pool per worker's module graph).
 */
export function scratchPool(): (k: number, n: number) => Float64Array {
  const bufs: Float64Array[] = [];
  return (k, n) => {
    let b = bufs[k];
    if (!b || b.length < n) {
      b = new Float64Array(Math.max(n, 64, b ? 2 * b.length : 0));
      bufs[k] = b;
    }
    return b;
  };
}
