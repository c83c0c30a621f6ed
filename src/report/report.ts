/**
 * report/ — what a run's predictions say, per domain: graded like the benchmark (balanced accuracy
 * and macro F1 per source, the largest gap between sources, per question and source), the
 * cross-check of the oracle's labels against the labels of the estimated trajectories (agreement,
 * confusion, and for every disagreement how far the deciding value sits from its threshold: a
 * near-threshold case or a real error), and trajectory errors per source against the ground truth.
 * Rendered as Markdown, JSON and SVG plots (src/report/markdown.ts, svg.ts). Pure: callers load
 * the inputs. Several runs (one per CARLA domain) come combined by domain (runs.ts); the report
 * adds the per-domain table (domains.ts) and, given the published leaderboard, each run's row
 * placed on it (leaderboard.ts). May import: core/, grade/, oracle/, vo/, io/, datasets/,
 * baseline/ (the 6-question subset).
 */
import type { Trajectory } from '../core/trajectory.js';
import { type BootstrapSummary, bootstrapClips, bootstrapIntervals, type CoveredGroup, coverageOf, evaluate, type GroupMetrics, sortCodePoints } from '../grade/index.js';
import type { Prediction } from '../core/prediction.js';
import type { ClipQuality } from '../io/trajectories.js';
import { type ClipData, clipData, computeDynamics, type DynamicsArrays, type Question, type QuestionSet, summaryFeatures } from '../oracle/index.js';
import { ate, rpe } from '../vo/errors.js';
import { type BootstrapSpec, type DomainTable, domainTable } from './domains.js';
import { type LeaderboardPlacement, type LeaderboardRow, placeOnLeaderboard, type RowIntervals, rowQuestions, runRow, runRowAll } from './leaderboard.js';
import { decisionMargin, isNearThreshold, type Margin } from './margins.js';
import { ceilingsOver, type LabelAuditView } from './labelaudit.js';
import { type CeilingCheck, checkCeilings } from './ceilings.js';
import { GEOMETRIC_SUBSET } from '../baseline/baseline.js';
import { REFERENCE_METHODS } from '../baseline/reference.js';
import { baseDomain, combineRuns, type DomainInfo, type ReportRun, sourceOf } from './runs.js';

export { sourceOf };

export interface ClipTruth {
  /** Ground truth on the oracle's grid. */
  gt?: DynamicsArrays;
  /** The estimated trajectory (as the run wrote it). */
  estimate?: Trajectory;
  /** The estimate's quality verdict (its TUM file's), when it carries one. */
  quality?: ClipQuality;
}

export interface ReportInput {
  name: string;
  records: readonly Prediction[];
  questions: QuestionSet;
  /**
   * Per clip: what is known beyond the records, keyed by `clipKey(source, clip_id)` — the same
   * clip may come in several domains (CARLA simulation and style-transferred runs).
   */
  clips: ReadonlyMap<string, ClipTruth>;
  /** Relative distance to the threshold under which a disagreement counts as near-threshold. */
  near: number;
  /** How many worst clips (by ATE) to plot. */
  worst?: number;
  /**
   * The runs the records come from (load.ts): each becomes a leaderboard row. Without them the
   * records are one run named `name`.
   */
  runs?: readonly ReportRun[];
  /** Which runs each domain label's records come from (runs.ts `combineRuns`). */
  domains?: readonly DomainInfo[];
  /** The published leaderboard to place the runs on. */
  leaderboard?: { file: string; rows: readonly LeaderboardRow[] };
  /** Notes from loading (how runs were combined). */
  notes?: readonly string[];
  /** Clip-level bootstrap intervals for the per-domain table and its gaps. */
  bootstrap?: BootstrapSpec;
  /** `--label-audit`: which labels flip under the ground truth's own noise, and each question's noise ceiling. */
  labelAudit?: LabelAuditView;
}

export interface RunInfo {
  file: string;
  name: string;
  name_from: ReportRun['name_from'];
  carla_domain: string | null;
  /** Its run record's method, frames and questions in words (null without a run record). */
  protocol: string | null;
  n_records: number;
  n_clips: number;
}

