/**
 * grade/metrics — the reference grader's metrics (`evaluation/metrics.py` of EgoDyn-Bench) with
 * bit-identical results: accuracy, balanced accuracy (mean recall over classes with support),
 * macro F1, confusion matrices, grouped globally, for the temporal subset, per category, per
 * question and per source, plus the consistency rules and parsable coverage.
 *
 * `evaluate` parses every answer once and counts (oracle, prediction) pairs per (question,
 * category, source) cell; every group's metrics come from those counts, so the cost is one pass
 * over the records plus work proportional to the number of distinct pairs, not classes × records.
 * Sums run in the reference's order so that `round(x, 4)` sees the same doubles.
 */
import { pyRound } from '../core/numeric.js';
import type { Question, QuestionSet } from '../oracle/questions.js';
import {
  CONSISTENCY_RULES,
  compileRules,
  type CompiledRules,
  consistencyFromTable,
  type ConsistencyMetrics,
} from './consistency.js';
import { type Prediction, referenceSource } from '../core/prediction.js';
import { isPyBlank, pyFloatRepr, pyLower, pyStr, pyStrip } from '../core/pystring.js';
import { AnswerParser, normalizeNumeric } from './parse.js';

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

/**
 * A prediction record (core/prediction.ts) as the reference reads it: a JSON object whose fields
 * may be missing or of any type (a library caller may pass what `JSON.parse` gave). `oracle_label`
 * wins over `answer` when present; `category` defaults to "unknown"; `model_answer` to "". `source`
 * (not in the reference) overrides the per-source bucket, which otherwise is the reference's rule
 * (`referenceSource`). Internal: the grader's functions take `Prediction` records.
 */
export type LooseRecord = { readonly [K in keyof Prediction | 'answer']?: unknown };

export interface GroupMetrics {
  accuracy: number;
  balanced_acc: number;
  macro_f1: number;
  n: number;
}

export interface ConfusionMatrix {
  labels: string[];
  matrix: number[][];
}

export interface QuestionMetrics extends GroupMetrics {
  confusion_matrix: ConfusionMatrix;
}

export interface SourceMetrics extends GroupMetrics {
  consistency: ConsistencyMetrics;
}

/**
 * The reference's `evaluate()` output, same keys in the same order. The three per-* maps are
 * sorted by code point; JavaScript objects list integer-like keys first whatever their insertion
 * order, so use `metricsToJson` (which re-sorts them) to write the reference's exact JSON.
 */
export interface GradeMetrics {
  n_total: number;
  n_parsed: number;
  parsable_coverage: number;
  global: GroupMetrics;
  temporal: GroupMetrics;
  per_category: Record<string, GroupMetrics>;
  per_question: Record<string, QuestionMetrics>;
  consistency: ConsistencyMetrics;
  per_source: Record<string, SourceMetrics>;
}

// ---------------------------------------------------------------------------------------------
// Python-compatible ordering
// ---------------------------------------------------------------------------------------------

/** Python's string order (code points), unlike JavaScript's default UTF-16 order. */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length - b.length;
  // Step back to the start of a surrogate pair so both sides decode whole code points.
  if (i > 0) {
    const p = a.charCodeAt(i - 1);
    if (p >= 0xd800 && p <= 0xdbff) i--;
  }
  return (a.codePointAt(i) as number) - (b.codePointAt(i) as number);
}

/** `sorted(xs)` of Python strings. */
export function sortCodePoints(xs: Iterable<string>): string[] {
  return [...xs].sort(compareCodePoints);
}

// ---------------------------------------------------------------------------------------------
// Pair counts → metrics
// ---------------------------------------------------------------------------------------------

/** Counts of (oracle, prediction) label pairs; labels are interned ids into `strs`. */
class PairCounts {
  /** key = oracle * stride + pred. */
  readonly counts = new Map<number, number>();
  constructor(readonly stride: number) {}
  add(o: number, p: number, c: number): void {
    const k = o * this.stride + p;
    this.counts.set(k, (this.counts.get(k) ?? 0) + c);
  }
  merge(other: PairCounts): void {
    for (const [k, c] of other.counts) this.counts.set(k, (this.counts.get(k) ?? 0) + c);
  }
}

