/**
 * egogeo's runs on the published leaderboard: each run's leaderboard row made exactly as the
 * reference's `scripts/build_leaderboard.py` makes one (`extract_entry` over the grader's metrics:
 * pooled, temporal, consistency, per rule, category, source and question), with the per-source
 * buckets of the published grader (clip ids starting with `clip_` are nuScenes, the rest CARLA —
 * a record's `source` field is ignored, as the reference ignores it), then the rows placed among
 * the published ones: competition ranks (1 = best; ties share a rank) by pooled balanced accuracy,
 * by nuScenes and CARLA balanced accuracy, and among the rows that answer the same questions (the
 * geometric baselines answer the 6-question subset, the VLMs all 14). egogeo's rows rank by their
 * figures with the unanswered counted as wrong (grade/coverage.ts: abstaining cannot raise a rank),
 * their coverage beside them; the published rows by the figures they publish. A run named as a
 * published row (a reproduced baseline) stands beside it, marked "(reproduced)". Pure: load.ts reads the file.
 */
import { InputError } from '../core/errors.js';
import { evaluate, type GradeMetrics, sortCodePoints, unansweredAsWrong } from '../grade/index.js';
import type { Prediction } from '../core/prediction.js';
import type { QuestionSet } from '../oracle/index.js';

/** One leaderboard row: `model`, `balanced_acc` and whatever else the file holds. */
export type LeaderboardRow = { model: string; balanced_acc: number } & Record<string, unknown>;

/** Validates a parsed leaderboard file; `file` names it in the one-line error. */
export function parseLeaderboard(data: unknown, file: string): LeaderboardRow[] {
  const expected = 'expected a JSON list of leaderboard rows, each with a string "model" and a numeric "balanced_acc"';
  if (!Array.isArray(data)) throw new InputError(`${file}: not a leaderboard: ${expected}, got ${data === null ? 'null' : typeof data}`);
  if (data.length === 0) throw new InputError(`${file}: not a leaderboard: ${expected}, got an empty list`);
  data.forEach((r, i) => {
    const o = r as Record<string, unknown> | null;
    const bad =
      typeof o !== 'object' || o === null || Array.isArray(o)
        ? 'is not an object'
        : typeof o.model !== 'string'
          ? 'has no string "model"'
          : typeof o.balanced_acc !== 'number' || !Number.isFinite(o.balanced_acc)
            ? `("${o.model}") has no numeric "balanced_acc"`
            : null;
    if (bad) throw new InputError(`${file}: not a leaderboard: row ${i + 1} ${bad} (${expected})`);
    // Scores are fractions: a balanced accuracy of 1e308 or -3 is a broken file, not a row to rank.
    for (const [k, v] of Object.entries(o!)) {
      if (/(^|_)(balanced_acc|accuracy|macro_f1)$/.test(k) && v !== null && !(typeof v === 'number' && v >= 0 && v <= 1)) {
        throw new InputError(`${file}: row ${i + 1} ("${o!.model}"): "${k}" must be a number in [0, 1], got ${JSON.stringify(v)}`);
      }
    }
  });
  const seen = new Map<string, number>();
  data.forEach((r, i) => {
    const m = (r as LeaderboardRow).model;
    if (seen.has(m)) throw new InputError(`${file}: rows ${seen.get(m)! + 1} and ${i + 1} are both "${m}" (one row per model)`);
    seen.set(m, i);
  });
  return data as LeaderboardRow[];
}

