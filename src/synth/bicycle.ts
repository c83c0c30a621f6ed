/**
 * A kinematic bicycle model (reference point on the rear axle, no side slip) driven by a plan of
 * commanded acceleration and path curvature, with the behaviour profile's jerk, steering-rate and
 * lateral-acceleration limits. Integrated at 200 Hz, then sampled at the frame timestamps.
 *
 *   ẋ = v cos ψ,  ẏ = v sin ψ,  ψ̇ = v tan δ / L,  v̇ = a,  ȧ = clamp(a_cmd − a, ±jerk)/dt,
 *   δ̇ = clamp(δ_cmd − δ, ±steerRate·dt)/dt,  δ_cmd = atan(L κ_cmd) with |κ_cmd| ≤ a_lat / v².
 *
 * The vehicle never reverses: braking eases off before standstill (within the jerk limit) and the
 * car stays at v = 0 until a positive command.
 */
import type { BehaviourProfile } from './profiles.js';

/** Command as a constant or a function of clip time (s). */
export type Command = number | ((t: number) => number);

/** One phase of a plan, active until clip time `until` (phases are consecutive). */
export interface Phase {
  until: number;
  /** Commanded longitudinal acceleration (m/s²). */
  accel?: Command;
  /** Commanded path curvature (1/m, positive = left). */
  curvature?: Command;
  /** Overrides the profile's jerk limit while this phase is active (emergency braking). */
  jerk?: number;
}

export interface Plan {
  /** Speed at the start of the pre-roll (m/s). */
  v0: number;
  /** Seconds simulated before the clip starts (lets the vehicle settle into the plan). */
  preRoll: number;
  phases: Phase[];
}

export interface DenseTrajectory {
  /** Clip time (s); negative during the pre-roll. */
  t: Float64Array;
  x: Float64Array;
  y: Float64Array;
  yaw: Float64Array;
  v: Float64Array;
  a: Float64Array;
}

export const WHEELBASE = 2.8;
export const SIM_DT = 0.005;

const value = (c: Command | undefined, t: number): number => (c === undefined ? 0 : typeof c === 'number' ? c : c(t));

/** Simulates `plan` from clip time −preRoll to `end` (inclusive). */
export function simulate(plan: Plan, profile: BehaviourProfile, end: number): DenseTrajectory {
  const n = Math.ceil((end + plan.preRoll) / SIM_DT) + 1;
  const out: DenseTrajectory = {
    t: new Float64Array(n),
    x: new Float64Array(n),
    y: new Float64Array(n),
    yaw: new Float64Array(n),
    v: new Float64Array(n),
    a: new Float64Array(n),
  };
  let x = 0, y = 0, yaw = 0, v = Math.max(0, plan.v0), a = 0, delta = 0;
  let phase = 0;
  for (let i = 0; i < n; i++) {
    const t = -plan.preRoll + i * SIM_DT;
    while (phase < plan.phases.length - 1 && t >= plan.phases[phase].until) phase++;
    const ph = plan.phases[phase];
    out.t[i] = t;
    out.x[i] = x;
    out.y[i] = y;
    out.yaw[i] = yaw;
    out.v[i] = v;
    out.a[i] = a;
    // Longitudinal: jerk-limited approach to the commanded acceleration. Braking eases off
    // before standstill (|a| <= sqrt(1.6 j v)), so the car stops within the jerk limit too.
    const jerk = ph?.jerk ?? profile.maxJerk;
    let aCmd = ph ? value(ph.accel, t) : 0;
    if (aCmd < 0) aCmd = Math.max(aCmd, -Math.sqrt(1.6 * jerk * v)); // 0.8 j: slack to track it
    const jmax = jerk * SIM_DT;
    a += Math.max(-jmax, Math.min(jmax, aCmd - a));
    // Lateral: curvature command capped by the lateral-acceleration limit, steering-rate limited.
    let k = ph ? value(ph.curvature, t) : 0;
    const kmax = profile.maxLatAccel / Math.max(v * v, 1e-6);
    k = Math.max(-kmax, Math.min(kmax, k));
    const dCmd = Math.atan(WHEELBASE * k);
    const dmax = profile.steerRate * SIM_DT;
    delta += Math.max(-dmax, Math.min(dmax, dCmd - delta));
    // Integrate (semi-implicit: position with the current speed and heading).
    x += v * Math.cos(yaw) * SIM_DT;
    y += v * Math.sin(yaw) * SIM_DT;
    yaw += (v * Math.tan(delta) / WHEELBASE) * SIM_DT;
    v += a * SIM_DT;
    if (v <= 0) {
      v = 0;
      if (a < 0) a = 0;  // standing: brakes hold, no reversing
    }
  }
  return out;
}

/** Linear interpolation of the dense trajectory at clip times `ts` (planar pose per frame). */
export function sampleAt(d: DenseTrajectory, ts: ArrayLike<number>): { x: Float64Array; y: Float64Array; yaw: Float64Array } {
  const m = ts.length;
  const x = new Float64Array(m), y = new Float64Array(m), yaw = new Float64Array(m);
  const t0 = d.t[0];
  for (let k = 0; k < m; k++) {
    const f = (ts[k] - t0) / SIM_DT;
    const i = Math.max(0, Math.min(d.t.length - 2, Math.floor(f)));
    const w = Math.max(0, Math.min(1, f - i));
    x[k] = d.x[i] + (d.x[i + 1] - d.x[i]) * w;
    y[k] = d.y[i] + (d.y[i + 1] - d.y[i]) * w;
    yaw[k] = d.yaw[i] + (d.yaw[i + 1] - d.yaw[i]) * w;
  }
  return { x, y, yaw };
}
