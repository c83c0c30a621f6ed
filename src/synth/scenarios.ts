/**
 * Scenario generators: each draws one manoeuvre (times relative to the 3-second clip, which starts
 * at t = 0 after a pre-roll) scaled by the behaviour profile, plus the street environment it
 * happens in. Together they cover every answer of the 14 questions: standing still, creeping,
 * stop-and-go, gentle cruising, highway driving, accelerating, gentle/moderate/emergency braking,
 * brake-then-turn, intersection turns, road curves, lane changes, speed changes in either half,
 * and jerky stop-start driving. `mix.ts` chooses among them to balance the answers.
 */
import type { Plan, Phase } from './bicycle.js';
import type { BehaviourProfile } from './profiles.js';
import type { Rng } from '../core/random.js';

export type Environment = 'urban' | 'suburban' | 'highway';

export interface Scenario {
  /** Scenario kind (e.g. 'turn'); with a direction suffix where it has one ('turn-left'). */
  name: string;
  plan: Plan;
  environment: Environment;
  /** Lanes per direction (0 = the environment's default). */
  lanes: number;
}

/** Cruise speeds (m/s) a dataset asks for (`egogeo synth --speed MIN:MAX`): [min, max]. */
export type SpeedRange = readonly [number, number];

/**
 * `cruise`: when given, the scenario's speed is drawn from it instead of the scenario's own range
 * (only the scenarios in CRUISING take one; the manoeuvre around it stays the same).
 */
type Generator = (rng: Rng, p: BehaviourProfile, cruise?: SpeedRange) => Scenario;

/** The scenarios whose manoeuvre happens at a free cruising speed (the rest are slow by nature: standing, stopping, intersection turns). */
export const CRUISING: readonly string[] = ['cruise', 'accelerate', 'brake', 'emergencyBrake', 'evasive', 'curve', 'laneChange', 'speedChange'];

const PRE_ROLL = 1.5;
const END = 10; // phases beyond the clip

const hold = (until: number, accel = 0, curvature = 0): Phase => ({ until, accel, curvature });

/** Gentle road curvature a cruising car follows (yaw rate mostly inside the ±0.04 rad/s dead zone). */
const drift = (rng: Rng, v: number): number => (rng.unit() < 0.6 ? 0 : rng.sign() * rng.uniform(0.0, 0.03) / Math.max(v, 3));

function speedFor(regime: 'slow' | 'urban' | 'highway', rng: Rng, p: BehaviourProfile): number {
  const v = regime === 'slow' ? rng.uniform(1.2, 4.6) : regime === 'urban' ? rng.uniform(6, 13.5) : rng.uniform(15, 31);
  return v * (regime === 'slow' ? 1 : p.speedFactor);
}

function envFor(v: number, rng: Rng): Environment {
  if (v > 15) return 'highway';
  return rng.unit() < 0.7 ? 'urban' : 'suburban';
}