/** The reference's `extract_entry(model_name, result)`: one flat leaderboard row. */
export function leaderboardRow(model: string, m: GradeMetrics): LeaderboardRow {
  const c = m.consistency;
  const e: Record<string, unknown> = {
    model,
    n_total: m.n_total,
    n_parsed: m.n_parsed,
    parsable_coverage: m.parsable_coverage,
    accuracy: m.global.accuracy,
    balanced_acc: m.global.balanced_acc,
    macro_f1: m.global.macro_f1,
    temporal_accuracy: m.temporal.accuracy,
    temporal_balanced_acc: m.temporal.balanced_acc,
    temporal_macro_f1: m.temporal.macro_f1,
    emcr: c.rate,
    wemcr: c.wemcr,
    mean_compliance: c.mean_compliance,
    rule_coverage: c.rule_coverage,
    n_rules_triggered: c.n_rules_triggered,
    consistency_coverage: c.consistency_coverage,
    n_evaluable: c.n_evaluable,
    n_consistent: c.n_consistent,
    mean_violations: c.mean_violations,
  };
  for (const name of sortCodePoints(Object.keys(c.per_rule))) {
    const s = c.per_rule[name];
    e[`rule_${name}_trigger`] = s.n_applicable;
    e[`rule_${name}_violations`] = s.n_violations;
    e[`rule_${name}_compliance`] = s.compliance;
  }
  for (const k of sortCodePoints(Object.keys(m.per_category))) {
    const g = m.per_category[k];
    e[`cat_${k}_accuracy`] = g.accuracy;
    e[`cat_${k}_balanced_acc`] = g.balanced_acc;
    e[`cat_${k}_macro_f1`] = g.macro_f1;
  }
  for (const k of sortCodePoints(Object.keys(m.per_source))) {
    const s = m.per_source[k];
    e[`src_${k}_accuracy`] = s.accuracy;
    e[`src_${k}_balanced_acc`] = s.balanced_acc;
    e[`src_${k}_macro_f1`] = s.macro_f1;
    e[`src_${k}_emcr`] = s.consistency.rate;
    e[`src_${k}_mean_compliance`] = s.consistency.mean_compliance;
  }
  for (const k of sortCodePoints(Object.keys(m.per_question))) {
    e[`q_${k}_accuracy`] = m.per_question[k].accuracy;
    e[`q_${k}_balanced_acc`] = m.per_question[k].balanced_acc;
  }
  return e as LeaderboardRow;
}

/** A run's leaderboard row as the published grader makes it (per source by clip id only). */
export function runRow(model: string, records: readonly Prediction[], questions: QuestionSet): LeaderboardRow {
  return leaderboardRow(
    model,
    evaluate(
      records.map(({ source: _, ...r }) => r),
      questions,
    ),
  );
}

/**
 * A run's row with its unanswered items counted as wrong (`unansweredAsWrong`): the figures its
 * ranks use. Its `n_parsed` counts the gradable items (`rowCoverage`'s denominator).
 */
export function runRowAll(model: string, records: readonly Prediction[], questions: QuestionSet): LeaderboardRow {
  return runRow(model, unansweredAsWrong(records, questions), questions);
}

/** Answered / gradable: a run's row over its all-answered row (both made by the grader); null when unknown. */
export function rowCoverage(row: Record<string, unknown>, all?: Record<string, unknown>): number | null {
  const answered = num(row.n_parsed);
  const total = all ? num(all.n_parsed) : num(row.n_total);
  if (answered === null || total === null) return typeof row.parsable_coverage === 'number' ? row.parsable_coverage : null;
  return total > 0 ? answered / total : 1;
}

/** The questions a row answers: its `q_<id>_balanced_acc` fields. */
export const rowQuestions = (r: Record<string, unknown>): string[] =>
  sortCodePoints(Object.keys(r).flatMap((k) => (/^q_(.+)_balanced_acc$/.exec(k) && typeof r[k] === 'number' ? [k.slice(2, -'_balanced_acc'.length)] : [])));

export const RANK_METRICS = ['balanced_acc', 'src_nuscenes_balanced_acc', 'src_carla_balanced_acc'] as const;
export type RankMetric = (typeof RANK_METRICS)[number];

export interface Rank {
  /** 1 = best; rows with the same value share a rank. */
  rank: number;
  /** Rows ranked (the published rows with this metric plus egogeo's). */
  of: number;
}

