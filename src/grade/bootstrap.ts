/**
 * Clip-level bootstrap intervals, after the reference's `scripts/bootstrap_confidence.py`: each
 * draw resamples the clips with replacement (`rng.choices(clip_ids, k=n)` on one
 * `random.Random(seed)`), pools the drawn clips' answers and recomputes balanced accuracy and the
 * WPCR (the grader's key `wemcr`); an interval is the 2.5th and 97.5th percentile of the draws, linearly
 * interpolated as the script does. With the same seed and clip order the pooled intervals equal the
 * script's. Each source and each question gets its own draws with the same seed over its own clips
 * (one interval per quantity, whichever command computes it), and paired or two-sample intervals
 * of a difference.
 *
 * Records are read as the script reads them (`parse_records`): a record counts when its question is
 * known, it has an oracle label and its answer parses; the rest are left out, not scored as wrong.
 * Balanced accuracy is computed from per-clip counts (recall per oracle class, summed in the class
 * order the grader uses), so a draw costs O(answers), not a regrade. Pure.
 */
import { pyRound } from '../core/numeric.js';
import { PyRandom } from '../core/pyrandom.js';
import type { QuestionSet } from '../oracle/questions.js';
import { compileRules, CONSISTENCY_RULES, type CompiledRules, consistencyFromTable } from './consistency.js';
import { type Prediction, referenceSource } from '../core/prediction.js';
import { type LooseRecord, sortCodePoints } from './metrics.js';
import { pyLower, pyStr, pyStrip } from '../core/pystring.js';
import { normalizeNumeric, parseAnswer } from './parse.js';

/** One clip's graded answers, as the script's `parse_records` keeps them. */
export interface BootstrapClip {
  id: string;
  source: string;
  answers: { question: string; oracle: string; pred: string }[];
}

/** The script's `parse_records`: clips in order of first appearance; `source` as the grader buckets it. */
export function bootstrapClips(records: readonly Prediction[], questions: QuestionSet): BootstrapClip[] {
  const clips = new Map<string, BootstrapClip>();
  for (const rec of records as readonly LooseRecord[]) {
    const qid = rec.question_id, cid = rec.clip_id;
    if (qid === undefined || qid === null || cid === undefined || cid === null) continue;
    const raw = rec.oracle_label !== undefined ? rec.oracle_label : rec.answer;
    if (raw === undefined || raw === null) continue;
    const q = typeof qid === 'string' ? questions.byId.get(qid) : undefined;
    if (!q) continue;
    const numeric = q.answerType === 'numeric';
    let oracle = pyStrip(pyLower(typeof raw === 'string' ? raw : pyStr(raw)));
    if (numeric) oracle = normalizeNumeric(oracle);
    const pred = parseAnswer(rec.model_answer === undefined ? '' : rec.model_answer, q.choices, q.answerType);
    if (pred === null) continue;
    const id = typeof cid === 'string' ? cid : pyStr(cid);
    let c = clips.get(id);
    if (!c) {
      const source = typeof rec.source === 'string' && rec.source ? rec.source : referenceSource(id);
      clips.set(id, (c = { id, source, answers: [] }));
    }
    c.answers.push({ question: q.id, oracle, pred });
  }
  return [...clips.values()];
}

/** A figure with its bootstrap interval. */
export interface Interval {
  value: number;
  lo: number;
  hi: number;
}

/**
 * The clips compiled for fast redraws: every (group, oracle class) is a slot; each clip lists its
 * slots' (answers, correct) counts; groups are the pool, each source and each question.
 */
class Compiled {
  readonly groups: { name: string; slots: Int32Array }[] = [];
  readonly clipSlots: Int32Array[] = [];
  readonly clipTotal: Int32Array[] = [];
  readonly clipCorrect: Int32Array[] = [];
  readonly nSlots: number;
  readonly rules: CompiledRules;
  readonly table: Int32Array;
  readonly sourceOf: Int32Array;
  readonly sources: string[];
  readonly questionIds: string[];

