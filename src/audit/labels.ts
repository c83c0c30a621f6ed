/**
 * `egogeo audit labels` — how far each oracle label rests on the motion, how far on the ground
 * truth's own measurement noise, and how far on the protocol's sampling.
 * - **Noise.** The clean poses (at the clip's frames where known, else on the oracle's 10 Hz grid) are perturbed — Gaussian noise on x, y
 *   and yaw, independent per pose or drifting (Gauss-Markov), at each level, `draws` times — or
 *   smoothed over a window, and relabelled by the oracle: per question, per source and pooled, the
 *   share of labels equal to the clean label at each level (a fragility curve).
 * - **Each source's own level** is by default the jitter its poses carry, measured from them
 *   (audit/jitter.ts; CARLA's simulator state is exact); published accuracy figures are absolute
 *   errors, selectable as `literature`. The **noise ceiling** is the grader's balanced accuracy of
 *   the labels perturbed at that level against the published labels: an estimator whose errors are
 *   that jitter scores this.
 * - **Sampling** (audit/sampling.ts): the ground truth kept at a K-frame protocol's frames and
 *   interpolated back (natural spline; the engine's densifier), graded the same way.
 * Per clip: how often each label flips at its source's level, those draws' labels, and the sampled
 * labels (what `egogeo report --label-audit` reads to classify disagreements and to check a run's
 * scores against the ceilings on its own clips).
 *
 * Seeded: every (clip, level, draw) has its own generator from (seed, clip id, level, draw), so a
 * clip's draws do not depend on the other clips or on their order. Pure: no I/O. */
import { InputError } from '../core/errors.js';
import { Rng, hashSeeds } from '../core/random.js';
import type { Trajectory } from '../core/trajectory.js';
import { balancedAccuracy, sortCodePoints } from '../grade/metrics.js';
import { type DrawnClip, gradeDraws } from '../grade/draws.js';
import { GEOMETRIC_SUBSET } from '../baseline/baseline.js';
import { clipData, computeDynamics, labelClip, summaryFeatures, type QuestionSet } from '../oracle/index.js';
import { type ClipJitter, clipJitter, type SourceJitter, sourceJitter, WINDOW } from './jitter.js';
import { type FrameCount, INTERPOLANTS, type Interpolant, sampledTruth } from './sampling.js';

/**
 * A perturbation: Gaussian pose noise (σ of x and y in metres, of yaw in degrees), independent per
 * pose (`tauS` 0 or absent) or a first-order Gauss-Markov process of correlation time `tauS`
 * seconds (a localiser's error: the same σ per pose, drifting slowly), or a centred moving average
 * over `window` poses.
 */
export type Level = { kind: 'noise'; posM: number; yawDeg: number; tauS?: number } | { kind: 'smooth'; window: number };
export type NoiseLevel = Extract<Level, { kind: 'noise' }>;

/** How a level is named in the JSON and the tables: `POS_M:YAW_DEG`, `POS_M:YAW_DEG@TAU_S` (Gauss-Markov) or `smoothW`. */
export const levelKey = (l: Level): string => (l.kind === 'noise' ? `${l.posM}:${l.yawDeg}${l.tauS ? `@${l.tauS}` : ''}` : `smooth${l.window}`);

/**
 * Published accuracy figures of each source's ground truth: an *absolute* accuracy, not the jitter
 * between poses the oracle differentiates (read them with a correlation time, `@TAU`). Selectable
 * per source as `--source-level SRC=literature`; docs/labels.md gives the sources.
 */
export const LITERATURE: Readonly<Record<string, { posM: number; yawDeg: number; from: string }>> = {
  kitti: { posM: 0.02, yawDeg: 0.1, from: 'OXTS RT3003 GPS/IMU with RTK, absolute accuracy 0.02 m position, 0.1° heading (Geiger et al., IJRR 2013)' },
  nuscenes: { posM: 0.1, yawDeg: 0.1, from: 'lidar map localisation, absolute error ≤ 10 cm (Caesar et al., CVPR 2020); heading not published, taken as KITTI’s' },
};

/**
 * How a source's level is chosen: `measured` (the jitter its own poses carry, audit/jitter.ts),
 * `literature` (LITERATURE), `exact` (no noise), or a level given outright.
 */
export type SourceLevelSpec = 'measured' | 'literature' | 'exact' | NoiseLevel;