export interface Placement {
  model: string;
  questions: number;
  n_total: number;
  balanced_acc: number;
  src_nuscenes_balanced_acc: number | null;
  src_carla_balanced_acc: number | null;
  /** Answered / gradable items (1: every question answered). */
  coverage: number | null;
  /** The unanswered counted as wrong: what the ranks use (equal to `balanced_acc` when everything is answered). */
  balanced_acc_all: number;
  src_nuscenes_balanced_acc_all: number | null;
  src_carla_balanced_acc_all: number | null;
  rank: Record<RankMetric, Rank | null>;
  /** Pooled balanced accuracy among the rows that answer the same questions. */
  rank_same_questions: Rank;
  /** With a bootstrap: the intervals of the grader's balanced accuracies. */
  ci?: RowIntervals;
  /** Clips the run answers (the published rows: 1,000). */
  clips: number;
  /**
   * The run's row over the questions of the published rows that answer fewer questions (the
   * geometric baselines' 6), ranked among those rows; null when the run answers no more questions.
   */
  subset: { questions: number; balanced_acc: number; src_nuscenes_balanced_acc: number | null; src_carla_balanced_acc: number | null; rank: Rank } | null;
}

/** egogeo's row of a run, with what is needed to compare it with rows answering fewer questions. */
export interface RunRows {
  row: LeaderboardRow;
  /** Bootstrap intervals [lo, hi] of the row's balanced accuracies (grade/bootstrap.ts: `grade --bootstrap` of the run's file gives the same). */
  ci?: RowIntervals;
  /** The same run with its unanswered items counted as wrong (`runRowAll`); absent: everything answered. */
  all?: LeaderboardRow;
  clips: number;
  /** The run's row over each smaller question set some published rows answer (key: the ids, comma-joined). */
  subsets?: ReadonlyMap<string, LeaderboardRow>;
}

/** A row's bootstrap intervals: pooled, nuScenes and CARLA balanced accuracy (null where the run has none). */
export interface RowIntervals {
  balanced_acc: [number, number];
  src_nuscenes_balanced_acc: [number, number] | null;
  src_carla_balanced_acc: [number, number] | null;
}

/** One line of the merged leaderboard. */
export interface RankedRow {
  rank: number;
  model: string;
  egogeo: boolean;
  n_total: number | null;
  questions: number;
  /** Answers the same questions as egogeo's rows. */
  same_questions: boolean;
  /** Answered / gradable (published rows: their `parsable_coverage`); null when the row does not say. */
  coverage: number | null;
  accuracy: number | null;
  /** The grader's figure (answered items only). */
  balanced_acc: number;
  /** What the row ranks by: egogeo's rows with the unanswered counted as wrong, the published rows their own figure. */
  rank_balanced_acc: number;
  macro_f1: number | null;
  src_nuscenes_balanced_acc: number | null;
  src_carla_balanced_acc: number | null;
  /** egogeo's rows with a bootstrap: the intervals of the three balanced accuracies. */
  ci?: RowIntervals;
}

