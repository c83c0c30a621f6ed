// KITTI's poses jitter from frame to frame (pair lengths follow a period-3 pattern of ±5% at low
// speed, bench/RESULTS.md "What the labels hold that a camera cannot see"); these remove it the
// same way in every study that needs the motion without it.
import { makeTrajectory } from '../../dist/core/trajectory.js';

/** Each value averaged with its neighbours within `half` places (the ends with the ones they have). */
export const movingMean = (v, half) => v.map((_, k) => {
  let sum = 0, n = 0;
  for (let i = Math.max(0, k - half); i <= Math.min(v.length - 1, k + half); i++, n++) sum += v[i];
  return sum / n;
});

/** The trajectory with each step's speed replaced by the mean of three consecutive steps' (headings and times kept). */
export function steadied(g) {
  const n = g.t.length, len = [], x = [g.x[0]], y = [g.y[0]];
  for (let k = 0; k + 1 < n; k++) len.push(Math.hypot(g.x[k + 1] - g.x[k], g.y[k + 1] - g.y[k]) / (g.t[k + 1] - g.t[k]));
  const mean = movingMean(len, 1);
  for (let k = 0; k + 1 < n; k++) {
    const f = len[k] > 0 ? mean[k] / len[k] : 1;
    x.push(x[k] + f * (g.x[k + 1] - g.x[k]));
    y.push(y[k] + f * (g.y[k + 1] - g.y[k]));
  }
  return makeTrajectory(g.id, { t: g.t, x, y, yaw: g.yaw });
}