  constructor(readonly clips: readonly BootstrapClip[], questions: QuestionSet) {
    const labelIds = new Map<string, number>();
    const intern = (s: string): number => {
      let v = labelIds.get(s);
      if (v === undefined) labelIds.set(s, (v = labelIds.size));
      return v;
    };
    this.rules = compileRules(CONSISTENCY_RULES, intern);
    const width = this.rules.slots.size;
    this.table = new Int32Array(clips.length * width).fill(-1);
    this.sources = sortCodePoints(new Set(clips.map((c) => c.source)));
    const srcIdx = new Map(this.sources.map((s, i) => [s, i]));
    this.sourceOf = Int32Array.from(clips, (c) => srcIdx.get(c.source)!);
    const qSeen = new Set<string>();
    for (const c of clips) for (const a of c.answers) qSeen.add(a.question);
    this.questionIds = sortCodePoints(qSeen);

    // Class order per group, as the grader sums recalls: pooled and per source over the sorted
    // labels; per question over its choices (the grader's per-question labels), else sorted.
    const classesOf = (answers: Iterable<{ oracle: string }>): string[] => sortCodePoints(new Set([...answers].map((a) => a.oracle)));
    const all = clips.flatMap((c) => c.answers);
    const slotOf = new Map<string, number>();
    let nSlots = 0;
    const addGroup = (name: string, classes: readonly string[]): void => {
      const slots = new Int32Array(classes.length);
      classes.forEach((cls, k) => {
        slotOf.set(`${name}\0${cls}`, nSlots);
        slots[k] = nSlots++;
      });
      this.groups.push({ name, slots });
    };
    addGroup('pooled', classesOf(all));
    for (const s of this.sources) addGroup(`source\0${s}`, classesOf(clips.filter((c) => c.source === s).flatMap((c) => c.answers)));
    for (const q of this.questionIds) {
      const qa = all.filter((a) => a.question === q);
      const choices = questions.byId.get(q)?.choices;
      const present = new Set(qa.map((a) => a.oracle));
      addGroup(`question\0${q}`, choices ? choices.filter((c) => present.has(c)) : classesOf(qa));
    }
    this.nSlots = nSlots;

    clips.forEach((c, r) => {
      const counts = new Map<number, [number, number]>();
      const bump = (key: string, ok: boolean): void => {
        const s = slotOf.get(key);
        if (s === undefined) return; // an oracle label outside a question's choices: not a class there
        const e = counts.get(s) ?? [0, 0];
        e[0]++;
        if (ok) e[1]++;
        counts.set(s, e);
      };
      for (const a of c.answers) {
        const ok = a.oracle === a.pred;
        bump(`pooled\0${a.oracle}`, ok);
        bump(`source\0${c.source}\0${a.oracle}`, ok);
        bump(`question\0${a.question}\0${a.oracle}`, ok);
        // The script's clip_answers: the last answer per question wins.
        const slot = this.rules.slots.get(a.question);
        if (slot !== undefined) this.table[r * width + slot] = intern(a.pred);
      }
      const keys = [...counts.keys()];
      this.clipSlots.push(Int32Array.from(keys));
      this.clipTotal.push(Int32Array.from(keys, (k) => counts.get(k)![0]));
      this.clipCorrect.push(Int32Array.from(keys, (k) => counts.get(k)![1]));
    });
  }

  /** Every group's balanced accuracy and every source's and the pool's WPCR over the clips `rows` (repeats allowed). */
  stats(rows: Int32Array, total: Int32Array, correct: Int32Array): Float64Array {
    total.fill(0);
    correct.fill(0);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      const sl = this.clipSlots[r], t = this.clipTotal[r], c = this.clipCorrect[r];
      for (let j = 0; j < sl.length; j++) {
        total[sl[j]] += t[j];
        correct[sl[j]] += c[j];
      }
    }
    const out = new Float64Array(this.groups.length + 1 + this.sources.length);
    this.groups.forEach((g, k) => {
      let sum = 0, m = 0;
      for (const s of g.slots) {
        if (total[s] > 0) {
          sum += correct[s] / total[s];
          m++;
        }
      }
      out[k] = m === 0 ? 0 : sum / m;
    });
    const base = this.groups.length;
    out[base] = consistencyFromTable(this.table, rows, this.rules).wemcr;
    this.sources.forEach((s, k) => {
      const sub = rows.filter((r) => this.sourceOf[r] === k);
      out[base + 1 + k] = sub.length ? consistencyFromTable(this.table, sub, this.rules).wemcr : 0;
    });
    return out;
  }

  /** Names of `stats`' entries. */
  statNames(): string[] {
    return [...this.groups.map((g) => `bacc\0${g.name}`), 'wpcr\0pooled', ...this.sources.map((s) => `wpcr\0source\0${s}`)];
  }
}

/** The script's `percentile`: sorted draws, linear interpolation between the neighbours of p·(n−1). */
export function scriptPercentile(sorted: ArrayLike<number>, p: number): number {
  const idx = p * (sorted.length - 1);
  const lo = Math.trunc(idx);
  const hi = Math.min(lo + 1, sorted.length - 1);
  const frac = idx - lo;
  return sorted[lo] * (1 - frac) + sorted[hi] * frac;
}

function intervalOf(draws: Float64Array, value: number, alpha: number): Interval {
  const s = Float64Array.from(draws).sort();
  return { value, lo: scriptPercentile(s, alpha / 2), hi: scriptPercentile(s, 1 - alpha / 2) };
}