/** Label strings ↔ dense ids. */
class Labels {
  readonly ids = new Map<string, number>();
  readonly strs: string[] = [];
  intern(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.strs.length;
      this.ids.set(s, id);
      this.strs.push(s);
    }
    return id;
  }
}

interface Tally {
  n: number;
  correct: number;
  /** per label id: oracle count (support), prediction count, true positives */
  support: Map<number, number>;
  predicted: Map<number, number>;
  tp: Map<number, number>;
}

function tally(pc: PairCounts): Tally {
  const t: Tally = { n: 0, correct: 0, support: new Map(), predicted: new Map(), tp: new Map() };
  const stride = pc.stride;
  for (const [k, c] of pc.counts) {
    if (c === 0) continue;
    const o = Math.floor(k / stride);
    const p = k - o * stride;
    t.n += c;
    t.support.set(o, (t.support.get(o) ?? 0) + c);
    t.predicted.set(p, (t.predicted.get(p) ?? 0) + c);
    if (o === p) {
      t.correct += c;
      t.tp.set(o, (t.tp.get(o) ?? 0) + c);
    }
  }
  return t;
}

/** Class ids for a group: the given labels (unknown strings → ids that match nothing), else the sorted union. */
function classIds(t: Tally, labels: readonly string[] | null, lab: Labels): number[] {
  if (labels !== null) return labels.map((s) => lab.ids.get(s) ?? -1);
  const seen = new Set<number>([...t.support.keys(), ...t.predicted.keys()]);
  return [...seen].sort((a, b) => compareCodePoints(lab.strs[a], lab.strs[b]));
}

function balancedFromTally(t: Tally, classes: readonly number[]): number {
  if (classes.length === 0) return 0.0;
  let sum = 0;
  let k = 0;
  for (const c of classes) {
    const sup = t.support.get(c) ?? 0;
    if (sup > 0) {
      sum += (t.tp.get(c) ?? 0) / sup;
      k++;
    }
  }
  return k === 0 ? 0.0 : sum / k;
}

function macroF1FromTally(t: Tally, classes: readonly number[]): number {
  if (classes.length === 0) return 0.0;
  let sum = 0;
  for (const c of classes) {
    const tp = t.tp.get(c) ?? 0;
    const pred = t.predicted.get(c) ?? 0; // tp + fp
    const sup = t.support.get(c) ?? 0; // tp + fn
    const precision = pred > 0 ? tp / pred : 0.0;
    const recall = sup > 0 ? tp / sup : 0.0;
    sum += precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0.0;
  }
  return sum / classes.length;
}

function groupFromTally(t: Tally, classes: readonly number[]): GroupMetrics {
  return {
    accuracy: pyRound(t.n > 0 ? t.correct / t.n : 0.0, 4),
    balanced_acc: pyRound(balancedFromTally(t, classes), 4),
    macro_f1: pyRound(macroF1FromTally(t, classes), 4),
    n: t.n,
  };
}

function confusionFromCounts(pc: PairCounts, labels: readonly string[] | null, t: Tally, lab: Labels): ConfusionMatrix {
  const names = labels !== null ? [...labels] : classIds(t, null, lab).map((id) => lab.strs[id]);
  const index = new Map<string, number>();
  names.forEach((s, i) => index.set(s, i)); // a repeated label keeps its last index, like the reference's dict
  const m = names.map(() => new Array<number>(names.length).fill(0));
  const byId = new Map<number, number>();
  for (const [s, i] of index) {
    const id = lab.ids.get(s);
    if (id !== undefined) byId.set(id, i);
  }
  for (const [k, c] of pc.counts) {
    const o = Math.floor(k / pc.stride);
    const i = byId.get(o);
    const j = byId.get(k - o * pc.stride);
    if (i !== undefined && j !== undefined) m[i][j] += c;
  }
  return { labels: names, matrix: m };
}

