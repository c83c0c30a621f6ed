/**
 * Threshold sensitivity, after the reference's `scripts/threshold_sensitivity.py`: relabel every
 * trajectory with all thresholds × α (`scaleParams` = the reference's `perturb_params`), report each
 * question's label flip rate against α = 1, the oracle's own consistency (EMCR, WPCR: the grader's `wemcr`) at each α,
 * and — given several prediction sets — each set's pooled accuracy, balanced accuracy and macro F1
 * against the relabelled oracle and Kendall's τ between the sets' ranking at α and at α = 1.
 *
 * Per question (`scripts/per_threshold_sensitivity.py`): one question's thresholds × α, the others
 * nominal. A question's label depends on its own thresholds only, so its labels at α are those of
 * the all-thresholds relabelling; what differs is the grading: each set's metrics on that question,
 * and the pooled ranking when only that question's labels move. The dynamics and features do not
 * depend on α, so they are computed once.
 *
 * Pure: answers arrive already parsed and the metric is passed in (the CLI wires in grade/), so
 * oracle/ keeps importing only core/.
 */
import { InputError } from '../core/errors.js';
import { labelClip } from './oracle.js';
import type { QuestionSet } from './questions.js';
import type { ClipData } from './rules.js';

/** α from `from` to `to` (inclusive) in steps of `step`, rounded to 10 decimals; always contains 1. */
export function alphaGrid(from: number, to: number, step: number): number[] {
  for (const [name, v] of [['--from', from], ['--to', to], ['--step', step]] as const) {
    if (!Number.isFinite(v) || v <= 0) throw new InputError(`${name} must be a positive number, got ${v}`);
  }
  if (to < from) throw new InputError(`--to (${to}) must not be below --from (${from})`);
  const k = Math.floor((to - from) / step + 1e-9);
  if (k > 10_000) throw new InputError(`--step ${step} gives ${k + 1} values of alpha (at most 10001)`);
  const set = new Set<number>([1]);
  for (let i = 0; i <= k; i++) set.add(Math.round((from + i * step) * 1e10) / 1e10);
  return [...set].sort((a, b) => a - b);
}

/** The reference's `kendall_tau` over two rankings (best first): concordant/discordant pairs, ties ignored. */
export function kendallTau(rankingA: readonly string[], rankingB: readonly string[]): number {
  if (rankingA.length === 0 || rankingB.length === 0) return 0;
  const inB = new Set(rankingB);
  const common = [...new Set(rankingA)].filter((m) => inB.has(m)).sort();
  if (common.length < 2) return 1;
  const inCommon = new Set(common);
  const rank = (r: readonly string[]): Map<string, number> => {
    const m = new Map<string, number>();
    r.forEach((x, i) => {
      if (inCommon.has(x)) m.set(x, i);
    });
    return m;
  };
  const ra = rank(rankingA), rb = rank(rankingB);
  let concordant = 0, discordant = 0;
  for (let i = 0; i < common.length; i++) {
    for (let j = i + 1; j < common.length; j++) {
      const p = (ra.get(common[i])! - ra.get(common[j])!) * (rb.get(common[i])! - rb.get(common[j])!);
      if (p > 0) concordant++;
      else if (p < 0) discordant++;
    }
  }
  const denom = concordant + discordant;
  return denom === 0 ? 1 : (concordant - discordant) / denom;
}

/**
 * Names ranked by score, best first. Ties keep the names' code-point order (the reference sorts its
 * model names, then stable-sorts by score).
 */
export function rankByScore(names: readonly string[], scores: readonly number[]): string[] {
  const idx = names.map((_, i) => i).sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : 0));
  return idx.sort((a, b) => scores[b] - scores[a]).map((i) => names[i]);
}

/** One prediction set with its answers already parsed; `clip` indexes the trajectories. */
export interface ParsedPredictions {
  name: string;
  items: readonly { clip: number; questionId: string; parsed: string }[];
  /** Records left out before relabelling (unknown clip or question, unparsable answer): for the report. */
  skipped?: Record<string, number>;
}