/** Sources whose ground truth is the simulator's own state: exact. Every other source is measured. */
const EXACT_SOURCES = /^carla/;
export const defaultSourceLevel = (source: string): SourceLevelSpec => (EXACT_SOURCES.test(source) ? 'exact' : 'measured');

/** The fragility curve's default noise levels (the exact level 0:0 is always added first; each source's own too). */
export const DEFAULT_NOISE = '0.001:0.005,0.005:0.025,0.01:0.05,0.02:0.1,0.05:0.25,0.02:0.1@10';
/** The default smoothing windows (poses at 10 Hz: 0.3 s and 0.5 s). */
export const DEFAULT_SMOOTH = '3,5';
/** The protocol's default frame counts for the sampling ceiling: the published 10. */
export const DEFAULT_FRAMES: readonly FrameCount[] = [10];
/** A label that flips in at least this share of the draws at its source's level is noise-decided. */
export const NOISE_DECIDED_SHARE = 0.2;

export interface LabelClip {
  id: string;
  source: string;
  /**
   * The clean poses: the ground truth at the clip's own frames where the dataset has them (KITTI
   * poses), else the oracle's 10 Hz grid of it (a clip's npz). What the jitter is measured on, the
   * noise perturbs, and the sampling ceiling keeps at the protocol's frames.
   */
  traj: Trajectory;
  /**
   * The oracle's target duration for the clip (s; null: the poses' own span). Default: 3 s (the
   * benchmark's) where the poses span 3 s, else their own span.
   */
  duration?: number | null;
  /** The labels as published (the dataset's QA answers), per question; null where the dataset has none. */
  published: Record<string, string> | null;
}

export interface LabelAuditOptions {
  levels: Level[];
  draws: number;
  seed: number;
  /** Per source, how its level is chosen (default: measured, CARLA exact; `defaultSourceLevel`). */
  sourceLevels?: Record<string, SourceLevelSpec>;
  /** The protocol's frame counts the sampling ceiling is computed for (default DEFAULT_FRAMES). */
  frames?: readonly FrameCount[];
}

export interface Ceiling {
  level: string;
  /** Balanced accuracy of the perturbed labels against the published ones, mean over draws. */
  per_question: Record<string, number>;
  /** Pooled over the questions as the grader pools them: all questions and the 6-question subset. */
  all: number;
  subset: number;
  n_clips: number;
}

/** One source's level: its key in `levels`, how it was chosen, and in words. */
export interface SourceLevel {
  key: string;
  basis: 'measured' | 'literature' | 'exact' | 'given';
  from: string;
}

export interface LabelAudit {
  n_clips: number;
  /** A label flipping in at least this share of its draws at its source's level is noise-decided (`egogeo report --label-audit`). */
  noise_decided_share: number;
  draws: number;
  seed: number;
  levels: (Level & { key: string })[];
  /** Per source: the level its ceiling is read at (a key of `levels`). */
  source_levels: Record<string, string>;
  /** Per source: how that level was chosen. */
  source_level_basis: Record<string, SourceLevel>;
  /** Per source: the jitter its own poses carry (audit/jitter.ts), measured on every source. */
  jitter: Record<string, SourceJitter | null>;
  questions: string[];
  /** Pooled over every clip: agreement of the perturbed labels with the clean ones, per level. */
  per_question: Record<string, Record<string, number>>;
  /** Over all questions, per level. */
  pooled: Record<string, number>;
  per_source: Record<string, { n_clips: number; per_question: Record<string, Record<string, number>>; pooled: Record<string, number> }>;
  /** The noise ceiling: each clip at its source's level; pooled and per source. */
  ceiling: { pooled: Ceiling; per_source: Record<string, Ceiling> };
  /**
   * The protocol's sampling ceiling (audit/sampling.ts): per frame count ('10', 'all') and
   * interpolant, the ground truth kept at those frames and interpolated back, graded against the
   * published labels; pooled and per source (one draw: `level` names the interpolant).
   */
  sampling: Record<string, Record<Interpolant, { pooled: Ceiling; per_source: Record<string, Ceiling> }>>;
  /** The clean relabelling against the published labels (1 where the oracle reproduces them exactly). */
  clean_vs_published: Record<string, number>;
  /**
   * Per clip: the share of draws at its source's level in which each label differs from the clean
   * one; the labels of those draws for the questions where any differs (`draws`: clean elsewhere);
   * and the sampled truth's labels per frame count and interpolant (`sampled`). What
   * `egogeo report --label-audit` reads to classify disagreements and grade the ceilings over a run's own clips.
   */
  per_clip: {
    clip_id: string;
    source: string;
    level: string;
    clean: Record<string, string>;
    flips: Record<string, number>;
    draws: Record<string, string[]>;
    sampled: Record<string, Record<Interpolant, Record<string, string>>>;
  }[];
}

