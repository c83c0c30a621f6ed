/**
 * `egogeo audit labels` — how far each oracle label rests on the motion and how far on the ground
 * truth's own measurement noise. The clean poses (on the oracle's 10 Hz grid) are perturbed —
 * Gaussian position noise on x and y and yaw noise, independently per pose, at each level, `draws`
 * times — or smoothed over a window, and relabelled by the oracle. Per question, per source and
 * pooled: the share of (clip, draw) labels equal to the clean label at each level (a fragility
 * curve), and the **noise ceiling**: the balanced accuracy (the grader's) of the labels perturbed at
 * the source's own level against the published labels, the best score an estimator that does not
 * reproduce the ground truth's jitter can expect. Per clip: how often each label flips at its
 * source's level (what `egogeo report` reads to call a disagreement noise-decided).
 *
 * Seeded: every (clip, level, draw) has its own generator from (seed, clip id, level, draw), so a
 * clip's draws do not depend on the other clips or on their order. Pure: no I/O.
 */
import { InputError } from '../core/errors.js';
import { Rng, hashSeeds } from '../core/random.js';
import type { Trajectory } from '../core/trajectory.js';
import type { Prediction } from '../core/prediction.js';
import { balancedAccuracy, evaluate, sortCodePoints } from '../grade/metrics.js';
import { GEOMETRIC_SUBSET } from '../baseline/baseline.js';
import { clipData, computeDynamics, labelClip, summaryFeatures, type QuestionSet } from '../oracle/index.js';

/** A perturbation: Gaussian pose noise (σ of x and y in metres, of yaw in degrees) or a centred moving average over `window` poses. */
export type Level = { kind: 'noise'; posM: number; yawDeg: number } | { kind: 'smooth'; window: number };

/** How a level is named in the JSON and the tables: `POS_M:YAW_DEG` or `smoothW`. */
export const levelKey = (l: Level): string => (l.kind === 'noise' ? `${l.posM}:${l.yawDeg}` : `smooth${l.window}`);

/**
 * The ground truth's own noise per source (σ per pose), the level its noise ceiling is read at;
 * docs/labels.md gives the sources. An unknown source gets the exact level (no noise).
 */
export const SOURCE_NOISE: Readonly<Record<string, { posM: number; yawDeg: number; from: string }>> = {
  kitti: { posM: 0.02, yawDeg: 0.1, from: 'OXTS RT3003 GPS/IMU with RTK: 0.02 m position, 0.1° heading (Geiger et al., IJRR 2013)' },
  // ≤ 10 cm bounds the absolute error; the pose-to-pose jitter the oracle differentiates is not
  // published: taken as KITTI's (the curve's 0.05 m level shows the cost of half the bound).
  nuscenes: { posM: 0.02, yawDeg: 0.1, from: 'lidar map localisation, absolute error ≤ 10 cm (Caesar et al., CVPR 2020); per-pose jitter not published, taken as KITTI’s' },
  carla: { posM: 0, yawDeg: 0, from: 'simulator state: exact' },
};

/** The fragility curve's default noise levels (the exact level 0:0 is always added first). */
export const DEFAULT_NOISE = '0.005:0.025,0.01:0.05,0.02:0.1,0.05:0.25';
/** The default smoothing windows (poses at 10 Hz: 0.3 s and 0.5 s). */
export const DEFAULT_SMOOTH = '3,5';
/** A label that flips in at least this share of the draws at its source's level is noise-decided. */
export const NOISE_DECIDED_SHARE = 0.2;

/** Each source's noise level as SOURCE_NOISE states it (what `--source-level` overrides). */
export function sourceLevels(): Record<string, { posM: number; yawDeg: number }> {
  return Object.fromEntries(Object.entries(SOURCE_NOISE).map(([k, v]) => [k, { posM: v.posM, yawDeg: v.yawDeg }]));
}

export interface LabelClip {
  id: string;
  source: string;
  /** The clean poses (the oracle's 10 Hz grid of the ground truth). */
  traj: Trajectory;
  /** The labels as published (the dataset's QA answers), per question; null where the dataset has none. */
  published: Record<string, string> | null;
}