/** Pooled metrics over (oracle, prediction) pairs, as the reference's `_compute_group_metrics` (rounded to 4 places). */
export interface PairScores {
  accuracy: number;
  balanced_acc: number;
  macro_f1: number;
  n: number;
}
export type PairMetric = (oracle: string[], pred: string[]) => PairScores;

/** The oracle's own consistency over the relabelled clips (the reference's `compute_oracle_consistency`). */
export interface OracleConsistency {
  emcr: number;
  wemcr: number;
  rule_coverage: number;
  n_evaluable: number;
}

export interface SensitivityRow {
  alpha: number;
  /** Fraction of trajectories whose label differs from α = 1, per question and over all questions. */
  flipRate: Record<string, number>;
  overallFlipRate: number;
  /** Per prediction set (by name): balanced accuracy against the relabelled oracle. */
  scores?: Record<string, number>;
  /** Per prediction set: accuracy, balanced accuracy, macro F1 and n. */
  metrics?: Record<string, PairScores>;
  /** Kendall's τ of the sets' ranking at α vs at α = 1 (with prediction sets). */
  tau?: number;
  /** The relabelled oracle's consistency (when a consistency function is given). */
  oracleConsistency?: OracleConsistency;
}

/** One question's thresholds × α, the others nominal; arrays run over the report's alphas. */
export interface PerQuestionSensitivity {
  question: string;
  /** Share of all trajectories whose label of this question differs from α = 1. */
  flipRate: number[];
  /** Per prediction set: its metrics on this question alone. */
  metrics: Record<string, PairScores>[];
  /** Mean over the sets of this question's balanced accuracy. */
  meanBalancedAcc: number[];
  /** Mean over the sets of |ΔBAcc| against α = 1 on this question (the reference's heatmap). */
  meanAbsDelta: number[];
  /** Kendall's τ of the pooled ranking (only this question relabelled) vs α = 1. */
  tau: number[];
}

export interface SensitivityReport {
  trajectories: number;
  questions: string[];
  alphas: number[];
  rows: SensitivityRow[];
  predictions?: { name: string; used: number; skipped: Record<string, number> }[];
  /** The sets ranked at α = 1, best first. */
  nominalRanking?: string[];
  /** With `perQuestion`: one entry per reported question. */
  perQuestion?: PerQuestionSensitivity[];
}

export interface SensitivityOptions {
  clips: readonly ClipData[];
  /** The question set with thresholds × α (e.g. `(a) => loadQuestions(path, a)`). */
  questionsAt: (alpha: number) => QuestionSet;
  alphas: readonly number[];
  /** Restrict the flip-rate report to these questions (all by default). */
  questionIds?: readonly string[];
  predictions?: readonly ParsedPredictions[];
  metric?: PairMetric;
  /** The oracle's consistency over relabelled clips (grade/'s computeConsistency, wired in by the CLI). */
  consistency?: (labels: readonly Record<string, string>[]) => OracleConsistency;
  /** Also the per-question analysis. */
  perQuestion?: boolean;
}

/** Relabels every clip at every α. Result: `[alphaIndex][clipIndex][questionId]`. */
export function relabelAll(clips: readonly ClipData[], questionsAt: (alpha: number) => QuestionSet, alphas: readonly number[]): Record<string, string>[][] {
  return alphas.map((a) => {
    const qs = questionsAt(a);
    return clips.map((c) => labelClip(c, qs));
  });
}

/** numpy's mean of a short list (sequential sum, then divide); 0 for none, as the reference. */
const mean = (v: readonly number[]): number => (v.length ? v.reduce((a, b) => a + b, 0) / v.length : 0);

