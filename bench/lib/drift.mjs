// The scale chain's drift over one window (bench/RESULTS.md "The scale chain in turns"): the mean
// error of the engine's relative scales, each pair's log length ratio to the previous pair against
// the steadied truth's. A mean away from zero is a speed read as growing or shrinking that much a
// pair. Shared by the studies that measure it.
import { pairSpeeds } from '../../dist/vo/config.js';
import { steadied } from './steadied.mjs';

const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;

/**
 * `{ drift, yawRate }` for an all-frames estimate `est` of a clip at `timestamps` whose ground truth
 * is `truth` (yawRate: the truth's mean |yaw rate| over the clip, rad/s), or null when no pair has a
 * measured ratio.
 */
export function ratioDrift(est, truth, timestamps) {
  const ts = timestamps;
  const dt = Array.from(ts, (t, k) => (k + 1 < ts.length ? ts[k + 1] - t : 0)).slice(0, -1);
  const d = pairSpeeds(steadied(truth), ts).map((v, k) => v * dt[k]);
  const errs = [];
  est.native.pairs.forEach((p, k) => {
    if (k > 0 && p.ratioSigma > 0 && d[k] > 0 && d[k - 1] > 0) errs.push(p.logRatio - Math.log(d[k] / d[k - 1]));
  });
  const i0 = truth.t.findIndex((u) => Math.abs(u - ts[0]) < 1e-6), i1 = truth.t.findIndex((u) => Math.abs(u - ts.at(-1)) < 1e-6);
  let turn = 0;
  for (let i = i0; i < i1; i++) turn += Math.abs(Math.atan2(Math.sin(truth.yaw[i + 1] - truth.yaw[i]), Math.cos(truth.yaw[i + 1] - truth.yaw[i])));
  return errs.length ? { drift: mean(errs), yawRate: turn / (ts.at(-1) - ts[0]) } : null;
}
