/**
 * The per-domain table: one row per domain (nuScenes, CARLA simulation, CARLA transferred, or any
 * other source), graded with the benchmark's grader over the 6 questions every published
 * geometric baseline answers and over all questions present, and the domain gaps the benchmark
 * is about: CARLA transferred vs simulation, each CARLA domain vs nuScenes, and where several
 * methods' runs answered one domain differently, each pair of them. With a bootstrap (clip-level,
 * grade/bootstrap.ts) every balanced accuracy gets its interval and every gap its interval and
 * p-value: paired where both sides hold the same clips (the two CARLA domains, two methods), else
 * two-sample. Each figure draws from its own `random.Random(seed)`, so a row's interval does not
 * depend on what else is in the report. Pure.
 */
import { GEOMETRIC_SUBSET } from '../baseline/baseline.js';
import { bootstrapClips, bootstrapDifference, bootstrapIntervals, compareCodePoints, type CoveredGroup, coverageOf, type Difference, evaluate, type GroupMetrics } from '../grade/index.js';
import type { Prediction } from '../core/prediction.js';
import type { QuestionSet } from '../oracle/index.js';
import { baseDomain, type DomainInfo, sourceOf } from './runs.js';

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
  /** Answered / gradable items and balanced accuracy with the unanswered counted as wrong (grade/coverage.ts), 6-question subset and all. */
  subset_coverage: CoveredGroup | null;
  all_coverage: CoveredGroup;
  /** Bootstrap intervals [lo, hi] of the two balanced accuracies (with a bootstrap). */
  subset_ci?: [number, number] | null;
  all_ci?: [number, number];
}

export interface DomainGap {
  /** `a − b`. */
  a: string;
  b: string;
  /** Between domains of one method, or between methods on one domain. */
  kind: 'domain' | 'method';
  /** Balanced accuracy, 6-question subset (null when either side has none). */
  subset_balanced_acc: number | null;
  balanced_acc: number;
  /** The bootstrap of each difference (with a bootstrap). */
  subset_diff?: Difference | null;
  /** Null when a side has no parsable answer. */
  diff?: Difference | null;
}

export interface DomainTable {
  subset: readonly string[];
  rows: DomainRow[];
  gaps: DomainGap[];
  /** The bootstrap behind the intervals, when asked for. */
  bootstrap?: { n: number; seed: number; confidence: number };
}

/** A clip-level bootstrap: draws and seed. */
export interface BootstrapSpec {
  n: number;
  seed: number;
}

const SUBSET = new Set<string>(GEOMETRIC_SUBSET);
const metrics = (g: GroupMetrics): GroupMetrics => ({ accuracy: g.accuracy, balanced_acc: g.balanced_acc, macro_f1: g.macro_f1, n: g.n });
/** nuScenes first, then CARLA (simulation before transferred), then the rest; code points within. */
const rank = (d: string): number => (d.startsWith('nuscenes') ? 0 : d.startsWith('carla') ? 1 : 2);
export const compareDomains = (a: string, b: string): number => rank(a) - rank(b) || compareCodePoints(a, b);

/** The per-domain rows of records whose `source` is their domain label (see runs.ts). */
export function domainTable(records: readonly Prediction[], questions: QuestionSet, domains: readonly DomainInfo[], bootstrap?: BootstrapSpec): DomainTable {
  const by = new Map<string, Prediction[]>();
  for (const r of records) {
    const d = sourceOf(r);
    let rs = by.get(d);
    if (!rs) by.set(d, (rs = []));
    rs.push(r);
  }
  const runsOf = new Map(domains.map((d) => [d.domain, d.runs]));
  const subOf = (rs: readonly Prediction[]) => rs.filter((r) => SUBSET.has(r.question_id));
  const ci = (rs: readonly Prediction[]): [number, number] => {
    const b = bootstrapIntervals(bootstrapClips(rs, questions), questions, { n: bootstrap!.n, seed: bootstrap!.seed });
    return [b.balanced_acc_ci_lo, b.balanced_acc_ci_hi];
  };
  const rows: DomainRow[] = [...by.keys()].sort(compareDomains).map((d) => {
    const rs = by.get(d)!;
    const sub = subOf(rs);
    const cis = bootstrap ? { subset_ci: sub.length ? ci(sub) : null, all_ci: ci(rs) } : {};
    return {
      domain: d,
      runs: runsOf.get(d) ?? [],
      clips: new Set(rs.map((r) => r.clip_id)).size,
      subset: sub.length ? metrics(evaluate(sub, questions).global) : null,
      all: metrics(evaluate(rs, questions).global),
      questions: new Set(rs.map((r) => r.question_id)).size,
      subset_coverage: sub.length ? coverageOf(sub, questions) : null,
      all_coverage: coverageOf(rs, questions),
      ...cis,
    };
  });

  const gaps: DomainGap[] = [];
  const row = new Map(rows.map((r) => [r.domain, r]));
  /** The bootstrap of a gap; null when a side has no parsable answer to draw from. */
  const diff = (a: DomainRow, b: DomainRow, pick: (rs: readonly Prediction[]) => readonly Prediction[]): Difference | null => {
    const side = (r: DomainRow) => ({ name: r.domain, clips: bootstrapClips(pick(by.get(r.domain)!), questions) });
    const sa = side(a), sb = side(b);
    if (sa.clips.length === 0 || sb.clips.length === 0) return null;
    return bootstrapDifference(sa, sb, questions, { n: bootstrap!.n, seed: bootstrap!.seed });
  };
  const gap = (a: DomainRow, b: DomainRow, kind: DomainGap['kind'] = 'domain') => {
    const both = a.subset && b.subset;
    gaps.push({
      a: a.domain,
      b: b.domain,
      kind,
      subset_balanced_acc: both ? a.subset!.balanced_acc - b.subset!.balanced_acc : null,
      balanced_acc: a.all.balanced_acc - b.all.balanced_acc,
      ...(bootstrap ? { subset_diff: both ? diff(a, b, subOf) : null, diff: diff(a, b, (rs) => rs) } : {}),
    });
  };
  const sim = row.get('carla simulation'), tr = row.get('carla transferred');
  if (sim && tr) gap(tr, sim);
  for (const r of rows) {
    if (!r.domain.startsWith('carla')) continue;
    // The nuScenes row of the same run: one shared row, or the run's own when the runs differ.
    const nu = row.get('nuscenes') ?? rows.find((x) => baseDomain(x.domain) === 'nuscenes' && x.runs.some((n) => r.runs.includes(n)));
    if (nu) gap(r, nu);
  }
  // Methods: the rows of one domain that differing runs split (`nuscenes (vo_proxy_simulation)`).
  const base = baseDomain;
  for (let i = 0; i < rows.length; i++) {
    for (let j = i + 1; j < rows.length; j++) {
      if (rows[i].domain !== base(rows[i].domain) && base(rows[i].domain) === base(rows[j].domain)) gap(rows[i], rows[j], 'method');
    }
  }
  const table: DomainTable = { subset: GEOMETRIC_SUBSET, rows, gaps };
  if (bootstrap) table.bootstrap = { n: bootstrap.n, seed: bootstrap.seed, confidence: 0.95 };
  return table;
}