export function sensitivity(o: SensitivityOptions): SensitivityReport {
  const alphas = [...o.alphas];
  if (!alphas.includes(1)) alphas.push(1);
  alphas.sort((a, b) => a - b);
  const labels = relabelAll(o.clips, o.questionsAt, alphas);
  const one = alphas.indexOf(1);
  const nominal = labels[one];
  const qids = o.questionIds ? [...o.questionIds] : o.questionsAt(1).questions.map((q) => q.id);
  const n = o.clips.length;

  const preds = o.predictions ?? [];
  if (preds.length && !o.metric) throw new Error('sensitivity: prediction sets need a metric');
  const names = preds.map((p) => p.name);
  /** Each set's metrics against the oracle `labelOf(clip, question)`, over its items that pass `keep`. */
  const grade = (labelOf: (clip: number, q: string) => string | undefined, keep: (q: string) => boolean = () => true): Record<string, PairScores> => {
    const out: Record<string, PairScores> = {};
    for (const p of preds) {
      const oracle: string[] = [], pred: string[] = [];
      for (const it of p.items) {
        if (!keep(it.questionId)) continue;
        const l = labelOf(it.clip, it.questionId);
        if (l === undefined) continue;
        oracle.push(l);
        pred.push(it.parsed);
      }
      out[p.name] = oracle.length ? o.metric!(oracle, pred) : { accuracy: 0, balanced_acc: 0, macro_f1: 0, n: 0 };
    }
    return out;
  };
  const ranking = (m: Record<string, PairScores>): string[] => rankByScore(names, names.map((x) => m[x].balanced_acc));
  const nominalMetrics = preds.length ? grade((c, q) => nominal[c]?.[q]) : {};
  const nominalRanking = ranking(nominalMetrics);

  const rows: SensitivityRow[] = alphas.map((alpha, k) => {
    const flipRate: Record<string, number> = {};
    let flips = 0;
    for (const q of qids) {
      let f = 0;
      for (let i = 0; i < n; i++) if (labels[k][i][q] !== nominal[i][q]) f++;
      flipRate[q] = n ? f / n : 0;
      flips += f;
    }
    const row: SensitivityRow = { alpha, flipRate, overallFlipRate: n && qids.length ? flips / (n * qids.length) : 0 };
    if (preds.length) {
      const metrics = k === one ? nominalMetrics : grade((c, q) => labels[k][c]?.[q]);
      row.scores = Object.fromEntries(names.map((x) => [x, metrics[x].balanced_acc]));
      row.metrics = metrics;
      row.tau = kendallTau(nominalRanking, ranking(metrics));
    }
    if (o.consistency) row.oracleConsistency = o.consistency(labels[k]);
    return row;
  });

  const report: SensitivityReport = { trajectories: n, questions: qids, alphas, rows };
  if (preds.length) {
    report.predictions = preds.map((p) => ({ name: p.name, used: p.items.length, skipped: p.skipped ?? {} }));
    report.nominalRanking = nominalRanking;
  }
  if (o.perQuestion) {
    report.perQuestion = qids.map((q) => {
      // The reference counts a flip only where both labels exist, over all trajectories.
      const flipRate = alphas.map((_, k) => {
        let f = 0;
        for (let i = 0; i < n; i++) {
          const a = labels[k][i][q], b = nominal[i][q];
          if (a !== undefined && b !== undefined && a !== b) f++;
        }
        return n ? f / n : 0;
      });
      const metrics = alphas.map((_, k) => grade((c, qq) => labels[k][c]?.[qq], (qq) => qq === q));
      const tau = alphas.map((_, k) => (preds.length ? kendallTau(nominalRanking, ranking(grade((c, qq) => (qq === q ? labels[k] : nominal)[c]?.[qq]))) : 1));
      const bacc = (k: number): number[] => names.map((x) => metrics[k][x].balanced_acc);
      return {
        question: q,
        flipRate,
        metrics,
        meanBalancedAcc: alphas.map((_, k) => mean(bacc(k))),
        meanAbsDelta: alphas.map((_, k) => mean(bacc(k).map((v, j) => Math.abs(v - bacc(one)[j])))),
        tau,
      };
    });
  }
  return report;
}