export interface SourceReport extends GroupMetrics {
  clips: number;
  per_question: Record<string, GroupMetrics>;
}

export interface Gap {
  metric: 'balanced_acc' | 'macro_f1';
  best: string;
  worst: string;
  gap: number;
}

export interface Disagreement {
  clip_id: string;
  source: string;
  question_id: string;
  oracle_label: string | null;
  model_answer: string | null;
  /** The deciding value on the ground truth (and the estimate) and its threshold; null without ground truth. */
  margin: Margin | null;
  /** With a label audit: the share of noise draws at the source's level in which the oracle label flips. */
  noise_flips: number | null;
  /**
   * noise-decided: the oracle label itself flips under the ground truth's own noise (label audit);
   * near-threshold: the ground truth's or the estimate's deciding value lies within `near` of the
   * threshold; error: both lie farther; unknown: no ground truth.
   */
  kind: 'noise-decided' | 'near-threshold' | 'error' | 'unknown';
}

/**
 * The signed error of one question's deciding value (estimate vs ground truth) over the clips with
 * both trajectories: does the estimate lean one way?
 */
export interface FeatureErrors {
  feature: string;
  n: number;
  /** The threshold most clips were compared with. */
  threshold: number;
  /** Median of estimate / truth over clips with a non-zero truth. */
  median_ratio: number;
  /** Mean of estimate − truth. */
  bias: number;
  /** Standard deviation of estimate − truth. */
  spread: number;
  points: { clip_id: string; source: string; truth: number; estimate: number }[];
}

export interface QuestionCheck {
  n: number;
  agreement: number;
  balanced_acc: number;
  macro_f1: number;
  confusion: { labels: string[]; matrix: number[][] };
  disagreements: number;
  noise_decided: number;
  near_threshold: number;
  errors: number;
  unknown: number;
  /** With a label audit: the balanced accuracy its perturbed labels reach against the oracle labels, over the cross-check's clips in the audit. */
  noise_ceiling: number | null;
}

export interface MethodHeadline {
  method: string;
  runs: string[];
  clips: number;
  overall: GroupMetrics;
  coverage: CoveredGroup;
}

export interface Stat {
  n: number;
  mean: number;
  median: number;
  max: number;
}

export interface TrajectoryErrors {
  clip_id: string;
  source: string;
  ate_se3: number;
  ate_sim3: number;
  sim3_scale: number;
  rpe_trans: number;
  rpe_rot: number;
  yaw_rate_rmse: number;
  speed_rmse: number;
  /** RMSE of the oracle's longitudinal acceleration array (m/s²), the braking and smoothness questions' input. */
  accel_rmse: number;
}

export const ERROR_KEYS = ['ate_se3', 'ate_sim3', 'rpe_trans', 'rpe_rot', 'yaw_rate_rmse', 'speed_rmse', 'accel_rmse'] as const;
export type ErrorKey = (typeof ERROR_KEYS)[number];

export interface WorstClip {
  clip_id: string;
  source: string;
  ate_se3: number;
  gt: { x: number[]; y: number[] };
  estimate: { x: number[]; y: number[] };
}