// ---------------------------------------------------------------------------------------------
// List-based metric functions (the reference's public helpers)
// ---------------------------------------------------------------------------------------------

function countLists(oracle: readonly string[], pred: readonly string[]): { pc: PairCounts; lab: Labels } {
  if (oracle.length !== pred.length) {
    throw new RangeError(`oracle and pred must have the same length, got ${oracle.length} vs ${pred.length}`);
  }
  const lab = new Labels();
  const ids = oracle.map((s) => lab.intern(s));
  const pids = pred.map((s) => lab.intern(s));
  const pc = new PairCounts(Math.max(1, lab.strs.length));
  for (let i = 0; i < ids.length; i++) pc.add(ids[i], pids[i], 1);
  return { pc, lab };
}

/** Fraction of exact matches (`semantic_accuracy`). */
export function semanticAccuracy(oracle: readonly string[], pred: readonly string[]): number {
  const { pc } = countLists(oracle, pred);
  const t = tally(pc);
  return t.n > 0 ? t.correct / t.n : 0.0;
}

/** Mean recall over the classes with support (`balanced_accuracy`); classes = labels or the sorted union. */
export function balancedAccuracy(oracle: readonly string[], pred: readonly string[], labels: readonly string[] | null = null): number {
  const { pc, lab } = countLists(oracle, pred);
  const t = tally(pc);
  return balancedFromTally(t, classIds(t, labels, lab));
}

/** Macro-averaged F1 (`macro_f1`); a class never predicted (or without support) scores 0. */
export function macroF1(oracle: readonly string[], pred: readonly string[], labels: readonly string[] | null = null): number {
  const { pc, lab } = countLists(oracle, pred);
  const t = tally(pc);
  return macroF1FromTally(t, classIds(t, labels, lab));
}

/** `confusion_matrix`: rows oracle, columns prediction, over labels or the sorted union. */
export function confusionMatrix(oracle: readonly string[], pred: readonly string[], labels: readonly string[] | null = null): ConfusionMatrix {
  const { pc, lab } = countLists(oracle, pred);
  return confusionFromCounts(pc, labels, tally(pc), lab);
}

/** `_compute_group_metrics`: accuracy, balanced_acc, macro_f1 (rounded to 4 places) and n. */
export function groupMetrics(oracle: readonly string[], pred: readonly string[], labels: readonly string[] | null = null): GroupMetrics {
  const { pc, lab } = countLists(oracle, pred);
  const t = tally(pc);
  return groupFromTally(t, classIds(t, labels, lab));
}

// ---------------------------------------------------------------------------------------------
// evaluate()
// ---------------------------------------------------------------------------------------------

/** A question compiled for grading. */
interface QState {
  readonly idx: number;
  readonly q: Question;
  readonly parser: AnswerParser;
  readonly numeric: boolean;
  /** label id of each choice */
  readonly choiceIds: Int32Array;
  /** per_question labels: the choices, or null (derived) when the question has none (numeric) */
  readonly labels: readonly string[] | null;
  readonly slot: number;
  /** memo per source id: the last category seen and its (question, category, source) cell */
  readonly memoCat: (string | undefined)[];
  readonly memoCell: number[];
  /** the question that followed this one last time (files list a clip's questions in a fixed order) */
  next: QState | undefined;
}

interface Cell {
  readonly q: QState;
  readonly cat: string;
  readonly src: string;
}

const parserCache = new WeakMap<Question, AnswerParser>();

function parserOf(q: Question): AnswerParser {
  let p = parserCache.get(q);
  if (!p) {
    p = new AnswerParser(q.choices, q.answerType);
    parserCache.set(q, p);
  }
  return p;
}

/** Python's json key for a non-string dict key (None → "null", True → "true", numbers as repr). */
function jsonKey(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return pyStr(v);
}


