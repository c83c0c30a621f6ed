/**
 * audit/shortcut — the best score reachable without the image: answers that depend only on some
 * fields of a clip's record (its source, CARLA's `behavior`, …), read against the benchmark's own
 * answers. Pure computation (no I/O; audit/load.ts reads the files). May import: core/, grade/,
 * baseline/ (for the 6-question subset).
 *
 * Construction. A "cell" is one combination of the chosen fields' values. Balanced accuracy of one
 * question is (1/K) Σ_y recall(y) with K the labels that have support, and recall(y) =
 * Σ_cell [answer(cell) = y] · n(cell, y) / n(y): a sum over cells, so the best answer of each cell
 * is argmax_y n(cell, y) / n(y) independently of the other cells (for accuracy: argmax_y n(cell, y)).
 * `per_question[q].bound` is that optimum. `pooled14` / `pooled6` are the published grader's pooled
 * balanced accuracy (one class per label string, over all the questions' records together: grade/
 * metrics `balancedAccuracy`) of those same answers, as the issue defines the bound. The pooled
 * metric is itself a sum over (cell, question) of n(cell, q, y) / N(y) with N(y) pooled over
 * questions, so its own optimum (`pooled14_max`, `pooled6_max`) uses the pooled N(y) instead and can
 * be higher: both are reported, labelled.
 *
 * Chance is what a uniform random answer scores in expectation: 1/K per question (for balanced
 * accuracy and for accuracy alike); pooled, Σ_y (Σ_q n(q, y) / K_q) / N(y) over the labels with
 * support, divided by their number (accuracy: Σ_q n_q / K_q / Σ_q n_q).
 *
 * Per cell, `gain` is how much the cell gives away: its share of (bound − chance) of a question,
 * (1/K)·[n(c, y*)/n(y*) − (1/K)·Σ_y n(c, y)/n(y)] (accuracy: [n(c, y*) − n(c)/K] / n); the gains of
 * a question's cells sum to its bound − chance.
 */
import { GEOMETRIC_SUBSET } from '../baseline/baseline.js';
import { InputError } from '../core/errors.js';
import { balancedAccuracy, compareCodePoints, semanticAccuracy } from '../grade/metrics.js';

export type ShortcutMetric = 'bacc' | 'acc';

/** One clip: its answers (question id → label) and the record's fields (any JSON values). */
export interface AuditClip {
  readonly id: string;
  readonly answers: Readonly<Record<string, string>>;
  readonly fields: Readonly<Record<string, unknown>>;
}

export interface QuestionBound {
  /** the best score reachable from the fields alone (per-question optimum) */
  bound: number;
  /** a uniform random answer's expected score, 1/K */
  chance: number;
  /** labels with support (K) */
  n_labels: number;
  n: number;
  /** the optimal answer of each cell (cell key → label) */
  answers: Record<string, string>;
}

export interface CellQuestion {
  answer: string;
  n: number;
  /** this cell's share of the question's bound − chance */
  gain: number;
}

export interface CellReport {
  cell: string;
  values: Record<string, unknown>;
  n_clips: number;
  /** mean over questions of the per-question gains: the cell's share of mean bound − mean chance */
  gain_mean: number;
  per_question: Record<string, CellQuestion>;
}

export interface ShortcutReport {
  metric: ShortcutMetric;
  by: string[];
  n_clips: number;
  questions: string[];
  subset: string[];
  /** pooled grader score of the per-question optimal answers over all questions */
  pooled14: number;
  /** the same over the 6-question subset of the geometric baselines (NaN when none of them is present) */
  pooled6: number;
  pooled14_chance: number;
  pooled6_chance: number;
  /** the pooled metric's own optimum (answers chosen with pooled label counts) */
  pooled14_max: number;
  pooled6_max: number;
  mean_bound: number;
  mean_chance: number;
  per_question: Record<string, QuestionBound>;
  /** per value of `sourceField` (default `source`): the pooled score of the optimal answers on those clips */
  per_source: Record<string, { n_clips: number; pooled14: number; pooled6: number }>;
  cells: CellReport[];
}

