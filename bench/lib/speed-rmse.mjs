// A clip's speed RMSE as the benches count it: the estimate's TUM poses against its ground truth at
// the same timestamps (the run's <clip>.tum and <clip>.gt.tum; at 10 frames both hold the oracle's
// grid points between the frames), the speed between consecutive poses on the ground plane.
import { parseTum } from '../../dist/io/trajectories.js';

const speeds = (t) => Array.from({ length: t.t.length - 1 }, (_, k) => Math.hypot(t.x[k + 1] - t.x[k], t.y[k + 1] - t.y[k]) / (t.t[k + 1] - t.t[k]));

/** Speed RMSE (m/s) of an estimate against its truth, both trajectories (or TUM texts) on the same timestamps. */
export function speedRmse(estimate, truth) {
  const e = speeds(typeof estimate === 'string' ? parseTum(estimate) : estimate);
  const g = speeds(typeof truth === 'string' ? parseTum(truth) : truth);
  if (e.length !== g.length) throw new Error(`speedRmse: ${e.length} estimated speeds against ${g.length} true ones`);
  return Math.sqrt(g.reduce((a, v, k) => a + (v - e[k]) ** 2, 0) / g.length);
}

/** The truth's distance travelled over its time span (m/s). */
export function meanSpeed(truth) {
  const g = typeof truth === 'string' ? parseTum(truth) : truth;
  const v = speeds(g);
  return v.reduce((a, x, k) => a + x * (g.t[k + 1] - g.t[k]), 0) / (g.t[g.t.length - 1] - g.t[0]);
}