export interface Report {
  name: string;
  n_records: number;
  n_clips: number;
  near_threshold: number;
  runs: RunInfo[];
  overall: GroupMetrics;
  /** Pooled answered / gradable items, and balanced accuracy with the unanswered counted as wrong. */
  coverage: CoveredGroup;
  /**
   * The headline per method (runs grouped by their run record's method; runs without one are one
   * group, 'method unknown'): its runs' records combined by domain, graded together. Pooling several methods means
   * nothing, so with more than one the report heads with these instead of `overall`.
   */
  methods: MethodHeadline[];
  /** Per domain, 6-question subset and all questions, and the domain gaps. */
  domains: DomainTable;
  /** The runs placed on the published leaderboard (`--leaderboard`). */
  leaderboard: LeaderboardPlacement | null;
  per_source: Record<string, SourceReport>;
  gaps: Gap[];
  per_question: Record<string, QuestionCheck>;
  disagreements: Disagreement[];
  /** Per question: the signed errors of its deciding value(s), one entry per feature compared. */
  feature_errors: Record<string, FeatureErrors[]>;
  /** The label audit the disagreements were classified with (`--label-audit`): its file, share, and each source's level and how it was chosen. */
  label_audit: { file: string; noise_decided_share: number; levels: Record<string, { key: string; basis: string }> } | null;
  /** The share of the disagreements in each class (noise-decided, near-threshold, error, unknown). */
  class_shares: Record<Disagreement['kind'], number>;
  /** With a label audit: every run checked against its ceilings over the run's own clips (report/ceilings.ts). */
  ceiling_checks: CeilingCheck[];
  /** Runs whose records the cross-check leaves out (no trajectory: vo-proxy, flow-heuristic). */
  cross_check_left_out: string[];
  trajectory_errors: {
    n_clips: number;
    per_source: Record<string, Record<ErrorKey, Stat>>;
    per_clip: TrajectoryErrors[];
  };
  worst: WorstClip[];
  /** Per source (domain): the estimates' quality verdicts (vo/quality.ts), and the flagged clips. */
  quality: Record<string, { ok: number; weak: number; failed: number; flagged: { clip_id: string; verdict: string; reasons: string[] }[] }>;
  /** With a bootstrap: the pooled intervals (balanced accuracy, WPCR) per domain and per question, as `grade --bootstrap`. */
  bootstrap: BootstrapSummary | null;
  notes: string[];
}

/** The estimates' verdicts per source, from the clips that carry one. */
function qualityBySource(clips: ReadonlyMap<string, ClipTruth>): Report['quality'] {
  const out: Report['quality'] = {};
  for (const key of sortCodePoints(clips.keys())) {
    const q = clips.get(key)!.quality;
    if (!q) continue;
    const [source, id] = splitKey(key);
    const s = (out[source] ??= { ok: 0, weak: 0, failed: 0, flagged: [] });
    s[q.verdict]++;
    if (q.verdict !== 'ok') s.flagged.push({ clip_id: id, verdict: q.verdict, reasons: q.reasons });
  }
  return out;
}

/** The key of a clip in one domain. */
export const clipKey = (source: string, clipId: string): string => `${source}\u0000${clipId}`;
const splitKey = (k: string): [string, string] => k.split('\u0000') as [string, string];
const keyOf = (r: Prediction): string => clipKey(sourceOf(r), r.clip_id);

function stat(v: number[]): Stat {
  const s = v.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return { n: 0, mean: NaN, median: NaN, max: NaN };
  const mid = s.length >> 1;
  return {
    n: s.length,
    mean: s.reduce((a, b) => a + b, 0) / s.length,
    median: s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2,
    max: s[s.length - 1],
  };
}

const grid = (id: string, a: DynamicsArrays): Trajectory => ({ id, t: a.timestamps, x: a.x, y: a.y, yaw: a.yaw });

function rmse(a: Float64Array, b: Float64Array): number {
  let s = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) s += (a[i] - b[i]) ** 2;
  return Math.sqrt(s / Math.max(1, n));
}

/** Positions in the frame of the first sample (origin there, heading 0), for plotting side by side. */
function fromStart(a: DynamicsArrays): { x: number[]; y: number[] } {
  const c = Math.cos(a.yaw[0]), s = Math.sin(a.yaw[0]);
  const x: number[] = [], y: number[] = [];
  for (let i = 0; i < a.x.length; i++) {
    const dx = a.x[i] - a.x[0], dy = a.y[i] - a.y[0];
    x.push(c * dx + s * dy);
    y.push(-s * dx + c * dy);
  }
  return { x, y };
}

