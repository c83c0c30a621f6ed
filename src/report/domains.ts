/**
 * The per-domain table: one row per domain (nuScenes, CARLA simulation, CARLA transferred, or any
 * other source), graded with the benchmark's grader over the 6 questions every published
 * geometric baseline answers and over all questions present, and the domain gaps the benchmark
 * is about: CARLA transferred vs simulation, each CARLA domain vs nuScenes. Pure.
 */
import { GEOMETRIC_SUBSET } from '../baseline/baseline.js';
import { compareCodePoints, evaluate, type GroupMetrics } from '../grade/index.js';
import type { Prediction } from '../io/predictions.js';
import type { QuestionSet } from '../oracle/index.js';
import { type DomainInfo, sourceOf } from './runs.js';

export interface DomainRow {
  domain: string;
  /** The runs the rows' records come from (several when they answered alike). */
  runs: string[];
  clips: number;
  /** Pooled over the 6-question subset (null when no record answers one of them). */
  subset: GroupMetrics | null;
  /** Pooled over every question present. */
  all: GroupMetrics;
  /** How many distinct questions the records answer. */
  questions: number;
}

export interface DomainGap {
  /** `a − b`. */
  a: string;
  b: string;
  /** Balanced accuracy, 6-question subset (null when either side has none). */
  subset_balanced_acc: number | null;
  balanced_acc: number;
}

export interface DomainTable {
  subset: readonly string[];
  rows: DomainRow[];
  gaps: DomainGap[];
}

const SUBSET = new Set<string>(GEOMETRIC_SUBSET);
const metrics = (g: GroupMetrics): GroupMetrics => ({ accuracy: g.accuracy, balanced_acc: g.balanced_acc, macro_f1: g.macro_f1, n: g.n });
/** nuScenes first, then CARLA (simulation before transferred), then the rest; code points within. */
const rank = (d: string): number => (d.startsWith('nuscenes') ? 0 : d.startsWith('carla') ? 1 : 2);
export const compareDomains = (a: string, b: string): number => rank(a) - rank(b) || compareCodePoints(a, b);

/** The per-domain rows of records whose `source` is their domain label (see runs.ts). */
export function domainTable(records: readonly Prediction[], questions: QuestionSet, domains: readonly DomainInfo[]): DomainTable {
  const by = new Map<string, Prediction[]>();
  for (const r of records) {
    const d = sourceOf(r);
    let rs = by.get(d);
    if (!rs) by.set(d, (rs = []));
    rs.push(r);
  }
  const runsOf = new Map(domains.map((d) => [d.domain, d.runs]));
  const rows: DomainRow[] = [...by.keys()].sort(compareDomains).map((d) => {
    const rs = by.get(d)!;
    const sub = rs.filter((r) => SUBSET.has(r.question_id));
    return {
      domain: d,
      runs: runsOf.get(d) ?? [],
      clips: new Set(rs.map((r) => r.clip_id)).size,
      subset: sub.length ? metrics(evaluate(sub, questions).global) : null,
      all: metrics(evaluate(rs, questions).global),
      questions: new Set(rs.map((r) => r.question_id)).size,
    };
  });

  const gaps: DomainGap[] = [];
  const row = new Map(rows.map((r) => [r.domain, r]));
  const gap = (a: DomainRow, b: DomainRow) =>
    gaps.push({
      a: a.domain,
      b: b.domain,
      subset_balanced_acc: a.subset && b.subset ? a.subset.balanced_acc - b.subset.balanced_acc : null,
      balanced_acc: a.all.balanced_acc - b.all.balanced_acc,
    });
  const sim = row.get('carla simulation'), tr = row.get('carla transferred');
  if (sim && tr) gap(tr, sim);
  for (const r of rows) {
    if (!r.domain.startsWith('carla')) continue;
    // The nuScenes row of the same run: one shared row, or the run's own when the runs differ.
    const nu = row.get('nuscenes') ?? r.runs.map((n) => row.get(`nuscenes (${n})`)).find((x) => x);
    if (nu) gap(r, nu);
  }
  return { subset: GEOMETRIC_SUBSET, rows, gaps };
}
