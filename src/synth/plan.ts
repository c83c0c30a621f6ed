/**
 * Planning a synthetic dataset: which scenario, profile and world each clip gets, its frame poses
 * and its oracle labels. A pure function of (clips, seed, preset, profile): no rendering here.
 *
 * The mix balances the 14 answers with the oracle in the loop: for every clip, a handful of
 * candidate scenarios (each from its own seeded generator) are simulated and labelled, and the
 * candidate whose answers are currently rarest wins (score = Σ over questions of the running
 * count of its answer × the question's number of choices). Clip i depends only on the seed and
 * clips 0..i-1, so the first k clips of a larger set are the k-clip set.
 */
import { makeTrajectory, type Trajectory } from '../core/trajectory.js';
import type { RenderRequest } from '../native/index.js';
import { runOracle, type OracleResult, type QuestionSet } from '../oracle/index.js';
import { sampleAt, simulate } from './bicycle.js';
import { PROFILE_NAMES, PROFILES, type ProfileName } from './profiles.js';
import { CLIP_SECONDS, PRESETS, type PresetName } from './presets.js';
import { hashSeeds, Rng } from '../core/random.js';
import { CRUISING, SCENARIOS, type Environment, type SpeedRange } from './scenarios.js';

/** Relative frequency of each scenario kind among the candidates. */
export const SCENARIO_WEIGHTS: Readonly<Record<string, number>> = {
  standing: 0.6,
  creep: 0.8,
  cruise: 1.4,
  accelerate: 1.2,
  brake: 1.4,
  emergencyBrake: 1.2,
  evasive: 0.8,
  stopAndGo: 1.0,
  turn: 1.4,
  brakeThenTurn: 1.0,
  curve: 1.2,
  laneChange: 0.8,
  speedChange: 1.0,
  stopStart: 0.6,
};

export interface PlanOptions {
  clips: number;
  seed: number;
  /** A preset for every clip, or 'mixed': CARLA-like and nuScenes-like clips alternating. */
  preset: PresetName | 'mixed';
  /** One profile for every clip; default: each candidate draws one of the five. */
  profile?: ProfileName;
  questions: QuestionSet;
  /** Candidates simulated per clip (default 16); 1 = no balancing. */
  candidates?: number;
  /** Cruise speeds (m/s): only the cruising scenarios, their speed drawn from this range. */
  speed?: SpeedRange;
}

export interface SynthClip {
  id: string;
  index: number;
  preset: PresetName;
  profile: ProfileName;
  scenario: string;
  environment: Environment;
  /** Seed of this clip's world (buildings, textures, noise). */
  worldSeed: number;
  /** Frame timestamps (s, clip start = 0). */
  timestamps: number[];
  /** Planar ego pose per frame (X forward, Y left, yaw CCW). */
  x: number[];
  y: number[];
  yaw: number[];
  oracle: OracleResult;
  /** Everything the renderer needs but the output options. */
  render: Omit<RenderRequest, 'output'>;
}

/** The benchmark-style clip id: CARLA clips `{scene}__{behaviour}__w{n}`, nuScenes ones `clip_…`. */
export function clipId(preset: PresetName, seed: number, index: number, profile: ProfileName): string {
  const n = String(index).padStart(4, '0');
  return preset === 'nuscenes' ? `clip_synth${seed}_${n}` : `synth${seed}__${profile}__w${n}`;
}