/** The value of a field: a top-level key, or a dotted path (`features.mean_speed`); undefined when absent. */
export function fieldValue(fields: Readonly<Record<string, unknown>>, path: string): unknown {
  if (Object.prototype.hasOwnProperty.call(fields, path)) return fields[path];
  let v: unknown = fields;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.prototype.hasOwnProperty.call(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** A cell's key: `field=value` joined by `, ` (values as JSON; absent fields as `∅`). */
export function cellKey(fields: Readonly<Record<string, unknown>>, by: readonly string[]): string {
  return by
    .map((f) => {
      const v = fieldValue(fields, f);
      return `${f}=${v === undefined ? '∅' : typeof v === 'string' ? v : JSON.stringify(v)}`;
    })
    .join(', ');
}

type Counts = Map<string, number>;
const inc = (m: Counts, k: string, c = 1): void => void m.set(k, (m.get(k) ?? 0) + c);

/** argmax over labels in code-point order (ties: the first such label) of score(label). */
function argmaxLabel(labels: readonly string[], score: (y: string) => number): string {
  let best = labels[0];
  let bs = -Infinity;
  for (const y of labels) {
    const s = score(y);
    if (s > bs) {
      bs = s;
      best = y;
    }
  }
  return best;
}

/**
 * The shortcut bound of `clips` for cells made of the fields `by`. `questions` (default: every
 * question id in first-appearance order) chooses and orders the questions; a clip without an answer
 * to a question is left out of that question. `sourceField` names the per-source breakdown.
 */
export function shortcutBound(
  clips: readonly AuditClip[],
  by: readonly string[],
  metric: ShortcutMetric = 'bacc',
  questions?: readonly string[],
  sourceField = 'source',
  choices?: ReadonlyMap<string, readonly string[]>,
): ShortcutReport {
  if (clips.length === 0) throw new InputError('no clips to audit');
  if (by.length === 0) throw new InputError('--by: name at least one field');
  const qids: string[] = questions ? [...questions] : [];
  if (!questions) {
    const seen = new Set<string>();
    for (const c of clips) for (const q of Object.keys(c.answers)) if (!seen.has(q)) (seen.add(q), qids.push(q));
  }
  if (qids.length === 0) throw new InputError('the clips carry no answers');
  // With the question file's choices: every question known, every answer one of its choices, and
  // chance a uniform guess over the choices (not over the labels these clips happen to have).
  if (choices) {
    for (const q of qids) if (!choices.has(q)) throw new InputError(`question '${q}' is not in the question file (it has ${[...choices.keys()].join(', ')})`);
    for (const c of clips) {
      for (const [q, y] of Object.entries(c.answers)) {
        const k = choices.get(q);
        if (!k) throw new InputError(`clip ${c.id}: question '${q}' is not in the question file`);
        if (typeof y === 'string' && k.length > 0 && !k.includes(y.toLowerCase())) throw new InputError(`clip ${c.id}: answer '${y}' to '${q}' is not one of its choices (${k.join(', ')})`);
      }
    }
  }
  const nChoices = (q: string, present: number): number => (choices?.get(q)?.length || present);
  const cellOf = clips.map((c) => cellKey(c.fields, by));
  const cellValues = new Map<string, Record<string, unknown>>();
  const cellClips = new Map<string, number>();
  clips.forEach((c, i) => {
    inc(cellClips, cellOf[i]);
    if (!cellValues.has(cellOf[i])) cellValues.set(cellOf[i], Object.fromEntries(by.map((f) => [f, fieldValue(c.fields, f) ?? null])));
  });
  const cellNames = [...cellClips.keys()].sort(compareCodePoints);

  // Counts per question: n(y), n(cell, y); pooled N(y).
  const nY = new Map<string, Counts>();
  const nCY = new Map<string, Map<string, Counts>>();
  const pooledN: Counts = new Map();
  for (const q of qids) {
    const ny: Counts = new Map();
    const ncy = new Map<string, Counts>();
    clips.forEach((c, i) => {
      const y = c.answers[q];
      if (typeof y !== 'string') return;
      inc(ny, y);
      inc(pooledN, y);
      let m = ncy.get(cellOf[i]);
      if (!m) ncy.set(cellOf[i], (m = new Map()));
      inc(m, y);
    });
    nY.set(q, ny);
    nCY.set(q, ncy);
  }

  const choose = (q: string, pooledWeights: boolean): Record<string, string> => {
    const ny = nY.get(q)!;
    const labels = [...ny.keys()].sort(compareCodePoints);
    const out: Record<string, string> = {};
    for (const [cell, m] of nCY.get(q)!) {
      const w = (y: string): number => (metric === 'acc' ? 1 : 1 / (pooledWeights ? pooledN.get(y)! : ny.get(y)!));
      out[cell] = argmaxLabel(labels, (y) => (m.get(y) ?? 0) * w(y));
    }
    return out;
  };
  const perQ = new Map(qids.map((q) => [q, choose(q, false)]));
  const perQPooled = new Map(qids.map((q) => [q, choose(q, true)]));

  const score = (o: string[], p: string[]): number => (metric === 'acc' ? semanticAccuracy(o, p) : balancedAccuracy(o, p, null));
  const lists = (qs: readonly string[], ans: Map<string, Record<string, string>>, keep: (i: number) => boolean = () => true) => {
    const o: string[] = [];
    const p: string[] = [];
    for (const q of qs) {
      const a = ans.get(q)!;
      clips.forEach((c, i) => {
        const y = c.answers[q];
        if (typeof y !== 'string' || !keep(i)) return;
        o.push(y);
        p.push(a[cellOf[i]]);
      });
    }
    return { o, p };
  };
  const pooled = (qs: readonly string[], ans: Map<string, Record<string, string>>, keep?: (i: number) => boolean): number => {
    if (qs.length === 0) return NaN;
    const { o, p } = lists(qs, ans, keep);
    return o.length === 0 ? NaN : score(o, p);
  };
  const pooledChance = (qs: readonly string[]): number => {
    if (qs.length === 0) return NaN;
    if (metric === 'acc') {
      let num = 0;
      let den = 0;
      for (const q of qs) {
        const ny = nY.get(q)!;
        const n = [...ny.values()].reduce((a, b) => a + b, 0);
        num += n / nChoices(q, ny.size);
        den += n;
      }
      return den ? num / den : NaN;
    }
    const hit: Counts = new Map();
    const tot: Counts = new Map();
    for (const q of qs) for (const [y, n] of nY.get(q)!) (inc(hit, y, n / nChoices(q, nY.get(q)!.size)), inc(tot, y, n));
    const ys = [...tot.keys()];
    return ys.reduce((s, y) => s + hit.get(y)! / tot.get(y)!, 0) / ys.length;
  };

  const subsetSet = new Set<string>(GEOMETRIC_SUBSET);
  const subset = qids.filter((q) => subsetSet.has(q));
  const perQuestion: Record<string, QuestionBound> = {};
  for (const q of qids) {
    const { o, p } = lists([q], perQ);
    const ny = nY.get(q)!;
    perQuestion[q] = { bound: o.length ? score(o, p) : NaN, chance: ny.size ? 1 / nChoices(q, ny.size) : NaN, n_labels: ny.size, n: o.length, answers: perQ.get(q)! };
  }

  const cells: CellReport[] = cellNames.map((cell) => {
    const pq: Record<string, CellQuestion> = {};
    let gsum = 0;
    for (const q of qids) {
      const m = nCY.get(q)!.get(cell);
      if (!m) continue;
      const ny = nY.get(q)!;
      const K = ny.size;
      const Kc = nChoices(q, K); // a uniform guess hits each label with 1 / Kc
      const y = perQ.get(q)![cell];
      const nc = [...m.values()].reduce((a, b) => a + b, 0);
      let gain: number;
      if (metric === 'acc') {
        const n = [...ny.values()].reduce((a, b) => a + b, 0);
        gain = ((m.get(y) ?? 0) - nc / Kc) / n;
      } else {
        let rnd = 0;
        for (const [l, c] of m) rnd += c / ny.get(l)!;
        gain = ((m.get(y) ?? 0) / ny.get(y)! - rnd / Kc) / K;
      }
      pq[q] = { answer: y, n: nc, gain };
      gsum += gain;
    }
    return { cell, values: cellValues.get(cell)!, n_clips: cellClips.get(cell)!, gain_mean: gsum / qids.length, per_question: pq };
  });

  const perSource: ShortcutReport['per_source'] = {};
  const srcOf = clips.map((c) => {
    const v = fieldValue(c.fields, sourceField);
    return v === undefined ? '∅' : String(v);
  });
  for (const s of [...new Set(srcOf)].sort(compareCodePoints)) {
    const keep = (i: number) => srcOf[i] === s;
    perSource[s] = { n_clips: srcOf.filter((x) => x === s).length, pooled14: pooled(qids, perQ, keep), pooled6: pooled(subset, perQ, keep) };
  }

  const bounds = qids.map((q) => perQuestion[q].bound);
  const chances = qids.map((q) => perQuestion[q].chance);
  return {
    metric,
    by: [...by],
    n_clips: clips.length,
    questions: qids,
    subset,
    pooled14: pooled(qids, perQ),
    pooled6: pooled(subset, perQ),
    pooled14_chance: pooledChance(qids),
    pooled6_chance: pooledChance(subset),
    pooled14_max: pooled(qids, perQPooled),
    pooled6_max: pooled(subset, perQPooled),
    mean_bound: bounds.reduce((a, b) => a + b, 0) / bounds.length,
    mean_chance: chances.reduce((a, b) => a + b, 0) / chances.length,
    per_question: perQuestion,
    per_source: perSource,
    cells,
  };
}

/** A leaderboard row as far as the comparison needs it. */
export interface LeaderRow {
  model: string;
  balanced_acc: number;
  n_total?: number;
  [k: string]: unknown;
}

export interface LeaderboardComparison {
  n_rows: number;
  /** rows whose pooled balanced accuracy is at or below the bound for their questions (6-question rows against pooled6) */
  pooled: { at_or_below: number; models: string[] };
  per_source: Record<string, { n_rows: number; at_or_below: number; models: string[] }>;
  /** the bound each row was compared with */
  rows: { model: string; questions: number; balanced_acc: number; bound: number; at_or_below: boolean }[];
}

/**
 * How many published rows score at or below the bound. A row answers the 6-question subset when
 * `n_total` ≤ 6 × the clip count (the geometric baselines: 6,000 over 1,000 clips), else all
 * questions; it is compared with the bound over its own questions, pooled and per source
 * (`src_<source>_balanced_acc`). The comparison uses the leaderboard's 4-decimal values against
 * the bound rounded to 4 decimals, as the grader reports both.
 */
export function compareLeaderboard(r: ShortcutReport, rows: readonly LeaderRow[]): LeaderboardComparison {
  const r4 = (x: number): number => Math.round(x * 1e4) / 1e4;
  const six = (row: LeaderRow): boolean => typeof row.n_total === 'number' && r.subset.length > 0 && row.n_total <= r.subset.length * r.n_clips;
  const out: LeaderboardComparison = { n_rows: rows.length, pooled: { at_or_below: 0, models: [] }, per_source: {}, rows: [] };
  for (const row of rows) {
    const s6 = six(row);
    const bound = s6 ? r.pooled6 : r.pooled14;
    const below = row.balanced_acc <= r4(bound);
    out.rows.push({ model: row.model, questions: s6 ? r.subset.length : r.questions.length, balanced_acc: row.balanced_acc, bound, at_or_below: below });
    if (below) (out.pooled.at_or_below++, out.pooled.models.push(row.model));
    for (const [src, b] of Object.entries(r.per_source)) {
      const v = row[`src_${src}_balanced_acc`];
      if (typeof v !== 'number') continue;
      const ps = (out.per_source[src] ??= { n_rows: 0, at_or_below: 0, models: [] });
      ps.n_rows++;
      if (v <= r4(s6 ? b.pooled6 : b.pooled14)) (ps.at_or_below++, ps.models.push(row.model));
    }
  }
  return out;
}
