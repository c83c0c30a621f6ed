/** The reference's 12 summary features of a clip (`compute_summary_features`). */
import { argmax, npMean, npPercentile, npSum } from '../core/numeric.js';
import type { DynamicsArrays } from './dynamics.js';

export interface SummaryFeatures {
  max_speed: number;
  mean_speed: number;
  min_accel: number;
  max_accel: number;
  mean_accel: number;
  max_abs_yaw_rate: number;
  signed_max_yaw_rate: number;
  max_abs_jerk: number;
  p95_abs_jerk: number;
  mean_abs_jerk: number;
  max_lateral_accel: number;
  total_heading_change: number;
}

export const FEATURE_NAMES = [
  'max_speed', 'mean_speed', 'min_accel', 'max_accel', 'mean_accel', 'max_abs_yaw_rate',
  'signed_max_yaw_rate', 'max_abs_jerk', 'p95_abs_jerk', 'mean_abs_jerk', 'max_lateral_accel',
  'total_heading_change',
] as const satisfies readonly (keyof SummaryFeatures)[];

export function summaryFeatures(a: DynamicsArrays): SummaryFeatures {
  const n = a.speed.length;
  const absYr = new Float64Array(n);
  const absJerk = new Float64Array(n);
  const lat = new Float64Array(n);
  let maxSpeed = -Infinity, minAccel = Infinity, maxAccel = -Infinity, maxAbsJerk = -Infinity, maxLat = -Infinity;
  for (let i = 0; i < n; i++) {
    absYr[i] = Math.abs(a.yaw_rate[i]);
    absJerk[i] = Math.abs(a.jerk[i]);
    lat[i] = a.speed[i] * absYr[i];
    if (a.speed[i] > maxSpeed) maxSpeed = a.speed[i];
    if (a.accel[i] < minAccel) minAccel = a.accel[i];
    if (a.accel[i] > maxAccel) maxAccel = a.accel[i];
    if (absJerk[i] > maxAbsJerk) maxAbsJerk = absJerk[i];
    if (lat[i] > maxLat) maxLat = lat[i];
  }
  const iYr = argmax(absYr);
  const yawDiffAbs = new Float64Array(Math.max(0, a.yaw.length - 1));
  for (let i = 1; i < a.yaw.length; i++) yawDiffAbs[i - 1] = Math.abs(a.yaw[i] - a.yaw[i - 1]);
  return {
    max_speed: maxSpeed,
    mean_speed: npMean(a.speed),
    min_accel: minAccel,
    max_accel: maxAccel,
    mean_accel: npMean(a.accel),
    max_abs_yaw_rate: absYr[iYr],
    signed_max_yaw_rate: a.yaw_rate[iYr],
    max_abs_jerk: maxAbsJerk,
    p95_abs_jerk: npPercentile(absJerk, 95),
    mean_abs_jerk: npMean(absJerk),
    max_lateral_accel: maxLat,
    total_heading_change: yawDiffAbs.length ? npSum(yawDiffAbs) : 0,
  };
}