export interface LeaderboardPlacement {
  file: string;
  /** Published rows. */
  n_published: number;
  /** egogeo's rows, as the leaderboard file spells them (every field). */
  rows: LeaderboardRow[];
  placements: Placement[];
  /** Published and egogeo rows together, best first (ties: egogeo's first). */
  ranking: RankedRow[];
  /** Published rows that answer a different set of questions than egogeo's, by question count. */
  other_questions: Record<string, number>;
  notes: string[];
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const rankIn = (v: number, all: readonly (number | null | undefined)[]): Rank => {
  const vs = all.filter((x): x is number => x !== null);
  return { rank: 1 + vs.filter((x) => x > v).length, of: vs.length };
};

/** The name a reproduced baseline's row takes beside the published row of the same name. */
export const reproducedName = (model: string): string => `${model} (reproduced)`;

/**
 * Places egogeo's rows on the published leaderboard. A run named as a published row stands beside
 * it as "<name> (reproduced)"; egogeo's rows rank by their figures with the unanswered counted as wrong.
 */
export function placeOnLeaderboard(file: string, published: readonly LeaderboardRow[], runs: readonly (LeaderboardRow | RunRows)[]): LeaderboardPlacement {
  const notes: string[] = [];
  const pubNames = new Set(published.map((r) => r.model));
  const rr: RunRows[] = runs.map((r) => {
    const x: RunRows = 'row' in r && typeof r.row === 'object' ? (r as RunRows) : { row: r as LeaderboardRow, clips: NaN };
    if (!pubNames.has(x.row.model)) return x;
    const model = reproducedName(x.row.model);
    notes.push(`${file} has a row '${x.row.model}' (balanced_acc ${published.find((p) => p.model === x.row.model)!.balanced_acc}): kept; this run's row stands beside it as '${model}'`);
    return { ...x, row: { ...x.row, model }, ...(x.all ? { all: { ...x.all, model } } : {}) };
  });
  const ours = rr.map((r) => r.row);
  const pub = [...published];
  /** The row whose figures rank a row: egogeo's with the unanswered counted as wrong. */
  const rankRow = new Map<LeaderboardRow, LeaderboardRow>(rr.map((r) => [r.row, r.all ?? r.row]));
  const rv = (r: LeaderboardRow, m: string): number | null => num((rankRow.get(r) ?? r)[m]);
  const all = [...ours.map((r) => ({ r, egogeo: true })), ...pub.map((r) => ({ r, egogeo: false }))];
  const qsets = new Map(all.map(({ r }) => [r, rowQuestions(r).join(',')]));
  const ourSets = new Set(ours.map((r) => qsets.get(r)!));
  for (const r of rr) {
    const c = rowCoverage(r.row, r.all);
    if (c !== null && c < 1) notes.push(`${r.row.model} answers ${(100 * c).toFixed(1)}% of its items (it abstained on the rest): ranked with the unanswered counted as wrong (balanced_acc ${rv(r.row, 'balanced_acc')!.toFixed(4)}; the grader's figure over its answers ${r.row.balanced_acc.toFixed(4)})`);
  }

  const placements: Placement[] = ours.map((r, k) => {
    const rank = {} as Record<RankMetric, Rank | null>;
    for (const m of RANK_METRICS) {
      const v = rv(r, m);
      rank[m] = v === null ? null : rankIn(v, all.map(({ r: x }) => rv(x, m)));
    }
    const same = all.filter(({ r: x }) => qsets.get(x) === qsets.get(r)).map(({ r: x }) => rv(x, 'balanced_acc'));
    return {
      model: r.model,
      questions: rowQuestions(r).length,
      n_total: num(r.n_total) ?? 0,
      balanced_acc: r.balanced_acc,
      src_nuscenes_balanced_acc: num(r.src_nuscenes_balanced_acc),
      src_carla_balanced_acc: num(r.src_carla_balanced_acc),
      coverage: rowCoverage(r, rr[k].all),
      balanced_acc_all: rv(r, 'balanced_acc')!,
      src_nuscenes_balanced_acc_all: rv(r, 'src_nuscenes_balanced_acc'),
      src_carla_balanced_acc_all: rv(r, 'src_carla_balanced_acc'),
      rank,
      rank_same_questions: rankIn(rv(r, 'balanced_acc')!, same),
      ...(rr[k].ci ? { ci: rr[k].ci } : {}),
      clips: rr[k].clips,
      subset: subsetPlacement(rr[k], pub, qsets.get(r)!),
    };
  });

  const ranking: RankedRow[] = all
    .map(({ r, egogeo }, i) => ({ r, egogeo, i, v: rv(r, 'balanced_acc')! }))
    .sort((a, b) => b.v - a.v || a.i - b.i)
    .map(({ r, egogeo, v }) => ({
      ...(egogeo && rr.find((x) => x.row === r)?.ci ? { ci: rr.find((x) => x.row === r)!.ci } : {}),
      rank: rankIn(v, all.map(({ r: x }) => rv(x, 'balanced_acc'))).rank,
      model: r.model,
      egogeo,
      n_total: num(r.n_total),
      questions: rowQuestions(r).length,
      same_questions: ourSets.has(qsets.get(r)!),
      coverage: egogeo ? rowCoverage(r, rr.find((x) => x.row === r)?.all) : rowCoverage(r),
      accuracy: num(r.accuracy),
      balanced_acc: r.balanced_acc,
      rank_balanced_acc: v,
      macro_f1: num(r.macro_f1),
      src_nuscenes_balanced_acc: num(r.src_nuscenes_balanced_acc),
      src_carla_balanced_acc: num(r.src_carla_balanced_acc),
    }));

  // Published rows cover ~1,000 clips (n_total / questions): say so when the runs cover another set.
  const perRow = new Map<number, number>();
  for (const r of pub) {
    const n = num(r.n_total), q = rowQuestions(r).length;
    if (n !== null && q > 0) perRow.set(Math.round(n / q), (perRow.get(Math.round(n / q)) ?? 0) + 1);
  }
  const usual = [...perRow].sort((a, b) => b[1] - a[1])[0]?.[0];
  for (const p of placements) {
    if (usual !== undefined && Number.isFinite(p.clips) && p.clips !== usual) notes.push(`${p.model} answers ${p.clips} clips, the published rows about ${usual}: its ranks compare results on different clips`);
  }

  const other: Record<string, number> = {};
  for (const r of pub) if (!ourSets.has(qsets.get(r)!)) other[String(rowQuestions(r).length)] = (other[String(rowQuestions(r).length)] ?? 0) + 1;
  if (ourSets.size > 1) notes.push("egogeo's runs answer different sets of questions: compare each with the rows of its own set");
  return { file, n_published: pub.length, rows: [...ours], placements, ranking, other_questions: other, notes };
}

/** The run's subset row ranked among the published rows that answer exactly that subset. */
function subsetPlacement(run: RunRows, pub: readonly LeaderboardRow[], own: string): Placement['subset'] {
  const mine = new Set(own.split(','));
  let best: Placement['subset'] = null;
  for (const [key, row] of run.subsets ?? []) {
    const ids = key.split(',');
    if (key === own || !ids.every((q) => mine.has(q))) continue;
    const peers = pub.filter((r) => rowQuestions(r).join(',') === key).map((r) => r.balanced_acc);
    if (peers.length === 0) continue;
    const p = {
      questions: ids.length,
      balanced_acc: row.balanced_acc,
      src_nuscenes_balanced_acc: num(row.src_nuscenes_balanced_acc),
      src_carla_balanced_acc: num(row.src_carla_balanced_acc),
      rank: rankIn(row.balanced_acc, [row.balanced_acc, ...peers]),
    };
    if (!best || p.rank.of > best.rank.of) best = p;
  }
  return best;
}

/**
 * The rows of the merged ranking to show: `context` published rows either side of each egogeo row
 * (Infinity: all), with null where rows are left out.
 */
export function neighbourhood(ranking: readonly RankedRow[], context: number): (RankedRow | null)[] {
  if (!Number.isFinite(context)) return [...ranking];
  const keep = new Set<number>();
  ranking.forEach((r, i) => {
    if (!r.egogeo) return;
    // Walk outwards counting published rows only, so the other egogeo rows do not eat the context.
    for (const dir of [-1, 1]) {
      let seen = 0;
      for (let j = i + dir; j >= 0 && j < ranking.length && seen < context; j += dir) {
        keep.add(j);
        if (!ranking[j].egogeo) seen++;
      }
    }
    keep.add(i);
  });
  const out: (RankedRow | null)[] = [];
  ranking.forEach((r, i) => {
    if (keep.has(i)) out.push(r);
    else if (out.length === 0 || out[out.length - 1] !== null) out.push(null);
  });
  return out;
}