/** Trajectory errors of one clip on the oracle's grid (both sides resampled alike). */
export function clipErrors(clipId: string, source: string, gt: DynamicsArrays, est: DynamicsArrays): TrajectoryErrors {
  const g = grid(clipId, gt), e = grid(clipId, est);
  const se3 = ate(e, g, false), sim3 = ate(e, g, true);
  const r = rpe(e, g, 1);
  return {
    clip_id: clipId,
    source,
    ate_se3: se3.rmse,
    ate_sim3: sim3.rmse,
    sim3_scale: sim3.scale,
    rpe_trans: r.trans,
    rpe_rot: r.rot,
    yaw_rate_rmse: rmse(est.yaw_rate, gt.yaw_rate),
    speed_rmse: rmse(est.speed, gt.speed),
    accel_rmse: rmse(est.accel, gt.accel),
  };
}

/** The records as bootstrap clips keyed by (domain, clip id): a clip of two domains is two clips. */
function bootstrapClipsByDomain(records: readonly Prediction[], questions: QuestionSet): ReturnType<typeof bootstrapClips> {
  return bootstrapClips(records.map((r) => ({ ...r, clip_id: keyOf(r), source: sourceOf(r) })), questions);
}

/**
 * A run's leaderboard row intervals: the bootstrap of its file as `grade --bootstrap N --seed S`
 * makes it (per source by clip id, as the row is made), so the row and grade show one interval.
 */
function rowIntervals(records: readonly Prediction[], questions: QuestionSet, b: BootstrapSpec): RowIntervals {
  const s = bootstrapIntervals(bootstrapClips(records.map(({ source: _, ...r }) => r), questions), questions, { n: b.n, seed: b.seed });
  const src = (k: string): [number, number] | null => (s.per_source[k] ? [s.per_source[k].balanced_acc_ci_lo, s.per_source[k].balanced_acc_ci_hi] : null);
  return { balanced_acc: [s.balanced_acc_ci_lo, s.balanced_acc_ci_hi], src_nuscenes_balanced_acc: src('nuscenes'), src_carla_balanced_acc: src('carla') };
}

/** Runs grouped by method, each group's records combined by domain (runs.ts) and graded. */
function methodHeadlines(runs: readonly ReportRun[], questions: QuestionSet): MethodHeadline[] {
  const by = new Map<string, ReportRun[]>();
  for (const r of runs) {
    const m = r.method ?? 'method unknown'; // no run record: taken as one method, as before methods were told apart
    by.set(m, [...(by.get(m) ?? []), r]);
  }
  return [...by].map(([method, rs]) => {
    const recs = combineRuns(rs).records;
    return { method, runs: rs.map((r) => r.name), clips: new Set(recs.map(keyOf)).size, overall: evaluate(recs, questions).global, coverage: coverageOf(recs, questions) };
  });
}