const DEG = Math.PI / 180;

/** Centred moving average over `w` poses; the window shrinks symmetrically at the ends (end poses stay). */
function smoothed(a: Float64Array, w: number): Float64Array {
  const n = a.length, h = (w - 1) >> 1;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const k = Math.min(h, i, n - 1 - i);
    let s = 0;
    for (let j = i - k; j <= i + k; j++) s += a[j];
    out[i] = s / (2 * k + 1);
  }
  return out;
}

/**
 * Noise of σ per sample at times t: independent draws, or (tauS > 0) the stationary first-order
 * Gauss-Markov process e_i = φ e_{i-1} + sqrt(1 − φ²) σ w_i, φ = exp(−Δt/τ), started at its
 * stationary law: the same σ per pose, correlated over about τ.
 */
function noiseSeries(t: Float64Array, sigma: number, tauS: number, rng: Rng): Float64Array {
  const out = new Float64Array(t.length);
  for (let i = 0; i < t.length; i++) {
    const w = rng.normal();
    if (i === 0 || !(tauS > 0)) out[i] = sigma * w;
    else {
      const phi = Math.exp(-(t[i] - t[i - 1]) / tauS);
      out[i] = phi * out[i - 1] + Math.sqrt(1 - phi * phi) * sigma * w;
    }
  }
  return out;
}

/** The poses at one level (draw `rng` for noise). Yaw is unwrapped first so a smoothing window never averages across ±π. */
export function perturb(traj: Trajectory, level: Level, rng: Rng): Trajectory {
  const n = traj.t.length;
  if (level.kind === 'smooth') {
    const yaw = Float64Array.from(traj.yaw);
    for (let i = 1; i < n; i++) yaw[i] = yaw[i - 1] + Math.atan2(Math.sin(traj.yaw[i] - traj.yaw[i - 1]), Math.cos(traj.yaw[i] - traj.yaw[i - 1]));
    return { id: traj.id, t: traj.t, x: smoothed(traj.x, level.window), y: smoothed(traj.y, level.window), yaw: smoothed(yaw, level.window) };
  }
  const tau = level.tauS ?? 0;
  const ex = noiseSeries(traj.t, level.posM, tau, rng), ey = noiseSeries(traj.t, level.posM, tau, rng), eyaw = noiseSeries(traj.t, level.yawDeg * DEG, tau, rng);
  const x = new Float64Array(n), y = new Float64Array(n), yaw = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[i] = traj.x[i] + ex[i];
    y[i] = traj.y[i] + ey[i];
    yaw[i] = traj.yaw[i] + eyaw[i];
  }
  return { id: traj.id, t: traj.t, x, y, yaw };
}

/** A measured level as its key names it: position to 0.01 mm, yaw to 0.0001° (below that: exact). */
const roundTo = (v: number, places: number): number => Number(v.toFixed(places));

/** Each source's level from its spec and its measured jitter. */
function resolveLevels(sources: readonly string[], specs: Record<string, SourceLevelSpec>, jitter: Record<string, SourceJitter | null>): Record<string, { level: NoiseLevel; basis: SourceLevel['basis']; from: string }> {
  const out: Record<string, { level: NoiseLevel; basis: SourceLevel['basis']; from: string }> = {};
  for (const s of sources) {
    const spec = specs[s] ?? defaultSourceLevel(s);
    if (spec === 'exact') out[s] = { level: { kind: 'noise', posM: 0, yawDeg: 0 }, basis: 'exact', from: EXACT_SOURCES.test(s) ? 'simulator state: exact' : 'exact (given)' };
    else if (spec === 'literature') {
      const lit = LITERATURE[s];
      if (!lit) throw new InputError(`--source-level ${s}=literature: no published accuracy for source '${s}' (known: ${Object.keys(LITERATURE).join(', ')}); give POS_M:YAW_DEG`);
      out[s] = { level: { kind: 'noise', posM: lit.posM, yawDeg: lit.yawDeg }, basis: 'literature', from: lit.from };
    } else if (spec === 'measured') {
      const j = jitter[s];
      if (!j) throw new InputError(`source '${s}': no clip with ${WINDOW} or more poses to measure its jitter on; give --source-level ${s}=POS_M:YAW_DEG`);
      out[s] = {
        level: { kind: 'noise', posM: roundTo(j.posM, 5), yawDeg: roundTo(j.yawDeg, 4) },
        basis: 'measured',
        from: `measured: white noise of this σ leaves the poses' residual against a local cubic over ${WINDOW} poses (median over ${j.n_clips} clips; clips' 10–90%: ${(1000 * j.posM_p10).toFixed(2)}–${(1000 * j.posM_p90).toFixed(2)} mm; median centre residual ${(1000 * j.centreResidualM).toFixed(2)} mm)`,
      };
    } else out[s] = { level: spec, basis: 'given', from: 'given (--source-level)' };
  }
  return out;
}