class GrowInt32 {
  data: Int32Array;
  constructor(n: number, readonly fill: number) {
    this.data = new Int32Array(Math.max(16, n)).fill(fill);
  }
  ensure(n: number): Int32Array {
    if (n > this.data.length) {
      const d = new Int32Array(Math.max(n, this.data.length * 2)).fill(this.fill);
      d.set(this.data);
      this.data = d;
    }
    return this.data;
  }
}

/**
 * The reference's `evaluate(records, question_config)`: parses every `model_answer` with the
 * question's choices and computes all metrics. Records without question_id or clip_id, without an
 * oracle label, with an unknown question_id, or with an unparsable answer are left out and counted
 * against `parsable_coverage`.
 */
export function evaluate(records: readonly Prediction[], questions: QuestionSet): GradeMetrics {
  const lab = new Labels();
  const rules = compileRules(CONSISTENCY_RULES, (s) => lab.intern(s));
  const parsed = parseRecords(records, questionStates(questions, lab, rules), lab, rules.slots.size);
  return metricsFrom(parsed, pairCounts(parsed, lab), lab, rules);
}

/** Each question's parser, choice label ids and consistency-rule slot. */
function questionStates(questions: QuestionSet, lab: Labels, rules: CompiledRules): Map<string, QState> {
  const qstates = new Map<string, QState>();
  questions.questions.forEach((q, idx) => {
    const parser = parserOf(q);
    const choices = q.choices;
    qstates.set(q.id, {
      idx,
      q,
      parser,
      numeric: q.answerType === 'numeric',
      choiceIds: Int32Array.from(choices ?? [], (c) => lab.intern(c)),
      // Python: `choices` is None for an empty or missing list
      labels: choices && choices.length > 0 ? choices : null,
      slot: rules.slots.get(q.id) ?? -1,
      memoCat: [],
      memoCell: [],
      next: undefined,
    });
  });

  return qstates;
}

/** The parsed records: per record its (question, category, source) cell, oracle and prediction label ids; the consistency tables per clip and per (source, clip). */
interface Parsed {
  n: number;
  nParsed: number;
  cells: Cell[];
  cellOf: Int32Array;
  oOf: Int32Array;
  pOf: Int32Array;
  nClips: number;
  clipTable: GrowInt32;
  srcIds: Map<string, number>;
  nSclips: number;
  sclipTable: GrowInt32;
  sclipSrc: GrowInt32;
}

/**
 * Parses each record as the reference does (ids, oracle label, answer against the question's
 * choices), leaving out what it leaves out; clips and sources in first-appearance order (the
 * reference's dict order). Memoised on the order files list records in (a clip's questions in a
 * fixed order, one source at a time).
 */