export interface BootstrapOptions {
  /** Draws (the script's `--n_bootstrap`). */
  n: number;
  /** `random.Random(seed)`; ignored when `rng` is given. */
  seed?: number;
  /** A generator shared across calls, as the script shares one over its files in sorted order. */
  rng?: PyRandom;
  /** 0.05 → 95% intervals. */
  alpha?: number;
}

export interface GroupInterval {
  balanced_acc: number;
  balanced_acc_ci_lo: number;
  balanced_acc_ci_hi: number;
  clips: number;
  answers: number;
}

/** `grade --json`'s `bootstrap` block: the script's field names for the pool, then per source and question. */
export interface BootstrapSummary extends GroupInterval {
  wpcr: number;
  wpcr_ci_lo: number;
  wpcr_ci_hi: number;
  n: number;
  seed: number | null;
  confidence: number;
  per_source: Record<string, GroupInterval & { wpcr: number; wpcr_ci_lo: number; wpcr_ci_hi: number }>;
  per_question: Record<string, GroupInterval>;
}

function checkOptions(o: BootstrapOptions): void {
  if (!Number.isInteger(o.n) || o.n < 1) throw new RangeError(`bootstrap: n must be a positive integer, got ${o.n}`);
  const a = o.alpha ?? 0.05;
  if (!(a > 0 && a < 1)) throw new RangeError(`bootstrap: alpha must lie in (0, 1), got ${a}`);
}

/** The pool's balanced accuracy and WPCR intervals over `clips`, from `n` draws of `rng`. */
function pooledDraws(comp: Compiled, n: number, rng: PyRandom, alpha: number): { bacc: Interval; wpcr: Interval } {
  const total = new Int32Array(comp.nSlots), correct = new Int32Array(comp.nSlots);
  const point = comp.stats(Int32Array.from(comp.clips, (_, i) => i), total, correct);
  const wk = comp.groups.length; // the pool's WPCR follows the groups' balanced accuracies
  const bacc = new Float64Array(n), wpcr = new Float64Array(n);
  for (let b = 0; b < n; b++) {
    const s = comp.stats(rng.choiceIndices(comp.clips.length, comp.clips.length), total, correct);
    bacc[b] = s[0];
    wpcr[b] = s[wk];
  }
  return { bacc: intervalOf(bacc, point[0], alpha), wpcr: intervalOf(wpcr, point[wk], alpha) };
}

/** The bootstrap's seed when none is given: the reference script's (`--seed 42`). */
export const DEFAULT_SEED = 42;

/**
 * Clip-level bootstrap of balanced accuracy and WPCR: pooled (the script's figures), per source,
 * per question. One bootstrap per quantity: each group's interval comes from its own draws —
 * `random.Random(seed)` over that group's clips (a question's: the clips answering it, its answers
 * only) — so it is the interval the pool of exactly those records gets (`grade --bootstrap` of a
 * file holding them; the report's per-domain rows and leaderboard rows), whatever else is graded
 * beside it. A shared `rng` (the script's one generator over several files) draws the pool only;
 * the groups then use `random.Random(seed ?? DEFAULT_SEED)`.
 */
export function bootstrapIntervals(clips: readonly BootstrapClip[], questions: QuestionSet, o: BootstrapOptions): BootstrapSummary {
  checkOptions(o);
  const alpha = o.alpha ?? 0.05;
  const seed = o.rng && o.seed === undefined ? null : (o.seed ?? DEFAULT_SEED);
  const rng = o.rng ?? new PyRandom(seed!);
  // A shared generator is the pool's alone (the script's draws over several files stay its own).
  const groupRng = (): PyRandom => new PyRandom(o.seed ?? DEFAULT_SEED);
  const comp = new Compiled(clips, questions);
  // Point values from the whole set (each question's classes in its choices' order, as the grader sums them).
  const total = new Int32Array(comp.nSlots), correct = new Int32Array(comp.nSlots);
  const point = comp.stats(Int32Array.from(clips, (_, i) => i), total, correct);
  const pointOf = new Map(comp.statNames().map((nm, k) => [nm, point[k]]));
  const pool = pooledDraws(comp, o.n, rng, alpha);
  const r4 = (x: number): number => pyRound(x, 4);
  const group = (value: number, iv: Interval, nClips: number, nAnswers: number): GroupInterval =>
    ({ balanced_acc: r4(value), balanced_acc_ci_lo: r4(iv.lo), balanced_acc_ci_hi: r4(iv.hi), clips: nClips, answers: nAnswers });
  const wp = (value: number, iv: Interval) => ({ wpcr: r4(value), wpcr_ci_lo: r4(iv.lo), wpcr_ci_hi: r4(iv.hi) });
  const nAnswers = (cs: readonly BootstrapClip[]): number => cs.reduce((k, c) => k + c.answers.length, 0);
  const per_source: BootstrapSummary['per_source'] = {};
  for (const s of comp.sources) {
    const sub = clips.filter((c) => c.source === s);
    const d = pooledDraws(new Compiled(sub, questions), o.n, groupRng(), alpha);
    per_source[s] = { ...group(pointOf.get(`bacc\0source\0${s}`)!, d.bacc, sub.length, nAnswers(sub)), ...wp(pointOf.get(`wpcr\0source\0${s}`)!, d.wpcr) };
  }
  const per_question: BootstrapSummary['per_question'] = {};
  for (const q of comp.questionIds) {
    const sub = clips.flatMap((c) => {
      const answers = c.answers.filter((a) => a.question === q);
      return answers.length ? [{ ...c, answers }] : [];
    });
    const d = pooledDraws(new Compiled(sub, questions), o.n, groupRng(), alpha);
    per_question[q] = group(pointOf.get(`bacc\0question\0${q}`)!, d.bacc, sub.length, nAnswers(sub));
  }
  return {
    ...group(pool.bacc.value, pool.bacc, clips.length, nAnswers(clips)),
    ...wp(pool.wpcr.value, pool.wpcr),
    n: o.n,
    seed,
    confidence: 1 - alpha,
    per_source,
    per_question,
  };
}

