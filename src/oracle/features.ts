/** The reference's 12 summary features of a clip (`compute_summary_features`). */
import { npMean, npPercentile, npSum } from '../core/numeric.js';
import type { DynamicsArrays } from './dynamics.js';
import { scratchPool } from '../core/scratch.js';
import { InputError } from '../core/errors.js';

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

/**
 * The features of `a`; arrays holding NaN or infinity (read from a file) and features that are not
 * finite (products that overflow) are refused naming `where`, as the reference's
 * `validate_dynamics_arrays` refuses such arrays.
 */
export function summaryFeatures(a: DynamicsArrays, where = 'trajectory'): SummaryFeatures {
  // NaN in an array a maximum skips (yaw_rate feeds no mean) would otherwise give finite features.
  for (const k of ['yaw', 'speed', 'accel', 'yaw_rate', 'jerk'] as const) {
    const v = a[k];
    for (let i = 0; i < v.length; i++) {
      if (!Number.isFinite(v[i])) throw new InputError(`${where}: its ${k} is ${v[i]} at sample ${i}; the oracle labels only finite dynamics`);
    }
  }
  const f = computeFeatures(a);
  for (const k of FEATURE_NAMES) {
    if (!Number.isFinite(f[k])) throw new InputError(`${where}: feature '${k}' is ${f[k]}; the oracle labels only finite dynamics`);
  }
  return f;
}

function computeFeatures(a: DynamicsArrays): SummaryFeatures {
  const n = a.speed.length;
  const speed = a.speed, accel = a.accel, yawRate = a.yaw_rate, jerk = a.jerk, yaw = a.yaw;
  const absJerk = scratch(0, n);
  let maxSpeed = -Infinity, minAccel = Infinity, maxAccel = -Infinity, maxAbsJerk = -Infinity, maxLat = -Infinity;
  let iYr = 0, maxAbsYr = n > 0 ? Math.abs(yawRate[0]) : NaN;
  for (let i = 0; i < n; i++) {
    const ay = Math.abs(yawRate[i]);
    const aj = Math.abs(jerk[i]);
    const lat = speed[i] * ay;
    absJerk[i] = aj;
    if (ay > maxAbsYr) {
      maxAbsYr = ay;
      iYr = i;
    }
    if (speed[i] > maxSpeed) maxSpeed = speed[i];
    if (accel[i] < minAccel) minAccel = accel[i];
    if (accel[i] > maxAccel) maxAccel = accel[i];
    if (aj > maxAbsJerk) maxAbsJerk = aj;
    if (lat > maxLat) maxLat = lat;
  }
  const m = Math.max(0, yaw.length - 1);
  const yawDiffAbs = scratch(1, m);
  for (let i = 1; i < yaw.length; i++) yawDiffAbs[i - 1] = Math.abs(yaw[i] - yaw[i - 1]);
  return {
    max_speed: maxSpeed,
    mean_speed: npMean(speed),
    min_accel: minAccel,
    max_accel: maxAccel,
    mean_accel: npMean(accel),
    max_abs_yaw_rate: maxAbsYr,
    signed_max_yaw_rate: yawRate[iYr],
    max_abs_jerk: maxAbsJerk,
    p95_abs_jerk: npPercentile(absJerk, 95, 0, n),
    mean_abs_jerk: npMean(absJerk, 0, n),
    max_lateral_accel: maxLat,
    total_heading_change: m ? npSum(yawDiffAbs, 0, m) : 0,
  };
}

const scratch = scratchPool();