function parseRecords(records: readonly Prediction[], qstates: Map<string, QState>, lab: Labels, width: number): Parsed {
  const n = records.length;
  const cellOf = new Int32Array(n);
  const oOf = new Int32Array(n);
  const pOf = new Int32Array(n);
  let nParsed = 0;

  const cells: Cell[] = [];
  const cellIndex = new Map<string, number>();
  const oracleCache = new Map<string, number>();
  const numericOracleCache = new Map<string, number>();

  // Clips in first-appearance order (the reference's dict order), globally and per source.
  const clipIndex = new Map<string, number>();
  const clipTable = new GrowInt32(width * 1024, -1);
  let nClips = 0;
  const srcIds = new Map<string, number>();
  const srcNames: string[] = [];
  const sclipFirst = new GrowInt32(1024, -1); // clip → its first (source, clip) row
  const sclipFirstSrc = new GrowInt32(1024, -1);
  const sclipMore = new Map<string, number>(); // rarer: the same clip under another source
  const sclipTable = new GrowInt32(width * 1024, -1);
  const sclipSrc = new GrowInt32(1024, -1);
  let nSclips = 0;

  let prevQs: QState | undefined;
  let lastClip: string | undefined;
  let lastSourceField: unknown;
  let lastClipIdx = -1;
  let lastSrc = '';
  let lastSid = -1;
  let lastSclip = -1;

  for (let i = 0; i < n; i++) {
    const rec: LooseRecord = records[i];
    const qid = rec.question_id;
    const clip = rec.clip_id;
    if (qid === undefined || qid === null || clip === undefined || clip === null) continue;
    let oracleRaw = rec.oracle_label;
    if (oracleRaw === undefined) oracleRaw = rec.answer;
    if (oracleRaw === undefined || oracleRaw === null) continue;
    let qs: QState | undefined;
    if (typeof qid === 'string') {
      const guess = prevQs?.next;
      if (guess !== undefined && qid === guess.q.id) qs = guess;
      else {
        qs = qstates.get(qid);
        if (qs === undefined) continue;
        if (prevQs !== undefined) prevQs.next = qs;
      }
      prevQs = qs;
    } else continue;

    // prediction
    let p: number;
    const ans = rec.model_answer === undefined ? '' : rec.model_answer;
    if (typeof ans !== 'string' || isPyBlank(ans)) continue;
    if (qs.numeric) {
      const s = qs.parser.parse(ans);
      if (s === null) continue;
      p = lab.intern(s);
    } else {
      if (qs.choiceIds.length === 0) continue;
      const k = qs.parser.matchIndex(ans);
      if (k < 0) continue;
      p = qs.choiceIds[k];
    }

    // oracle: str(x).lower().strip(), then normalize_numeric for numeric questions
    let o: number;
    if (typeof oracleRaw === 'string') {
      const cache = qs.numeric ? numericOracleCache : oracleCache;
      const hit = cache.get(oracleRaw);
      if (hit !== undefined) o = hit;
      else {
        const s = pyStrip(pyLower(oracleRaw));
        o = lab.intern(qs.numeric ? normalizeNumeric(s) : s);
        cache.set(oracleRaw, o);
      }
    } else {
      const s = pyStrip(pyLower(pyStr(oracleRaw)));
      o = lab.intern(qs.numeric ? normalizeNumeric(s) : s);
    }

    // clip and source
    const clipKey = typeof clip === 'string' ? clip : pyStr(clip);
    const sourceField = rec.source;
    if (clipKey !== lastClip || sourceField !== lastSourceField) {
      let ci = clipIndex.get(clipKey);
      if (ci === undefined) {
        ci = nClips++;
        clipIndex.set(clipKey, ci);
        clipTable.ensure(nClips * width);
        sclipFirst.ensure(nClips);
        sclipFirstSrc.ensure(nClips);
      }
      const src = typeof sourceField === 'string' && sourceField !== '' ? sourceField : referenceSource(clipKey);
      let sid = srcIds.get(src);
      if (sid === undefined) {
        sid = srcNames.length;
        srcIds.set(src, sid);
        srcNames.push(src);
      }
      let sc = -1;
      if (sclipFirst.data[ci] < 0) {
        sclipFirst.data[ci] = sc = nSclips;
        sclipFirstSrc.data[ci] = sid;
      } else if (sclipFirstSrc.data[ci] === sid) {
        sc = sclipFirst.data[ci];
      } else {
        const key = `${ci}\u0000${sid}`;
        sc = sclipMore.get(key) ?? -1;
        if (sc < 0) sclipMore.set(key, (sc = nSclips));
      }
      if (sc === nSclips) {
        nSclips++;
        sclipTable.ensure(nSclips * width);
        sclipSrc.ensure(nSclips)[sc] = sid;
      }
      lastClip = clipKey;
      lastSourceField = sourceField;
      lastClipIdx = ci;
      lastSrc = src;
      lastSid = sid;
      lastSclip = sc;
    }

    // category → (question, category, source) cell
    const rawCat = rec.category;
    const cat = rawCat === undefined ? 'unknown' : typeof rawCat === 'string' ? rawCat : jsonKey(rawCat);
    let cell: number;
    if (cat === qs.memoCat[lastSid]) cell = qs.memoCell[lastSid];
    else {
      const key = `${qs.idx}\u0000${cat}\u0000${lastSrc}`;
      const hit = cellIndex.get(key);
      if (hit !== undefined) cell = hit;
      else {
        cell = cells.length;
        cells.push({ q: qs, cat, src: lastSrc });
        cellIndex.set(key, cell);
      }
      qs.memoCat[lastSid] = cat;
      qs.memoCell[lastSid] = cell;
    }

    cellOf[nParsed] = cell;
    oOf[nParsed] = o;
    pOf[nParsed] = p;
    nParsed++;
    if (qs.slot >= 0) {
      clipTable.data[lastClipIdx * width + qs.slot] = p;
      sclipTable.data[lastSclip * width + qs.slot] = p;
    }
  }

  return { n, nParsed, cells, cellOf, oOf, pOf, nClips, clipTable, srcIds, nSclips, sclipTable, sclipSrc };
}

