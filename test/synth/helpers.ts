/** Helpers shared by the synth tests. */
import { readNpz } from '../../src/io/npz.js';
import type { DynamicsArrays } from '../../src/oracle/index.js';

/** npz arrays → the oracle's DynamicsArrays (position split into x and y). */
export function dynamicsFromNpz(path: string): DynamicsArrays {
  const a = readNpz(path);
  const n = a.timestamps.data.length;
  const x = new Float64Array(n), y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[i] = a.position.data[2 * i];
    y[i] = a.position.data[2 * i + 1];
  }
  return { timestamps: a.timestamps.data, x, y, yaw: a.yaw.data, speed: a.speed.data, accel: a.accel.data, yaw_rate: a.yaw_rate.data, jerk: a.jerk.data };
}