/** A difference `a − b` of one figure, with its bootstrap interval and a two-sided p-value for "no difference". */
export interface Difference {
  a: string;
  b: string;
  metric: 'balanced_acc' | 'wpcr';
  /** Paired: both sides drawn on the same clips (their common clips); else each side resampled on its own. */
  paired: boolean;
  clips: number;
  diff: number;
  ci_lo: number;
  ci_hi: number;
  /** 2·min(share of draws ≤ 0, share ≥ 0), at most 1. */
  p: number;
}

/**
 * The difference of balanced accuracy (or WPCR) between two sets of graded clips. When both hold
 * the same clip ids (two methods on one split, the two CARLA domains) the draws are paired: one
 * resample of the common clips serves both sides; otherwise (nuScenes vs CARLA) each side is
 * resampled on its own, from the same generator, and the draws subtracted.
 */
export function bootstrapDifference(
  a: { name: string; clips: readonly BootstrapClip[] },
  b: { name: string; clips: readonly BootstrapClip[] },
  questions: QuestionSet,
  o: BootstrapOptions & { metric?: 'balanced_acc' | 'wpcr' },
): Difference {
  checkOptions(o);
  const alpha = o.alpha ?? 0.05;
  const metric = o.metric ?? 'balanced_acc';
  const rng = o.rng ?? new PyRandom(o.seed ?? DEFAULT_SEED);
  const idsA = new Set(a.clips.map((c) => c.id)), idsB = new Set(b.clips.map((c) => c.id));
  const paired = idsA.size === idsB.size && [...idsA].every((id) => idsB.has(id));
  let ca = a.clips, cb = b.clips;
  if (paired) {
    const byId = new Map(b.clips.map((c) => [c.id, c]));
    cb = ca.map((c) => byId.get(c.id)!);
  }
  if (ca.length === 0 || cb.length === 0) throw new RangeError(`bootstrap: ${ca.length === 0 ? a.name : b.name} has no graded clips`);
  const ka = new Compiled(ca, questions), kb = new Compiled(cb, questions);
  const ta = new Int32Array(ka.nSlots), xa = new Int32Array(ka.nSlots), tb = new Int32Array(kb.nSlots), xb = new Int32Array(kb.nSlots);
  const pick = (comp: Compiled, s: Float64Array): number => (metric === 'balanced_acc' ? s[0] : s[comp.groups.length]);
  const value = (comp: Compiled, rows: Int32Array, t: Int32Array, x: Int32Array): number => pick(comp, comp.stats(rows, t, x));
  const diff = value(ka, Int32Array.from(ca, (_, i) => i), ta, xa) - value(kb, Int32Array.from(cb, (_, i) => i), tb, xb);
  const draws = new Float64Array(o.n);
  let le = 0, ge = 0;
  for (let i = 0; i < o.n; i++) {
    const ra = rng.choiceIndices(ca.length, ca.length);
    const rb = paired ? ra : rng.choiceIndices(cb.length, cb.length);
    const d = value(ka, ra, ta, xa) - value(kb, rb, tb, xb);
    draws[i] = d;
    if (d <= 0) le++;
    if (d >= 0) ge++;
  }
  const iv = intervalOf(draws, diff, alpha);
  return {
    a: a.name,
    b: b.name,
    metric,
    paired,
    clips: paired ? ca.length : ca.length + cb.length,
    diff,
    ci_lo: iv.lo,
    ci_hi: iv.hi,
    p: Math.min(1, (2 * Math.min(le, ge)) / o.n),
  };
}