/** (oracle, prediction) pair counts per cell. */
function pairCounts(r: Parsed, lab: Labels): PairCounts[] {
  const { cells, cellOf, oOf, pOf, nParsed } = r;
  const L = Math.max(1, lab.strs.length);
  const cellCounts = cells.map(() => new PairCounts(L));
  if (cells.length * L * L <= 1 << 22) {
    const dense = new Int32Array(cells.length * L * L);
    for (let i = 0; i < nParsed; i++) dense[(cellOf[i] * L + oOf[i]) * L + pOf[i]]++;
    const LL = L * L;
    for (let c = 0; c < cells.length; c++) {
      const base = c * LL;
      const pc = cellCounts[c];
      for (let k = 0; k < LL; k++) if (dense[base + k] !== 0) pc.counts.set(k, dense[base + k]);
    }
  } else {
    for (let i = 0; i < nParsed; i++) cellCounts[cellOf[i]].add(oOf[i], pOf[i], 1);
  }

  return cellCounts;
}

/** The cells' counts pooled into the reference's groups (global, temporal, per category, question, source) and their metrics. */
function metricsFrom(r: Parsed, cellCounts: PairCounts[], lab: Labels, rules: CompiledRules): GradeMetrics {
  const { n, nParsed, cells, nClips, clipTable, srcIds, nSclips, sclipTable, sclipSrc } = r;
  const L = Math.max(1, lab.strs.length);
  const global = new PairCounts(L);
  const temporal = new PairCounts(L);
  const byCat = new Map<string, PairCounts>();
  const byQ = new Map<QState, PairCounts>();
  const bySrc = new Map<string, PairCounts>();
  const into = <K>(m: Map<K, PairCounts>, k: K, pc: PairCounts): void => {
    let g = m.get(k);
    if (!g) {
      g = new PairCounts(L);
      m.set(k, g);
    }
    g.merge(pc);
  };
  cells.forEach((cell, c) => {
    const pc = cellCounts[c];
    global.merge(pc);
    if (cell.q.q.temporal) temporal.merge(pc);
    into(byCat, cell.cat, pc);
    into(byQ, cell.q, pc);
    into(bySrc, cell.src, pc);
  });

  const metricsOf = (pc: PairCounts, labels: readonly string[] | null): GroupMetrics => {
    const t = tally(pc);
    return groupFromTally(t, classIds(t, labels, lab));
  };

  const perCategory: Record<string, GroupMetrics> = {};
  for (const cat of sortCodePoints(byCat.keys())) perCategory[cat] = metricsOf(byCat.get(cat)!, null);

  const perQuestion: Record<string, QuestionMetrics> = {};
  const qById = new Map([...byQ.keys()].map((qs) => [qs.q.id, qs]));
  for (const id of sortCodePoints(qById.keys())) {
    const qs = qById.get(id)!;
    const pc = byQ.get(qs)!;
    const t = tally(pc);
    perQuestion[id] = {
      ...groupFromTally(t, classIds(t, qs.labels, lab)),
      confusion_matrix: confusionFromCounts(pc, qs.labels, t, lab),
    };
  }

  const allClips = Int32Array.from({ length: nClips }, (_, i) => i);
  const perSource: Record<string, SourceMetrics> = {};
  for (const src of sortCodePoints(bySrc.keys())) {
    const sid = srcIds.get(src)!;
    const rows: number[] = [];
    const ss = sclipSrc.data;
    for (let r = 0; r < nSclips; r++) if (ss[r] === sid) rows.push(r);
    perSource[src] = {
      ...metricsOf(bySrc.get(src)!, null),
      consistency: consistencyFromTable(sclipTable.data, rows, rules),
    };
  }

  return {
    n_total: n,
    n_parsed: nParsed,
    parsable_coverage: n > 0 ? pyRound(nParsed / n, 4) : 0.0,
    global: metricsOf(global, null),
    temporal: metricsOf(temporal, null),
    per_category: perCategory,
    per_question: perQuestion,
    consistency: consistencyFromTable(clipTable.data, allClips, rules),
    per_source: perSource,
  };
}