export interface LabelAuditOptions {
  levels: Level[];
  draws: number;
  seed: number;
  /** Per source, its ground truth's noise (default SOURCE_NOISE; unknown sources: exact). */
  sourceLevels?: Record<string, { posM: number; yawDeg: number }>;
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

export interface LabelAudit {
  n_clips: number;
  /** A label flipping in at least this share of its draws at its source's level is noise-decided (`egogeo report --label-audit`). */
  noise_decided_share: number;
  draws: number;
  seed: number;
  levels: (Level & { key: string })[];
  /** Per source: the level its ceiling is read at (a key of `levels`). */
  source_levels: Record<string, string>;
  questions: string[];
  /** Pooled over every clip: agreement of the perturbed labels with the clean ones, per level. */
  per_question: Record<string, Record<string, number>>;
  /** Over all questions, per level. */
  pooled: Record<string, number>;
  per_source: Record<string, { n_clips: number; per_question: Record<string, Record<string, number>>; pooled: Record<string, number> }>;
  /** The noise ceiling: each clip at its source's level; pooled and per source. */
  ceiling: { pooled: Ceiling; per_source: Record<string, Ceiling> };
  /** The clean relabelling against the published labels (1 where the oracle reproduces them exactly). */
  clean_vs_published: Record<string, number>;
  /** Per clip, the share of draws at its source's level in which each label differs from the clean one. */
  per_clip: { clip_id: string; source: string; level: string; clean: Record<string, string>; flips: Record<string, number> }[];
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

/** The poses at one level (draw `rng` for noise). Yaw is unwrapped first so a smoothing window never averages across ±π. */
export function perturb(traj: Trajectory, level: Level, rng: Rng): Trajectory {
  const n = traj.t.length;
  if (level.kind === 'smooth') {
    const yaw = Float64Array.from(traj.yaw);
    for (let i = 1; i < n; i++) yaw[i] = yaw[i - 1] + Math.atan2(Math.sin(traj.yaw[i] - traj.yaw[i - 1]), Math.cos(traj.yaw[i] - traj.yaw[i - 1]));
    return { id: traj.id, t: traj.t, x: smoothed(traj.x, level.window), y: smoothed(traj.y, level.window), yaw: smoothed(yaw, level.window) };
  }
  const x = new Float64Array(n), y = new Float64Array(n), yaw = new Float64Array(n);
  const sy = level.yawDeg * DEG;
  for (let i = 0; i < n; i++) {
    x[i] = traj.x[i] + level.posM * rng.normal();
    y[i] = traj.y[i] + level.posM * rng.normal();
    yaw[i] = traj.yaw[i] + sy * rng.normal();
  }
  return { id: traj.id, t: traj.t, x, y, yaw };
}

const labelsOf = (traj: Trajectory, questions: QuestionSet, duration: number | null): Record<string, string> => {
  const a = computeDynamics(traj, { duration });
  return labelClip(clipData(a, summaryFeatures(a)), questions);
};

const isExact = (l: Level): boolean => (l.kind === 'noise' ? l.posM === 0 && l.yawDeg === 0 : false);
const idSeed = (id: string): number => hashSeeds(...Array.from(id, (c) => c.codePointAt(0)!));

/** See the module comment. */
export function auditLabels(clips: readonly LabelClip[], questions: QuestionSet, o: LabelAuditOptions): LabelAudit {
  if (clips.length === 0) throw new InputError('audit labels: no clip with ground truth');
  if (!Number.isInteger(o.draws) || o.draws < 1) throw new InputError(`--draws must be a positive integer, got ${o.draws}`);
  const srcLevels = o.sourceLevels ?? sourceLevels();
  // Levels: exact first, then the given ones, then any source's own level not among them.
  const levels: Level[] = [{ kind: 'noise', posM: 0, yawDeg: 0 }];
  const add = (l: Level) => {
    if (!levels.some((m) => levelKey(m) === levelKey(l))) levels.push(l);
  };
  o.levels.forEach(add);
  const sources = sortCodePoints(new Set(clips.map((c) => c.source)));
  const srcKey: Record<string, string> = {};
  for (const s of sources) {
    const sl = srcLevels[s] ?? { posM: 0, yawDeg: 0 };
    const l: Level = { kind: 'noise', posM: sl.posM, yawDeg: sl.yawDeg };
    add(l);
    srcKey[s] = levelKey(l);
  }
  // Noise levels from the least (exact) to the most noise, then the smoothing windows by length.
  levels.sort((a, b) => (a.kind !== b.kind ? (a.kind === 'noise' ? -1 : 1) : a.kind === 'noise' && b.kind === 'noise' ? a.posM - b.posM || a.yawDeg - b.yawDeg : (a as { window: number }).window - (b as { window: number }).window));
  const keys = levels.map(levelKey);
  const qids = questions.questions.map((q) => q.id);
  // The reference's clips are 3 s; a longer or shorter ground truth keeps its own span.
  const duration = (t: Trajectory) => (Math.abs(t.t[t.t.length - 1] - t.t[0] - 3) < 1e-6 ? 3 : null);

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
  clips.forEach((c, ci) => {
    const d = duration(c.traj);
    const base = labelsOf(c.traj, questions, d);
    clean.push(base);
    const flips: Record<string, number> = Object.fromEntries(qids.map((q) => [q, 0]));
    const mine: Record<string, string>[] = [];
    levels.forEach((l, li) => {
      // Exact and smoothing levels are deterministic: one relabelling stands for every draw.
      const draws = l.kind === 'smooth' || isExact(l) ? 1 : o.draws;
      for (let k = 0; k < draws; k++) {
        const labels = isExact(l) ? base : labelsOf(perturb(c.traj, l, new Rng(o.seed, idSeed(c.id), li, k)), questions, d);
        count[c.source][li] += draws === 1 ? o.draws : 1;
        for (const q of qids) if (labels[q] === base[q]) agree[c.source][q][li] += draws === 1 ? o.draws : 1;
        if (keys[li] === srcKey[c.source]) {
          for (let r = 0; r < (draws === 1 ? o.draws : 1); r++) mine.push(labels);
          for (const q of qids) if (labels[q] !== base[q]) flips[q] += (draws === 1 ? o.draws : 1) / o.draws;
        }
      }
    });
    atSource.push(mine);
    perClip.push({ clip_id: c.id, source: c.source, level: srcKey[c.source], clean: base, flips });
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

  const published = clips.map((c, i) => c.published ?? clean[i]);
  const subset = new Set<string>(GEOMETRIC_SUBSET);
  // Graded as `egogeo grade` grades: per draw, the perturbed labels as answers to the published ones.
  const ceilingOf = (idx: number[], level: string): Ceiling => {
    const per_question: Record<string, number> = {};
    let all = 0, sub = 0;
    for (let k = 0; k < o.draws; k++) {
      const recs: Prediction[] = [];
      for (const i of idx) {
        for (const q of qids) {
          if (published[i][q] === undefined) continue;
          recs.push({ clip_id: clips[i].id, question_id: q, source: clips[i].source, oracle_label: published[i][q], model_answer: atSource[i][k][q] });
        }
      }
      const m = evaluate(recs, questions);
      for (const [q, g] of Object.entries(m.per_question)) per_question[q] = (per_question[q] ?? 0) + g.balanced_acc / o.draws;
      all += m.global.balanced_acc / o.draws;
      sub += evaluate(recs.filter((r) => subset.has(r.question_id)), questions).global.balanced_acc / o.draws;
    }
    return { level, per_question, all, subset: sub, n_clips: idx.length };
  };
  const all = clips.map((_, i) => i);
  const clean_vs_published: Record<string, number> = {};
  for (const q of qids) {
    const have = all.filter((i) => published[i][q] !== undefined);
    if (have.length) clean_vs_published[q] = balancedAccuracy(have.map((i) => published[i][q]), have.map((i) => clean[i][q]));
  }
  const pooledCurves = curves(sources);
  return {
    n_clips: clips.length,
    noise_decided_share: NOISE_DECIDED_SHARE,
    draws: o.draws,
    seed: o.seed,
    levels: levels.map((l) => ({ ...l, key: levelKey(l) })),
    source_levels: srcKey,
    questions: qids,
    per_question: pooledCurves.per_question,
    pooled: pooledCurves.pooled,
    per_source: Object.fromEntries(sources.map((s) => [s, { n_clips: clips.filter((c) => c.source === s).length, ...curves([s]) }])),
    ceiling: {
      pooled: ceilingOf(all, sources.length === 1 ? srcKey[sources[0]] : 'each source at its own'),
      per_source: Object.fromEntries(sources.map((s) => [s, ceilingOf(all.filter((i) => clips[i].source === s), srcKey[s])])),
    },
    clean_vs_published,
    per_clip: perClip,
  };
}

const f3 = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(3));

/** The audit as Markdown tables: agreement per question and level, then the noise ceiling per source. */
export function labelAuditMarkdown(r: LabelAudit): string {
  const keys = r.levels.map((l) => l.key);
  const head = (cols: string[]) => [`| ${cols.join(' | ')} |`, `|${cols.map((_, i) => (i === 0 ? ':--' : '--:')).join('|')}|`];
  const levelName = (k: string) => (k === '0:0' ? 'exact' : k);
  const out: string[] = [];
  out.push(
    `Label agreement with the clean labels (${r.n_clips} clips, ${r.draws} draws per noise level, seed ${r.seed}); noise levels are σ per pose as POS_M:YAW_DEG, smoothW a centred moving average over W poses.`,
    '',
  );
  out.push(...head(['question', ...keys.map(levelName)]));
  for (const q of r.questions) out.push(`| ${q} | ${keys.map((k) => f3(r.per_question[q][k])).join(' | ')} |`);
  out.push(`| **all questions** | ${keys.map((k) => `**${f3(r.pooled[k])}**`).join(' | ')} |`);
  for (const [s, v] of Object.entries(r.per_source)) out.push(`| all, ${s} (${v.n_clips} clips) | ${keys.map((k) => f3(v.pooled[k])).join(' | ')} |`);
  const srcs = Object.keys(r.ceiling.per_source);
  out.push('', `Noise ceiling: balanced accuracy of the labels perturbed at each source's own level against the published labels (mean over draws); "clean" is the unperturbed relabelling.`, '');
  out.push(...head(['question', 'clean', ...srcs.map((s) => `${s} @ ${levelName(r.ceiling.per_source[s].level)}`), ...(srcs.length > 1 ? ['pooled'] : [])]));
  const row = (name: string, clean: number | undefined, get: (c: Ceiling) => number | undefined) =>
    `| ${name} | ${f3(clean)} | ${srcs.map((s) => f3(get(r.ceiling.per_source[s]))).join(' | ')}${srcs.length > 1 ? ` | ${f3(get(r.ceiling.pooled))}` : ''} |`;
  for (const q of r.questions) out.push(row(q, r.clean_vs_published[q], (c) => c.per_question[q]));
  out.push(row(`**all ${r.questions.length} (pooled)**`, undefined, (c) => c.all));
  out.push(row('**6-question subset (pooled)**', undefined, (c) => c.subset));
  return out.join('\n');
}