export function buildReport(input: ReportInput): Report {
  const { records, questions } = input;
  const notes: string[] = [...(input.notes ?? [])];
  const m = evaluate(records, questions);
  const sources = sortCodePoints(new Set(records.map(sourceOf)));
  const clipKeys = new Set(records.map(keyOf));

  const perSource: Record<string, SourceReport> = {};
  for (const s of sources) {
    const sub = records.filter((r) => sourceOf(r) === s);
    const ms = evaluate(sub, questions);
    const pq: Record<string, GroupMetrics> = {};
    for (const [q, g] of Object.entries(ms.per_question)) pq[q] = { accuracy: g.accuracy, balanced_acc: g.balanced_acc, macro_f1: g.macro_f1, n: g.n };
    perSource[s] = { ...ms.global, clips: new Set(sub.map((r) => r.clip_id)).size, per_question: pq };
  }
  const gaps: Gap[] = [];
  const methods = input.runs ? methodHeadlines(input.runs, questions) : [];
  if (methods.length > 1) {
    notes.push(`${methods.length} methods: the gaps between domains are within each method (the per-domain table's gap lines), not across them`);
  } else if (sources.length >= 2) {
    for (const metric of ['balanced_acc', 'macro_f1'] as const) {
      const sorted = sources.slice().sort((a, b) => perSource[b][metric] - perSource[a][metric]);
      const best = sorted[0], worst = sorted[sorted.length - 1];
      gaps.push({ metric, best, worst, gap: perSource[best][metric] - perSource[worst][metric] });
    }
  } else {
    notes.push(`one source only (${sources[0] ?? 'none'}): no gap between sources`);
  }

  // Oracle labels of both sides per clip, computed once.
  const gtData = new Map<string, ReturnType<typeof clipData>>();
  const estArrays = new Map<string, DynamicsArrays>();
  const estData = new Map<string, ReturnType<typeof clipData>>();
  for (const [id, t] of input.clips) {
    if (t.gt) gtData.set(id, clipData(t.gt, summaryFeatures(t.gt)));
    if (t.estimate) {
      const a = computeDynamics(t.estimate);
      estArrays.set(id, a);
      estData.set(id, clipData(a, summaryFeatures(a)));
    }
  }

  // The cross-check compares trajectories: runs that write none (the published geometric baselines
  // answer from per-pair signals) are left out of it.
  const runs: ReportRun[] = input.runs ? [...input.runs] : [{ file: input.name, name: input.name, name_from: 'file name', carla_domain: null, records: [...records] }];
  const domainInfo = input.domains ?? sources.map((s) => ({ domain: s, runs: [runs[0].name] }));
  const noTrajectory = new Set(runs.filter((r) => r.method && (REFERENCE_METHODS as readonly string[]).includes(r.method)).map((r) => r.name));
  const leftOut = new Set(domainInfo.filter((d) => d.runs.length > 0 && d.runs.every((n) => noTrajectory.has(n))).map((d) => d.domain));
  const checked = leftOut.size ? records.filter((r) => !leftOut.has(sourceOf(r))) : records;
  const mc = checked === records ? m : evaluate(checked, questions);
  if (noTrajectory.size) notes.push(`left out of the oracle-vs-estimate cross-check (no trajectory): ${[...noTrajectory].map((n) => `${n} (${runs.find((r) => r.name === n)!.method})`).join(', ')}`);

  const audit = input.labelAudit;
  const auditCeilings = audit ? ceilingsOver(audit, checked, questions, new Set<string>(GEOMETRIC_SUBSET), undefined) : null;
  const perQuestion: Record<string, QuestionCheck> = {};
  const disagreements: Disagreement[] = [];
  const featureErrors: Record<string, FeatureErrors[]> = {};
  for (const q of questions.questions) {
    const rs = checked.filter((r) => r.question_id === q.id);
    if (rs.length === 0) continue;
    const g = mc.per_question[q.id];
    const check: QuestionCheck = {
      n: rs.length,
      agreement: rs.filter((r) => r.model_answer !== null && r.model_answer.toLowerCase() === (r.oracle_label ?? '').toLowerCase()).length / rs.length,
      balanced_acc: g?.balanced_acc ?? NaN,
      macro_f1: g?.macro_f1 ?? NaN,
      confusion: g?.confusion_matrix ?? { labels: [], matrix: [] },
      disagreements: 0,
      noise_decided: 0,
      near_threshold: 0,
      errors: 0,
      unknown: 0,
      noise_ceiling: auditCeilings?.noise.per_question[q.id] ?? null,
    };
    featureErrors[q.id] = signedErrors(q, rs, gtData, estData);
    for (const r of rs) {
      if (r.model_answer !== null && r.model_answer.toLowerCase() === (r.oracle_label ?? '').toLowerCase()) continue;
      check.disagreements++;
      const gd = gtData.get(keyOf(r));
      const margin: Margin | null = gd ? decisionMargin(q, gd, estData.get(keyOf(r))) : null;
      const flips = audit?.flips.get(r.clip_id)?.[q.id] ?? null;
      const kind = classify(margin, flips, input.near, audit?.share ?? Infinity);
      if (kind === 'noise-decided') check.noise_decided++;
      else if (kind === 'near-threshold') check.near_threshold++;
      else if (kind === 'error') check.errors++;
      else check.unknown++;
      disagreements.push({
        clip_id: r.clip_id,
        source: sourceOf(r),
        question_id: q.id,
        oracle_label: r.oracle_label,
        model_answer: r.model_answer,
        margin,
        noise_flips: flips,
        kind,
      });
    }
    perQuestion[q.id] = check;
  }
  if (audit && !checked.some((r) => audit.flips.has(r.clip_id))) notes.push(`${audit.file}: no clip of this report is in the label audit; no disagreement is noise-decided`);
  if (gtData.size === 0) notes.push('no ground truth found (give --dataset): disagreements are not split into near-threshold cases and errors, and there are no trajectory errors');

  const perClip: TrajectoryErrors[] = [];
  for (const [key, t] of input.clips) {
    const est = estArrays.get(key);
    if (!t.gt || !est || !clipKeys.has(key)) continue;
    const [source, id] = splitKey(key);
    perClip.push(clipErrors(id, source, t.gt, est));
  }
  const errSources: Record<string, Record<ErrorKey, Stat>> = {};
  for (const s of sortCodePoints(new Set(perClip.map((e) => e.source)))) {
    const es = perClip.filter((e) => e.source === s);
    errSources[s] = Object.fromEntries(ERROR_KEYS.map((k) => [k, stat(es.map((e) => e[k]))])) as Record<ErrorKey, Stat>;
  }
  if (input.clips.size > 0 && estArrays.size === 0) notes.push('no estimated trajectories found (the run writes them to <preds>.trajectories/)');
  // One panel per clip and domain: runs whose answers differ split a domain into one label per run
  // ('nuscenes (egogeo_simulation)', …) and may share the very estimate (the nuScenes clips of two CARLA domains).
  const drawn = new Set<string>();
  const worst = perClip
    .slice()
    .sort((a, b) => b.ate_se3 - a.ate_se3)
    .filter((e) => {
      const k = clipKey(baseDomain(e.source), e.clip_id);
      if (drawn.has(k)) return false;
      drawn.add(k);
      return true;
    })
    .slice(0, input.worst ?? 6)
    .map((e) => {
      const key = clipKey(e.source, e.clip_id);
      const g = input.clips.get(key)!.gt!, est = estArrays.get(key)!;
      return { clip_id: e.clip_id, source: e.source, ate_se3: e.ate_se3, gt: fromStart(g), estimate: fromStart(est) };
    });

  const domains = domainTable(records, questions, domainInfo, input.bootstrap);
  let leaderboard: LeaderboardPlacement | null = null;
  if (input.leaderboard) {
    // Question sets of the published rows: each run is also graded on the smaller ones it covers.
    const sets = new Set(input.leaderboard.rows.map((r) => rowQuestions(r).join(',')));
    leaderboard = placeOnLeaderboard(
      input.leaderboard.file,
      input.leaderboard.rows,
      runs.map((r) => {
        const answered = new Set(r.records.map((x) => x.question_id));
        const subsets = new Map<string, LeaderboardRow>();
        // Ranked among the rows of a smaller question set, as the run itself: the unanswered counted as wrong.
        for (const key of sets) {
          const ids = new Set(key.split(','));
          if (!key || ids.size >= answered.size || ![...ids].every((q) => answered.has(q))) continue;
          subsets.set(key, runRowAll(r.name, r.records.filter((x) => ids.has(x.question_id)), questions));
        }
        return { row: runRow(r.name, r.records, questions), all: runRowAll(r.name, r.records, questions), clips: new Set(r.records.map((x) => x.clip_id)).size, subsets, ...(input.bootstrap ? { ci: rowIntervals(r.records, questions, input.bootstrap) } : {}) };
      }),
    );
  }

  return {
    name: input.name,
    n_records: records.length,
    n_clips: clipKeys.size,
    near_threshold: input.near,
    runs: runs.map((r) => ({
      file: r.file,
      name: r.name,
      name_from: r.name_from,
      carla_domain: r.carla_domain,
      protocol: r.protocol ?? null,
      n_records: r.records.length,
      n_clips: new Set(r.records.map((x) => clipKey(sourceOf(x), x.clip_id))).size,
    })),
    overall: m.global,
    coverage: coverageOf(records, questions),
    methods: input.runs ? methods : methodHeadlines(runs, questions),
    domains,
    leaderboard,
    per_source: perSource,
    gaps,
    per_question: perQuestion,
    bootstrap: input.bootstrap ? bootstrapIntervals(bootstrapClipsByDomain(records, questions), questions, { n: input.bootstrap.n, seed: input.bootstrap.seed }) : null,
    disagreements,
    feature_errors: featureErrors,
    label_audit: audit ? { file: audit.file, noise_decided_share: audit.share, levels: audit.levels } : null,
    class_shares: classShares(disagreements),
    ceiling_checks: audit ? runs.flatMap((r) => checkCeilings(r.name, r.records, r.frames, audit, questions, input.bootstrap) ?? []) : [],
    cross_check_left_out: [...noTrajectory],
    trajectory_errors: { n_clips: perClip.length, per_source: errSources, per_clip: perClip },
    worst,
    quality: qualityBySource(input.clips),
    notes,
  };
}

