/**
 * The published geometric baselines' answers (`baselines/` in TUM-AVS/EgoDyn-Bench): the rules that
 * turn the per-pair signals (native/baselines/proxy.cc computes them as the reference does) into the
 * six answers, with the reference's config defaults and NumPy's arithmetic (np.sum / np.mean
 * pairwise, core/numeric.ts), so equal signals give equal answers. Pure: no I/O.
 */
import { npMean, npSum } from '../core/numeric.js';
import { stopGoCycles } from '../oracle/rules.js';

/** The two published methods and what they answer. */
export const REFERENCE_METHODS = ['vo-proxy', 'flow-heuristic'] as const;
export type ReferenceMethod = (typeof REFERENCE_METHODS)[number];

/** Frames per clip the scripts read by default (`--num_frames 10`, evenly spaced). */
export const REFERENCE_FRAMES = 10;



export interface VoProxySignals {
  yawDeg: ArrayLike<number>;
  dispMag: ArrayLike<number>;
}
export interface FlowSignals {
  turnScore: ArrayLike<number>;
  expScore: ArrayLike<number>;
  motionMag: ArrayLike<number>;
}

/** VOProxyBaseline's defaults. */
export const VO_PROXY_CONFIG = {
  yaw_deadzone_deg: 0.03,
  yaw_peak_thr_deg: 0.15,
  disp_stopped_thr: 0.5,
  disp_moving_thr: 2.0,
  trend_deadzone: 0.3,
  heading_change_thr_deg: 1.5,
  lateral_thr_deg: 0.8,
  brake_disp_drop: 0.4,
} as const;

/** FlowHeuristicBaseline's defaults. */
export const FLOW_CONFIG = {
  turn_deadzone: 0.05,
  exp_deadzone: 0.2,
  motion_stopped_thr: 0.3,
  motion_moving_thr: 1.5,
  heading_change_thr: 3.0,
  lateral_thr: 1.5,
} as const;

const maxAbs = (a: ArrayLike<number>): number => Array.from(a).reduce((m, v) => Math.max(m, Math.abs(v)), -Infinity);
const abs = (a: ArrayLike<number>): Float64Array => Float64Array.from(a, Math.abs);

/** The hysteresis stop→go cycle count both scripts use (the oracle's state machine): "yes" with one cycle or more (3+ pairs). */
function stopAndGo(x: ArrayLike<number>, stopped: number, moving: number): 'yes' | 'no' {
  return x.length >= 3 && stopGoCycles(x, stopped, moving) >= 1 ? 'yes' : 'no';
}

/** Whether some pair flagged by `brake` comes before some pair flagged by `turn`. */
function brakeThenTurn(brake: boolean[], turn: boolean[]): 'yes' | 'no' {
  const lastTurn = turn.lastIndexOf(true);
  return brake.some((b, i) => b && lastTurn > i) ? 'yes' : 'no';
}

/** VOProxyBaseline.predict from its signals. */
export function voProxyAnswers(s: VoProxySignals, c = VO_PROXY_CONFIG): Record<string, string> {
  const yaw = s.yawDeg, disp = s.dispMag;
  const out: Record<string, string> = {};
  const yawMean = yaw.length > 0 ? npMean(yaw) : 0;
  const yawPeak = yaw.length > 0 ? maxAbs(yaw) : 0;
  out.yaw_rate_turn_direction = Math.abs(yawMean) > c.yaw_deadzone_deg && yawPeak > c.yaw_peak_thr_deg ? (yawMean > 0 ? 'left' : 'right') : 'straight';
  if (disp.length >= 3) {
    // Least-squares slope of the displacement over the pair index, as the script computes it.
    const t = Float64Array.from({ length: disp.length }, (_, i) => i);
    const tMean = npMean(t), dMean = npMean(disp);
    const num = npSum(Float64Array.from(t, (v, i) => (v - tMean) * (disp[i] - dMean)));
    const den = npSum(Float64Array.from(t, (v) => (v - tMean) ** 2));
    const slope = num / Math.max(den, 1e-12);
    out.speed_trend = slope > c.trend_deadzone ? 'accelerating' : slope < -c.trend_deadzone ? 'decelerating' : 'steady';
  } else {
    out.speed_trend = 'steady';
  }
  out.stop_and_go = stopAndGo(disp, c.disp_stopped_thr, c.disp_moving_thr);
  out.significant_heading_change = (yaw.length > 0 ? npSum(abs(yaw)) : 0) > c.heading_change_thr_deg ? 'yes' : 'no';
  out.high_lateral_accel = yawPeak > c.lateral_thr_deg ? 'yes' : 'no';
  if (disp.length >= 3 && yaw.length >= 3) {
    const meanDisp = npMean(disp);
    const brakeThr = meanDisp > 0.5 ? meanDisp * c.brake_disp_drop : 0;
    const brake = Array.from(disp, (d, k) => k >= 1 && brakeThr > 0 && d < disp[k - 1] - brakeThr);
    const turn = Array.from(yaw, (y) => Math.abs(y) > c.yaw_deadzone_deg);
    out.brake_then_turn = brakeThenTurn(brake, turn);
  } else {
    out.brake_then_turn = 'no';
  }
  return out;
}

/** FlowHeuristicBaseline.predict from its signals. */
export function flowHeuristicAnswers(s: FlowSignals, c = FLOW_CONFIG): Record<string, string> {
  const turn = s.turnScore, exp = s.expScore, mag = s.motionMag;
  const out: Record<string, string> = {};
  const meanTurn = turn.length > 0 ? npMean(turn) : 0;
  const meanExp = exp.length > 0 ? npMean(exp) : 0;
  const peak = turn.length > 0 ? maxAbs(turn) : 0;
  const cumul = turn.length > 0 ? npSum(abs(turn)) : 0;
  out.yaw_rate_turn_direction = meanTurn > c.turn_deadzone ? 'left' : meanTurn < -c.turn_deadzone ? 'right' : 'straight';
  out.speed_trend = meanExp > c.exp_deadzone ? 'accelerating' : meanExp < -c.exp_deadzone ? 'decelerating' : 'steady';
  out.significant_heading_change = cumul > c.heading_change_thr ? 'yes' : 'no';
  out.high_lateral_accel = peak > c.lateral_thr ? 'yes' : 'no';
  out.stop_and_go = stopAndGo(mag, c.motion_stopped_thr, c.motion_moving_thr);
  out.brake_then_turn =
    exp.length >= 3 && turn.length >= 3
      ? brakeThenTurn(Array.from(exp, (e) => e < -c.exp_deadzone), Array.from(turn, (t) => Math.abs(t) > c.turn_deadzone))
      : 'no';
  return out;
}