const labelsOf = (traj: Trajectory, questions: QuestionSet, duration: number | null): Record<string, string> => {
  const a = computeDynamics(traj, { duration });
  return labelClip(clipData(a, summaryFeatures(a)), questions);
};

const isExact = (l: Level): boolean => (l.kind === 'noise' ? l.posM === 0 && l.yawDeg === 0 : false);
const idSeed = (id: string): number => hashSeeds(...Array.from(id, (c) => c.codePointAt(0)!));

/** Noise levels from the least (exact) to the most noise, white before drifting, then the smoothing windows by length. */
function byNoise(a: Level, b: Level): number {
  if (a.kind !== b.kind) return a.kind === 'noise' ? -1 : 1;
  if (a.kind === 'smooth' || b.kind === 'smooth') return (a as { window: number }).window - (b as { window: number }).window;
  return (a.tauS ?? 0) - (b.tauS ?? 0) || a.posM - b.posM || a.yawDeg - b.yawDeg;
}

/** See the module comment. */
export function auditLabels(clips: readonly LabelClip[], questions: QuestionSet, o: LabelAuditOptions): LabelAudit {
  if (clips.length === 0) throw new InputError('audit labels: no clip with ground truth');
  if (!Number.isInteger(o.draws) || o.draws < 1) throw new InputError(`--draws must be a positive integer, got ${o.draws}`);
  const sources = sortCodePoints(new Set(clips.map((c) => c.source)));
  // Each source's own jitter, measured on the poses the noise perturbs.
  const clipJitters = clips.map((c) => clipJitter(c.traj));
  const jitter: Record<string, SourceJitter | null> = {};
  for (const s of sources) jitter[s] = sourceJitter(clipJitters.filter((j, i): j is ClipJitter => j !== null && clips[i].source === s));
  const resolved = resolveLevels(sources, o.sourceLevels ?? {}, jitter);

  // Levels: exact first, then the given ones, then any source's own level not among them.
  const levels: Level[] = [{ kind: 'noise', posM: 0, yawDeg: 0 }];
  const add = (l: Level) => {
    if (!levels.some((m) => levelKey(m) === levelKey(l))) levels.push(l);
  };
  o.levels.forEach(add);
  const srcKey: Record<string, string> = {};
  for (const s of sources) {
    add(resolved[s].level);
    srcKey[s] = levelKey(resolved[s].level);
  }
  levels.sort(byNoise);
  const keys = levels.map(levelKey);
  const qids = questions.questions.map((q) => q.id);
  // The reference's clips are 3 s; a longer or shorter ground truth keeps its own span.
  const duration = (c: LabelClip) => (c.duration !== undefined ? c.duration : Math.abs(c.traj.t[c.traj.t.length - 1] - c.traj.t[0] - 3) < 1e-6 ? 3 : null);

  // agree[source][q][level] = matches; count[source][level] = labels compared per question.
  const agree: Record<string, Record<string, number[]>> = {};
  const count: Record<string, number[]> = {};
  for (const s of sources) {
    agree[s] = Object.fromEntries(qids.map((q) => [q, keys.map(() => 0)]));
    count[s] = keys.map(() => 0);
  }
  // The labels at each clip's source level, per draw: for the ceiling.
  const atSource: Record<string, string>[][] = [];
  const clean: Record<string, string>[] = [];
  const perClip: LabelAudit['per_clip'] = [];
  const frameCounts = o.frames ?? DEFAULT_FRAMES;
  clips.forEach((c) => {
    const d = duration(c);
    const base = labelsOf(c.traj, questions, d);
    clean.push(base);
    const flips: Record<string, number> = Object.fromEntries(qids.map((q) => [q, 0]));
    const mine: Record<string, string>[] = [];
    levels.forEach((l, li) => {
      // Exact and smoothing levels are deterministic: one relabelling stands for every draw.
      const draws = l.kind === 'smooth' || isExact(l) ? 1 : o.draws;
      const weight = draws === 1 ? o.draws : 1;
      for (let k = 0; k < draws; k++) {
        const labels = isExact(l) ? base : labelsOf(perturb(c.traj, l, new Rng(o.seed, idSeed(c.id), li, k)), questions, d);
        count[c.source][li] += weight;
        for (const q of qids) if (labels[q] === base[q]) agree[c.source][q][li] += weight;
        if (keys[li] === srcKey[c.source]) {
          for (let r = 0; r < weight; r++) mine.push(labels);
          for (const q of qids) if (labels[q] !== base[q]) flips[q] += weight / o.draws;
        }
      }
    });
    atSource.push(mine);
    const drawn: Record<string, string[]> = {};
    for (const q of qids) if (flips[q] > 0) drawn[q] = mine.map((m) => m[q]);
    const sampled: LabelAudit['per_clip'][number]['sampled'] = {};
    for (const k of frameCounts) {
      sampled[String(k)] = Object.fromEntries(INTERPOLANTS.map((how) => [how, labelsOf(sampledTruth(c.traj, k, how), questions, d)])) as Record<Interpolant, Record<string, string>>;
    }
    perClip.push({ clip_id: c.id, source: c.source, level: srcKey[c.source], clean: base, flips, draws: drawn, sampled });
  });

  const rate = (ss: readonly string[], q: string | null, li: number): number => {
    let a = 0, n = 0;
    for (const s of ss) {
      n += count[s][li] * (q === null ? qids.length : 1);
      for (const qq of q === null ? qids : [q]) a += agree[s][qq][li];
    }
    return n > 0 ? a / n : NaN;
  };
  const curves = (ss: readonly string[]) => ({
    per_question: Object.fromEntries(qids.map((q) => [q, Object.fromEntries(keys.map((k, li) => [k, rate(ss, q, li)]))])),
    pooled: Object.fromEntries(keys.map((k, li) => [k, rate(ss, null, li)])),
  });

  const graded: DrawnClip[] = clips.map((c, i) => ({ id: c.id, source: c.source, reference: c.published ?? clean[i] }));
  const subset = new Set<string>(GEOMETRIC_SUBSET);
  const all = clips.map((_, i) => i);
  const ofSource = (s: string) => all.filter((i) => clips[i].source === s);
  const pooledLevel = sources.length === 1 ? srcKey[sources[0]] : 'each source at its own';
  const ceilingOf = (idx: number[], level: string): Ceiling => ({ level, ...gradeDraws(idx.map((i) => graded[i]), o.draws, (j, k) => atSource[idx[j]][k], questions, subset), n_clips: idx.length });
  const samplingOf = (idx: number[], k: string, how: Interpolant): Ceiling => ({ level: how, ...gradeDraws(idx.map((i) => graded[i]), 1, (j) => perClip[idx[j]].sampled[k][how], questions, subset), n_clips: idx.length });
  const sampling: LabelAudit['sampling'] = {};
  for (const k of frameCounts.map(String)) {
    sampling[k] = Object.fromEntries(INTERPOLANTS.map((how) => [how, { pooled: samplingOf(all, k, how), per_source: Object.fromEntries(sources.map((s) => [s, samplingOf(ofSource(s), k, how)])) }])) as LabelAudit['sampling'][string];
  }
  const clean_vs_published: Record<string, number> = {};
  for (const q of qids) {
    const have = all.filter((i) => graded[i].reference[q] !== undefined);
    if (have.length) clean_vs_published[q] = balancedAccuracy(have.map((i) => graded[i].reference[q]), have.map((i) => clean[i][q]));
  }
  const pooledCurves = curves(sources);
  return {
    n_clips: clips.length,
    noise_decided_share: NOISE_DECIDED_SHARE,
    draws: o.draws,
    seed: o.seed,
    levels: levels.map((l) => ({ ...l, key: levelKey(l) })),
    source_levels: srcKey,
    source_level_basis: Object.fromEntries(sources.map((s) => [s, { key: srcKey[s], basis: resolved[s].basis, from: resolved[s].from }])),
    jitter,
    questions: qids,
    per_question: pooledCurves.per_question,
    pooled: pooledCurves.pooled,
    per_source: Object.fromEntries(sources.map((s) => [s, { n_clips: ofSource(s).length, ...curves([s]) }])),
    ceiling: {
      pooled: ceilingOf(all, pooledLevel),
      per_source: Object.fromEntries(sources.map((s) => [s, ceilingOf(ofSource(s), srcKey[s])])),
    },
    sampling,
    clean_vs_published,
    per_clip: perClip,
  };
}