/** Simulates one candidate: scenario + profile → frame poses and oracle result. */
export function planCandidate(
  seed: number,
  index: number,
  candidate: number,
  preset: PresetName,
  questions: QuestionSet,
  profileName?: ProfileName,
  scenarioName?: string,
  speed?: SpeedRange,
): SynthClip {
  const rng = new Rng(seed, index, candidate, 0x5c3);
  const profile = PROFILES[profileName ?? PROFILE_NAMES[rng.below(PROFILE_NAMES.length)]];
  const names = Object.keys(SCENARIO_WEIGHTS).filter((n) => !speed || CRUISING.includes(n));
  const kind = scenarioName ?? names[rng.weighted(names.map((n) => SCENARIO_WEIGHTS[n]))];
  const gen = SCENARIOS[kind];
  if (!gen) throw new Error(`unknown scenario '${kind}' (known: ${names.join(', ')})`);
  const sc = gen(rng, profile, speed);
  const p = PRESETS[preset];
  const ts = p.timestamps(rng);
  const dense = simulate(sc.plan, profile, ts[ts.length - 1] + 0.05);
  const pose = sampleAt(dense, ts);
  const traj: Trajectory = makeTrajectory('synth', { t: Float64Array.from(ts), x: pose.x, y: pose.y, yaw: pose.yaw });
  const oracle = runOracle(traj, questions);
  const worldSeed = hashSeeds(seed, index, candidate, 0x3d);
  return {
    id: clipId(preset, seed, index, profile.name),
    index,
    preset,
    profile: profile.name,
    scenario: sc.name,
    environment: sc.environment,
    worldSeed,
    timestamps: ts,
    x: Array.from(pose.x),
    y: Array.from(pose.y),
    yaw: Array.from(pose.yaw),
    oracle: copyOracle(oracle),
    render: {
      trajectory: { t: ts, x: Array.from(pose.x), y: Array.from(pose.y), yaw: Array.from(pose.yaw) },
      camera: { ...p.camera },
      world: { seed: worldSeed, environment: sc.environment, lanesPerDirection: sc.lanes },
      photometric: { ...p.photometric },
    },
  };
}

/** The oracle's arrays are views of one buffer; copy them so each stands alone (and transfers). */
function copyOracle(r: OracleResult): OracleResult {
  const a = r.arrays;
  return {
    arrays: {
      timestamps: a.timestamps.slice(),
      x: a.x.slice(),
      y: a.y.slice(),
      yaw: a.yaw.slice(),
      speed: a.speed.slice(),
      accel: a.accel.slice(),
      yaw_rate: a.yaw_rate.slice(),
      jerk: a.jerk.slice(),
    },
    features: { ...r.features },
    labels: { ...r.labels },
  };
}

/** Plans `clips` clips with answers balanced by the oracle (see the module comment). */
export function planDataset(o: PlanOptions): SynthClip[] {
  const K = Math.max(1, Math.floor(o.candidates ?? 16));
  const counts = new Map<string, Map<string, number>>();
  for (const q of o.questions.questions) counts.set(q.id, new Map());
  const out: SynthClip[] = [];
  for (let i = 0; i < o.clips; i++) {
    let best: SynthClip | undefined;
    let bestScore = Infinity;
    for (let c = 0; c < K; c++) {
      const preset: PresetName = o.preset === 'mixed' ? (i % 2 === 0 ? 'carla' : 'nuscenes') : o.preset;
      const cand = planCandidate(o.seed, i, c, preset, o.questions, o.profile, undefined, o.speed);
      let score = 0;
      for (const q of o.questions.questions) {
        const k = q.choices?.length ?? 2;
        score += (counts.get(q.id)!.get(cand.oracle.labels[q.id]) ?? 0) * k;
      }
      if (score < bestScore) {
        bestScore = score;
        best = cand;
      }
    }
    for (const q of o.questions.questions) {
      const m = counts.get(q.id)!;
      const l = best!.oracle.labels[q.id];
      m.set(l, (m.get(l) ?? 0) + 1);
    }
    out.push(best!);
  }
  return out;
}

/** Answer counts per question over planned clips (every choice listed, zeros included). */
export function labelDistribution(clips: readonly SynthClip[], questions: QuestionSet): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const q of questions.questions) {
    const m: Record<string, number> = {};
    for (const c of q.choices ?? []) m[c] = 0;
    for (const clip of clips) m[clip.oracle.labels[q.id]] = (m[clip.oracle.labels[q.id]] ?? 0) + 1;
    out[q.id] = m;
  }
  return out;
}

/** Clip-level ground truth as the shared trajectory type (frame timestamps). */
export function groundTruth(c: SynthClip): Trajectory {
  return makeTrajectory(c.id, { t: Float64Array.from(c.timestamps), x: Float64Array.from(c.x), y: Float64Array.from(c.y), yaw: Float64Array.from(c.yaw) });
}

export { CLIP_SECONDS };