// ---------------------------------------------------------------------------------------------
// JSON exactly as the reference writes it (json.dumps(result, indent=2))
// ---------------------------------------------------------------------------------------------

/** Keys whose numbers the reference writes as Python floats (the rest are ints). */
const FLOAT_KEYS = new Set([
  'parsable_coverage', 'accuracy', 'balanced_acc', 'macro_f1', 'rate', 'wemcr', 'mean_compliance',
  'rule_coverage', 'consistency_coverage', 'mean_violations', 'compliance',
]);
/** Dicts the reference builds from `sorted(...)`: written in code-point order. */
const SORTED_KEYS = new Set(['per_category', 'per_question', 'per_source']);

/** A JSON string as Python's json module writes it with ensure_ascii (the default). */
export function pyJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c) {
      out += s[i];
      continue;
    }
    switch (c) {
      case 0x22: out += '\\"'; break;
      case 0x5c: out += '\\\\'; break;
      case 0x0a: out += '\\n'; break;
      case 0x0d: out += '\\r'; break;
      case 0x09: out += '\\t'; break;
      case 0x08: out += '\\b'; break;
      case 0x0c: out += '\\f'; break;
      default: out += `\\u${c.toString(16).padStart(4, '0')}`;
    }
  }
  return `${out}"`;
}

function dumpValue(v: unknown, key: string, indent: string, parts: string[]): void {
  if (typeof v === 'number') {
    parts.push(FLOAT_KEYS.has(key) ? pyFloatRepr(v) : Number.isInteger(v) ? String(v) : pyFloatRepr(v));
  } else if (typeof v === 'string') {
    parts.push(pyJsonString(v));
  } else if (typeof v === 'boolean') {
    parts.push(v ? 'true' : 'false');
  } else if (v === null || v === undefined) {
    parts.push('null');
  } else if (Array.isArray(v)) {
    if (v.length === 0) {
      parts.push('[]');
      return;
    }
    const inner = `${indent}  `;
    parts.push('[');
    v.forEach((x, i) => {
      parts.push(i === 0 ? `\n${inner}` : `,\n${inner}`);
      dumpValue(x, '', inner, parts);
    });
    parts.push(`\n${indent}]`);
  } else {
    const o = v as Record<string, unknown>;
    let keys = Object.keys(o);
    if (SORTED_KEYS.has(key)) keys = keys.sort(compareCodePoints);
    if (keys.length === 0) {
      parts.push('{}');
      return;
    }
    const inner = `${indent}  `;
    parts.push('{');
    keys.forEach((k, i) => {
      parts.push(`${i === 0 ? '\n' : ',\n'}${inner}${pyJsonString(k)}: `);
      dumpValue(o[k], k, inner, parts);
    });
    parts.push(`\n${indent}}`);
  }
}

/**
 * The metrics as the reference writes them (`json.dumps(result, indent=2)`): same key order
 * (per-* maps in code-point order), floats as Python's repr (`1.0`), non-ASCII escaped. No
 * trailing newline (the reference's `evaluate.py` adds one when it writes a file).
 */
export function metricsToJson(m: GradeMetrics & { bootstrap?: unknown }): string {
  const parts: string[] = [];
  dumpValue(m, '', '', parts);
  return parts.join('');
}