const f3 = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(3));

const mm = (m: number): string => (Number.isFinite(m) ? (1000 * m).toFixed(2) : '–');

/** The audit as Markdown tables: each source's jitter and level, agreement per question and level, the noise ceiling, the sampling ceiling. */
export function labelAuditMarkdown(r: LabelAudit): string {
  const keys = r.levels.map((l) => l.key);
  const head = (cols: string[]) => [`| ${cols.join(' | ')} |`, `|${cols.map((_, i) => (i === 0 ? ':--' : '--:')).join('|')}|`];
  const levelName = (k: string) => (k === '0:0' ? 'exact' : k);
  const out: string[] = [];
  const srcs = Object.keys(r.ceiling.per_source);
  out.push(`Each source's ground-truth jitter, measured on its poses (σ per pose that white noise would need to leave their residual against a local cubic over 5 poses; median over clips), and the level its ceiling is read at.`, '');
  out.push(...head(['source', 'clips', 'σ position (mm)', 'clips 10–90% (mm)', 'σ yaw (°)', 'centre residual (mm)', 'level', 'basis']));
  for (const s of srcs) {
    const j = r.jitter[s];
    const b = r.source_level_basis[s];
    out.push(`| ${s} | ${r.per_source[s].n_clips} | ${j ? mm(j.posM) : '–'} | ${j ? `${mm(j.posM_p10)}–${mm(j.posM_p90)}` : '–'} | ${j ? j.yawDeg.toFixed(4) : '–'} | ${j ? mm(j.centreResidualM) : '–'} | ${levelName(b.key)} | ${b.basis}: ${b.from.replace(/^measured: /, '')} |`);
  }
  out.push(
    '',
    `Label agreement with the clean labels (${r.n_clips} clips, ${r.draws} draws per noise level, seed ${r.seed}); noise levels are σ per pose as POS_M:YAW_DEG (\`@TAU\`: drifting, Gauss-Markov with correlation time TAU s), smoothW a centred moving average over W poses.`,
    '',
  );
  out.push(...head(['question', ...keys.map(levelName)]));
  for (const q of r.questions) out.push(`| ${q} | ${keys.map((k) => f3(r.per_question[q][k])).join(' | ')} |`);
  out.push(`| **all questions** | ${keys.map((k) => `**${f3(r.pooled[k])}**`).join(' | ')} |`);
  for (const [s, v] of Object.entries(r.per_source)) out.push(`| all, ${s} (${v.n_clips} clips) | ${keys.map((k) => f3(v.pooled[k])).join(' | ')} |`);
  const sampled = Object.entries(r.sampling).flatMap(([k, v]) => INTERPOLANTS.map((how) => ({ name: `${k} frames, ${how}`, c: v[how].pooled })));
  out.push(
    '',
    `Ceilings: balanced accuracy against the published labels. Noise: the labels perturbed at each source's own level (mean over draws); "clean" is the unperturbed relabelling. Sampling (pooled): the ground truth kept only at a K-frame protocol's frames, put back on the clip's frames by a natural cubic spline, or by the engine's densifier.`,
    '',
  );
  out.push(...head(['question', 'clean', ...srcs.map((s) => `noise, ${s} @ ${levelName(r.ceiling.per_source[s].level)}`), ...(srcs.length > 1 ? ['noise, pooled'] : []), ...sampled.map((x) => `sampling, ${x.name}`)]));
  const row = (name: string, clean: number | undefined, get: (c: Ceiling) => number | undefined) =>
    `| ${name} | ${f3(clean)} | ${srcs.map((s) => f3(get(r.ceiling.per_source[s]))).join(' | ')}${srcs.length > 1 ? ` | ${f3(get(r.ceiling.pooled))}` : ''}${sampled.map((x) => ` | ${f3(get(x.c))}`).join('')} |`;
  for (const q of r.questions) out.push(row(q, r.clean_vs_published[q], (c) => c.per_question[q]));
  out.push(row(`**all ${r.questions.length} (pooled)**`, undefined, (c) => c.all));
  out.push(row('**6-question subset (pooled)**', undefined, (c) => c.subset));
  return out.join('\n');
}