export const SCENARIOS: Readonly<Record<string, Generator>> = {
  standing(rng) {
    return { name: 'standing', plan: { v0: 0, preRoll: PRE_ROLL, phases: [hold(END, rng.uniform(-0.05, 0))] }, environment: rng.unit() < 0.5 ? 'urban' : 'suburban', lanes: 0 };
  },

  creep(rng) {
    const v = rng.uniform(0.6, 4.4);
    const a = rng.uniform(-0.2, 0.25);
    return { name: 'creep', plan: { v0: v, preRoll: PRE_ROLL, phases: [hold(END, a, drift(rng, v))] }, environment: 'urban', lanes: 0 };
  },

  cruise(rng, p, cruise) {
    const drawn = cruise ? null : rng.pick(['slow', 'urban', 'urban', 'highway'] as const);
    const v = drawn ? speedFor(drawn, rng, p) : rng.uniform(cruise![0], cruise![1]);
    const regime = drawn ?? (v < 5 ? 'slow' : v < 13.9 ? 'urban' : 'highway');
    const a = rng.uniform(-0.12, 0.12);
    return { name: `cruise-${regime}`, plan: { v0: v, preRoll: PRE_ROLL, phases: [hold(END, a, drift(rng, v))] }, environment: envFor(v, rng), lanes: 0 };
  },

  accelerate(rng, p, cruise) {
    const v0 = cruise ? rng.uniform(cruise[0], cruise[1]) : rng.unit() < 0.3 ? rng.uniform(0.6, 3) : rng.uniform(3, 16);
    const ts = rng.uniform(-1.2, 1.6);
    const a = rng.uniform(0.35, 1) * p.maxAccel;
    const dur = rng.uniform(0.8, 4);
    return {
      name: 'accelerate',
      plan: { v0, preRoll: PRE_ROLL, phases: [hold(ts), hold(ts + dur, a, drift(rng, v0)), hold(END, rng.uniform(-0.1, 0.2))] },
      environment: envFor(v0 + a * 2, rng),
      lanes: 0,
    };
  },

  brake(rng, p, cruise) {
    const v0 = cruise ? rng.uniform(cruise[0], cruise[1]) : rng.uniform(4, 24) * p.speedFactor;
    const ts = rng.uniform(-1.0, 1.6);
    const a = -rng.uniform(0.12, 1) * p.maxDecel;
    const dur = rng.uniform(0.7, 4);
    return {
      name: 'brake',
      plan: { v0, preRoll: PRE_ROLL, phases: [hold(ts), hold(ts + dur, a, drift(rng, v0)), hold(END)] },
      environment: envFor(v0, rng),
      lanes: 0,
    };
  },

  emergencyBrake(rng, p, cruise) {
    const v0 = cruise ? rng.uniform(cruise[0], cruise[1]) : rng.uniform(7, 24) * p.speedFactor;
    const ts = rng.uniform(-0.2, 1.6);
    const a = -rng.uniform(4.5, 8.5);
    return {
      name: 'emergency-brake',
      plan: { v0, preRoll: PRE_ROLL, phases: [hold(ts), { until: END, accel: a, curvature: 0, jerk: rng.uniform(15, 45) }] },
      environment: envFor(v0, rng),
      lanes: 0,
    };
  },

  evasive(rng, p, cruise) {
    // Hard braking while swerving around an obstacle: extreme deceleration plus a lateral jink.
    const dir = rng.sign();
    const v0 = cruise ? rng.uniform(cruise[0], cruise[1]) : rng.uniform(8, 20) * p.speedFactor;
    const ts = rng.uniform(-0.3, 1.2);
    const a = -rng.uniform(4.2, 8);
    const T = rng.uniform(1.2, 2.2);
    const k0 = rng.uniform(0.01, 0.05);
    const t1 = ts + rng.uniform(0, 0.6);
    return {
      name: dir > 0 ? 'evasive-left' : 'evasive-right',
      plan: {
        v0,
        preRoll: PRE_ROLL,
        phases: [
          hold(ts),
          { until: t1, accel: a, curvature: 0, jerk: rng.uniform(15, 40) },
          { until: t1 + T, accel: a, curvature: (t) => dir * k0 * Math.sin((2 * Math.PI * (t - t1)) / T), jerk: 30 },
          { until: END, accel: a * rng.uniform(0, 1), curvature: 0, jerk: 30 },
        ],
      },
      environment: envFor(v0, rng),
      lanes: 0,
    };
  },

  stopAndGo(rng, p) {
    const a = rng.uniform(0.7, 1) * Math.max(p.maxAccel, 1.6);
    if (rng.unit() < 0.5) {
      // Waiting at a light, then pulling away.
      const tg = rng.uniform(-0.3, 1.4);
      return { name: 'stop-and-go', plan: { v0: 0, preRoll: PRE_ROLL, phases: [hold(tg), hold(END, a)] }, environment: 'urban', lanes: 0 };
    }
    // Rolling to a stop, then going again.
    const v0 = rng.uniform(1.5, 5);
    const d = rng.uniform(0.6, 1) * Math.max(p.maxDecel, 2);
    const tStop = rng.uniform(-0.6, 0.6);
    const tb = tStop - v0 / d;
    const tg = tStop + rng.uniform(0.1, 0.8);
    return { name: 'stop-and-go', plan: { v0, preRoll: PRE_ROLL, phases: [hold(tb), hold(tg, -d), hold(END, a)] }, environment: 'urban', lanes: 0 };
  },

  turn(rng, p) {
    const dir = rng.sign();
    const v0 = rng.uniform(2.5, 9) * p.speedFactor;
    const R = rng.uniform(6, 22);
    const ts = rng.uniform(-1.0, 1.2);
    const angle = rng.uniform(0.35, 1.6);
    const dur = (angle * R) / Math.max(v0, 1);
    const aIn = rng.uniform(-0.6, 0.2), aOut = rng.uniform(-0.2, 1) * p.maxAccel;
    return {
      name: dir > 0 ? 'turn-left' : 'turn-right',
      plan: { v0, preRoll: PRE_ROLL, phases: [hold(ts, aIn), hold(ts + dur, aIn * 0.5, dir / R), hold(END, aOut)] },
      environment: 'urban',
      lanes: 0,
    };
  },

  brakeThenTurn(rng, p) {
    const dir = rng.sign();
    const v0 = rng.uniform(7, 15) * p.speedFactor;
    const tb = rng.uniform(-0.6, 0.9);
    const d = rng.uniform(1.9, Math.max(2.4, p.maxDecel + 0.5));
    const bd = rng.uniform(0.6, 1.4);
    const tt = tb + bd + rng.uniform(-0.3, 0.6);
    const R = rng.uniform(7, 18);
    const phases: Phase[] = [hold(tb), hold(Math.min(tb + bd, tt), -d)];
    if (tt > tb + bd) phases.push(hold(tt, -0.3));
    phases.push(hold(tt + rng.uniform(1, 2.5), -0.2, dir / R), hold(END, rng.uniform(0, 1)));
    return { name: dir > 0 ? 'brake-then-turn-left' : 'brake-then-turn-right', plan: { v0, preRoll: PRE_ROLL, phases }, environment: 'urban', lanes: 0 };
  },

  curve(rng, p, cruise) {
    const dir = rng.sign();
    const v0 = cruise ? rng.uniform(cruise[0], cruise[1]) : rng.uniform(7, 30) * p.speedFactor;
    const latTarget = rng.uniform(0.4, 1.3) * p.maxLatAccel;
    const k = latTarget / (v0 * v0);
    const ts = rng.uniform(-1.5, 1.2);
    const dur = rng.uniform(1.2, 5);
    return {
      name: dir > 0 ? 'curve-left' : 'curve-right',
      plan: { v0, preRoll: PRE_ROLL, phases: [hold(ts, rng.uniform(-0.15, 0.15)), hold(ts + dur, rng.uniform(-0.3, 0.2), dir * k), hold(END)] },
      environment: envFor(v0, rng),
      lanes: v0 > 15 ? 2 : 0,
    };
  },

  laneChange(rng, p, cruise) {
    const dir = rng.sign();
    const v0 = cruise ? rng.uniform(cruise[0], cruise[1]) : rng.uniform(8, 28) * p.speedFactor;
    const T = rng.uniform(2.5, 5);
    const ts = rng.uniform(-1.5, 1.0);
    // Sinusoidal curvature over T: a lateral shift of about a lane width.
    const shift = rng.uniform(2.5, 3.8);
    const k0 = (2 * Math.PI * shift) / (v0 * v0 * T * T);
    const kc = (t: number) => dir * k0 * Math.sin((2 * Math.PI * (t - ts)) / T);
    return {
      name: dir > 0 ? 'lane-change-left' : 'lane-change-right',
      plan: { v0, preRoll: PRE_ROLL, phases: [hold(ts, rng.uniform(-0.1, 0.1)), { until: ts + T, accel: rng.uniform(-0.1, 0.5), curvature: kc }, hold(END)] },
      environment: v0 > 15 ? 'highway' : 'urban',
      lanes: 2,
    };
  },

  speedChange(rng, p, cruise) {
    // Accelerate then brake, or brake then accelerate: the speed peak and the more dynamic half move.
    const v0 = cruise ? rng.uniform(cruise[0], cruise[1]) : rng.uniform(3, 16) * p.speedFactor;
    const t1 = rng.uniform(-0.3, 1.3), t2 = t1 + rng.uniform(0.5, 1.4);
    const a1 = rng.uniform(0.4, 1) * p.maxAccel, a2 = -rng.uniform(0.3, 1) * p.maxDecel;
    const first = rng.unit() < 0.5;
    return {
      name: first ? 'accelerate-then-brake' : 'brake-then-accelerate',
      plan: { v0, preRoll: PRE_ROLL, phases: first ? [hold(t1, a1), hold(t2, a2), hold(END)] : [hold(t1, a2), hold(t2, a1), hold(END)] },
      environment: envFor(v0, rng),
      lanes: 0,
    };
  },

  stopStart(rng, p) {
    // Jerky stop-start traffic: alternating throttle and brake pulses.
    const v0 = rng.uniform(2, 9);
    const period = rng.uniform(0.5, 1.1);
    const amp = rng.uniform(0.6, 1) * Math.max(p.maxAccel, 2);
    const phase0 = rng.uniform(0, period);
    return {
      name: 'stop-start',
      plan: { v0, preRoll: PRE_ROLL, phases: [{ until: END, accel: (t) => (Math.floor((t + phase0) / period) % 2 === 0 ? amp : -amp), jerk: Math.max(p.maxJerk, 6) * rng.uniform(1, 3) }] },
      environment: 'urban',
      lanes: 0,
    };
  },
};

export const SCENARIO_NAMES = Object.keys(SCENARIOS);