/** The share of the disagreements in each class (0 each without any). */
function classShares(ds: readonly Disagreement[]): Report['class_shares'] {
  const out: Report['class_shares'] = { 'noise-decided': 0, 'near-threshold': 0, error: 0, unknown: 0 };
  for (const d of ds) out[d.kind] += 1 / ds.length;
  return out;
}

/**
 * A disagreement's class (see `Disagreement.kind`): a label that flips under the ground truth's own
 * noise in at least `share` of the draws is noise-decided whatever the margins; else near-threshold
 * when either value lies within `near` of the threshold.
 */
export function classify(margin: Margin | null, flips: number | null, near: number, share: number): Disagreement['kind'] {
  if (flips !== null && flips >= share) return 'noise-decided';
  if (!margin || !Number.isFinite(margin.rel)) return 'unknown';
  return isNearThreshold(margin, near) ? 'near-threshold' : 'error';
}

const median = (v: number[]): number => {
  const s = v.slice().sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
};

/** One question's deciding values on both trajectories of every clip that has both (each clip once). */
export function signedErrors(q: Question, rs: readonly Prediction[], gt: ReadonlyMap<string, ClipData>, est: ReadonlyMap<string, ClipData>): FeatureErrors[] {
  const byFeature = new Map<string, { pts: FeatureErrors['points']; thresholds: number[] }>();
  const seen = new Set<string>();
  for (const r of rs) {
    const k = keyOf(r);
    const g = gt.get(k), e = est.get(k);
    if (seen.has(k) || !g || !e) continue;
    seen.add(k);
    const m = decisionMargin(q, g, e);
    if (m.estimate === null || !Number.isFinite(m.value) || !Number.isFinite(m.estimate)) continue;
    let f = byFeature.get(m.feature);
    if (!f) byFeature.set(m.feature, (f = { pts: [], thresholds: [] }));
    f.pts.push({ clip_id: r.clip_id, source: sourceOf(r), truth: m.value, estimate: m.estimate });
    f.thresholds.push(m.threshold);
  }
  return [...byFeature].map(([feature, { pts, thresholds }]) => {
    const d = pts.map((p) => p.estimate - p.truth);
    const mean = d.reduce((a, b) => a + b, 0) / d.length;
    const counts = new Map<number, number>();
    for (const t of thresholds) counts.set(t, (counts.get(t) ?? 0) + 1);
    return {
      feature,
      n: pts.length,
      threshold: [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0],
      median_ratio: median(pts.filter((p) => Math.abs(p.truth) > 1e-9).map((p) => p.estimate / p.truth)),
      bias: mean,
      spread: Math.sqrt(d.reduce((a, b) => a + (b - mean) ** 2, 0) / d.length),
      points: pts,
    };
  });
}
