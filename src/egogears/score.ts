/**
 * egogears/score — EgoGears' (RunningBench's) published scoring, reproduced: the option order a
 * model sees (`shuffled_view`: `random.Random(question_id).shuffle` over the sorted letters), the
 * strict answer parser (`parse_answer`, `split_reasoning`), one question's result row (`evaluate`
 * in `unified_eval.py`: exact set, overlap = |P∩G| / max(|G|, 1), n_pred), the groups
 * (`question_groups`: overall, multi_video_531 for mixed_1487, one per unit when there are several)
 * and `summarize` (failed and missing questions count as wrong). Chance is score.py's `baselines`:
 * exact = mean of 1 / C(n_options, n_select); overlap = Σ n_select² / n_options / Σ n_select
 * (weighted by answer slots). Beyond the published code, labelled as such: the Jaccard index
 * |P∩G| / |P∪G| that the paper names, and groups by question_type or category. Pure; load.ts reads
 * the files. May import: core/, grade/ (code-point order).
 */
import { InputError } from '../core/errors.js';
import { compareCodePoints } from '../grade/metrics.js';
import { PyRandom } from '../core/pyrandom.js';

/** The published datasets' names (`unified_eval.py` DATASETS). */
export const DATASETS = ['single_698', 'single_567_human', 'mixed_1487'] as const;
export type Dataset = (typeof DATASETS)[number];
export const MULTI_UNITS = new Set(['cross_video', 'cross_recording', 'anonymous_multi_clip']);

export interface GearsQuestion {
  readonly id?: string;
  readonly review_id?: string;
  readonly unit?: unknown;
  readonly question_type?: unknown;
  readonly category?: unknown;
  readonly options: Readonly<Record<string, string>>;
  readonly answer: readonly string[];
  readonly [k: string]: unknown;
}

/** `question_id(q, dataset)`: `id` for the single-video sets, `review_id` otherwise. */
export function questionId(q: GearsQuestion, dataset: string): string {
  return (dataset.startsWith('single_') ? q.id : q.review_id) as string;
}

/** `shuffled_view(options, seed)`: shown letter → option text, and shown letter → original letter. */
export function shuffledView(options: Readonly<Record<string, string>>, seed: string | bigint | number): { shown: Record<string, string>; back: Record<string, string> } {
  const real = Object.keys(options).sort(compareCodePoints);
  const order = new PyRandom(seed).shuffle([...real]);
  const shown: Record<string, string> = {};
  const back: Record<string, string> = {};
  real.forEach((l, i) => {
    shown[l] = options[order[i]];
    back[l] = order[i];
  });
  return { shown, back };
}

/** Python truthiness of a JSON value. */
export function pyTruthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

/** `split_reasoning(raw)`: (reasoning, answer text) around the last `</think>`. */
export function splitReasoning(raw: string): [string | null, string] {
  const end = raw.lastIndexOf('</think>');
  if (end < 0) return [null, raw];
  let head = raw.slice(0, end);
  const answer = raw.slice(end + '</think>'.length);
  const open = head.indexOf('<think>');
  if (open >= 0) head = head.slice(open + '<think>'.length);
  const t = head.trim();
  return [t || null, answer];
}

/**
 * The JSON value that starts at `text[start]` (a `{`), as `json.JSONDecoder().raw_decode` finds it:
 * the shortest balanced prefix that parses. NaN/Infinity literals (which Python accepts) are not.
 */
function rawDecodeObject(text: string, start: number): unknown {
  let depth = 0;
  let inStr = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') inStr = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) {
        try {
          return JSON.parse(text.slice(start, i + 1));
        } catch {
          return undefined;
        }
      }
    }
  }
  return undefined;
}

/** Python's `repr` of a JSON value (str quoting as CPython chooses it; enough for error texts). */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(v);
  if (typeof v === 'string') {
    const q = v.includes("'") && !v.includes('"') ? '"' : "'";
    const body = v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
    return q + (q === "'" ? body.replace(/'/g, "\\'") : body) + q;
  }
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  return `{${Object.entries(v as object).map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
}

const ANSWER_ITEM = /^(?:option\s+)?\(?([A-Z])\)?[.):]?$/i;
const pyStripWs = (s: string): string => s.replace(/^[\s\x1c-\x1f\x85]+|[\s\x1c-\x1f\x85]+$/gu, '');

/** `parse_answer(raw, letters)`: sorted displayed letters, or an error text (strict: no free-text fallback). */
export function parseAnswer(raw: string | null | undefined, letters: readonly string[]): { letters: string[] | null; error: string | null } {
  const text = raw ?? '';
  let found: Record<string, unknown> | null = null;
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) {
    const obj = rawDecodeObject(text, i);
    if (obj !== null && typeof obj === 'object' && !Array.isArray(obj) && Object.prototype.hasOwnProperty.call(obj, 'answer')) found = obj as Record<string, unknown>;
  }
  if (found === null) return { letters: null, error: 'No JSON object with an "answer" key' };
  let answer = found.answer;
  if (typeof answer === 'string') answer = pyStripWs(answer).split(/\s*[,;/]\s*/);
  if (!Array.isArray(answer)) return { letters: null, error: `Answer is not a list: ${pyRepr(answer)}`.slice(0, 200) };
  const chosen = new Set<string>();
  for (const item of answer) {
    const m = typeof item === 'string' ? ANSWER_ITEM.exec(pyStripWs(item)) : null;
    if (!m) return { letters: null, error: `Unrecognized answer item: ${pyRepr(item)}`.slice(0, 200) };
    const letter = m[1].toUpperCase();
    if (!letters.includes(letter)) return { letters: null, error: `Answer letter ${letter} is not among the shown options` };
    chosen.add(letter);
  }
  if (chosen.size === 0) return { letters: null, error: 'Empty answer' };
  return { letters: [...chosen].sort(compareCodePoints), error: null };
}

/** One question's result, as `unified_eval.py` writes it (the fields scoring reads). */
export interface ResultRow {
  question_id: string;
  error?: unknown;
  exact?: unknown;
  overlap?: unknown;
  n_pred?: unknown;
  n_select?: unknown;
  n_options?: unknown;
  pred?: unknown;
  gold?: unknown;
  [k: string]: unknown;
}

/** The result row for a prediction given as original letters (`pred`): what `evaluate` computes after mapping back. */
export function resultFromLetters(q: GearsQuestion, qid: string, pred: readonly string[]): ResultRow {
  const prediction = [...new Set(pred)].sort(compareCodePoints);
  const gold = [...q.answer].sort(compareCodePoints);
  const g = new Set(gold);
  const inter = prediction.filter((x) => g.has(x)).length;
  return {
    question_id: qid,
    question_type: q.question_type,
    n_select: gold.length,
    n_options: Object.keys(q.options).length,
    pred: prediction,
    gold,
    exact: prediction.length === gold.length && prediction.every((x, i) => x === gold[i]),
    overlap: inter / Math.max(gold.length, 1),
    n_pred: prediction.length,
  };
}

/**
 * A published result row as far as scoring reads it: `exact` true/false (or 0/1), `overlap` in
 * [0, 1], `n_pred`/`n_select` counts; an impossible row ("5 of 1 exact", a negative overlap) is
 * one InputError naming the question and the field rather than a score above 100%.
 */
function checkedRow(r: ResultRow): ResultRow {
  if (pyTruthy(r.error)) return r;
  const bad = (field: string, want: string) => new InputError(`prediction ${r.question_id}: field '${field}' must be ${want}, got ${JSON.stringify(r[field])}`);
  if (!(r.exact === true || r.exact === false || r.exact === 0 || r.exact === 1)) throw bad('exact', 'true or false (or 0/1)');
  if (r.overlap !== undefined && !(typeof r.overlap === 'number' && r.overlap >= 0 && r.overlap <= 1)) throw bad('overlap', 'a number in [0, 1]');
  for (const f of ['n_pred', 'n_select', 'n_options'] as const) {
    if (r[f] !== undefined && r[f] !== null && !(Number.isInteger(r[f]) && (r[f] as number) >= 0)) throw bad(f, 'a non-negative integer');
  }
  return r;
}

/**
 * A prediction record → a result row. A record that already carries `exact` or `error` is a
 * published result row and is taken as it is; otherwise `pred` (original letters), `shown`
 * (displayed letters, mapped back through the question's shuffle) or `raw` (model text, parsed as
 * the published code parses it) is scored as `evaluate` scores it.
 */
export function resultRow(q: GearsQuestion, qid: string, rec: Record<string, unknown>): ResultRow {
  if ('exact' in rec || 'error' in rec) return checkedRow({ ...rec, question_id: qid });
  const { back } = shuffledView(q.options, qid);
  const letters = Object.keys(back).sort(compareCodePoints);
  const fail = (error: string): ResultRow => ({ question_id: qid, error });
  let displayed: string[];
  if (rec.pred !== undefined) {
    if (!Array.isArray(rec.pred) || rec.pred.some((x) => typeof x !== 'string')) return fail('pred is not a list of letters');
    const orig = rec.pred as string[];
    const bad = orig.find((x) => !Object.prototype.hasOwnProperty.call(q.options, x));
    if (bad !== undefined) return fail(`Answer letter ${bad} is not among the options`);
    if (orig.length === 0) return fail('Empty answer');
    return resultFromLetters(q, qid, orig);
  } else if (rec.shown !== undefined) {
    if (!Array.isArray(rec.shown) || rec.shown.some((x) => typeof x !== 'string')) return fail('shown is not a list of letters');
    const bad = (rec.shown as string[]).find((x) => !letters.includes(x));
    if (bad !== undefined) return fail(`Answer letter ${bad} is not among the shown options`);
    if (rec.shown.length === 0) return fail('Empty answer');
    displayed = rec.shown as string[];
  } else if (rec.raw !== undefined) {
    const raw = typeof rec.raw === 'string' ? rec.raw : '';
    if (raw.includes('<think>') && !raw.includes('</think>')) return fail('Unclosed thinking trace; final answer unavailable');
    const [, text] = splitReasoning(raw);
    const p = parseAnswer(text, letters);
    if (p.error) return fail(`No parseable final answer: ${p.error}`);
    displayed = p.letters!;
  } else {
    return fail('no pred, shown or raw');
  }
  return resultFromLetters(q, qid, displayed.filter((x) => x in back).map((x) => back[x]));
}

export interface GroupSummary {
  total: number;
  completed: number;
  failed: number;
  missing: number;
  exact: number;
  exact_pct: number;
  exact_completed_pct: number;
  overlap_pct: number;
  wellformed_pct: number;
  /** not in the published code: mean Jaccard |P∩G|/|P∪G| over every question (failed/missing = 0); null when a row lacks pred/gold */
  jaccard_pct: number | null;
  /** score.py's chance over the group's questions (exact: mean 1/C(n, k); overlap: Σk²/n / Σk), in percent */
  chance_exact_pct: number;
  chance_overlap_pct: number;
  /** the same over the completed rows only, as score.py computes it over the rows a model answered */
  chance_exact_completed_pct: number;
  chance_overlap_completed_pct: number;
}

function comb(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return Math.round(r);
}

const pct = (x: number, n: number): number => (n ? (100 * x) / n : 0.0);
/** Python's `sum` of bools/numbers (True = 1). */
const num = (v: unknown): number => (v === true ? 1 : v === false || v === null || v === undefined ? 0 : Number(v));

function chance(spec: { n_options: number; n_select: number }[]): [number, number] {
  if (spec.length === 0) return [0, 0];
  let ex = 0;
  let n2 = 0;
  let d = 0;
  for (const s of spec) {
    ex += 1.0 / comb(s.n_options, s.n_select);
    n2 += (s.n_select * s.n_select) / s.n_options;
    d += s.n_select;
  }
  // score.py: ex = Σ / len, ov = num / den; printed as 100 * value
  return [100 * (ex / spec.length), d ? 100 * (n2 / d) : 0];
}

const asSet = (v: unknown): Set<unknown> | null => (Array.isArray(v) ? new Set(v) : null);

/** `summarize(members, results, dataset)`, plus the labelled extras above. */
export function summarize(members: readonly GearsQuestion[], results: ReadonlyMap<string, ResultRow>, dataset: string): GroupSummary {
  const total = members.length;
  const valid: ResultRow[] = [];
  let failed = 0;
  for (const q of members) {
    const row = results.get(questionId(q, dataset));
    if (row === undefined) continue;
    if (!pyTruthy(row.error) && 'exact' in row) valid.push(row);
    else failed++;
  }
  let exact = 0;
  for (const r of valid) exact += num(r.exact);
  let overlap = 0;
  for (const r of valid) overlap += num(r.overlap);
  let wf = 0;
  for (const r of valid) wf += r.n_pred === r.n_select || (typeof r.n_pred === 'number' && r.n_pred === Number(r.n_select)) ? 1 : 0;
  let jac: number | null = 0;
  for (const r of valid) {
    const p = asSet(r.pred);
    const g = asSet(r.gold);
    if (!p || !g) {
      jac = null;
      break;
    }
    const inter = [...p].filter((x) => g.has(x)).length;
    const union = new Set([...p, ...g]).size;
    jac += union ? inter / union : 0;
  }
  const spec = (q: GearsQuestion) => ({ n_options: Object.keys(q.options).length, n_select: q.answer.length });
  const [ce, co] = chance(members.map(spec));
  const byId = new Map(members.map((q) => [questionId(q, dataset), q]));
  const [cce, cco] = chance(valid.map((r) => (typeof r.n_options === 'number' && typeof r.n_select === 'number' ? { n_options: r.n_options, n_select: r.n_select } : spec(byId.get(r.question_id)!))));
  return {
    total,
    completed: valid.length,
    failed,
    missing: total - valid.length - failed,
    exact,
    exact_pct: pct(exact, total),
    exact_completed_pct: pct(exact, valid.length),
    overlap_pct: pct(overlap, total),
    wellformed_pct: pct(wf, total),
    jaccard_pct: jac === null ? null : pct(jac, total),
    chance_exact_pct: ce,
    chance_overlap_pct: co,
    chance_exact_completed_pct: cce,
    chance_overlap_completed_pct: cco,
  };
}

/** `question_groups(questions, dataset)`, then (not published) one group per value of `by` when given. */
export function questionGroups(questions: readonly GearsQuestion[], dataset: string, by?: 'unit' | 'question_type' | 'category'): [string, GearsQuestion[]][] {
  const groups: [string, GearsQuestion[]][] = [['overall', [...questions]]];
  if (dataset === 'mixed_1487') groups.push(['multi_video_531', questions.filter((q) => MULTI_UNITS.has(q.unit as string))]);
  const units = [...new Set(questions.map((q) => q.unit).filter(pyTruthy).map(String))].sort(compareCodePoints);
  if (units.length > 1) for (const u of units) groups.push([u, questions.filter((q) => q.unit === u)]);
  if (by && by !== 'unit') {
    const vals = [...new Set(questions.map((q) => q[by]).filter(pyTruthy).map(String))].sort(compareCodePoints);
    for (const v of vals) groups.push([`${by}=${v}`, questions.filter((q) => String(q[by]) === v)]);
  }
  return groups;
}

export interface GearsScore {
  dataset: string;
  overall: GroupSummary;
  groups: Record<string, GroupSummary>;
}

/** Scores `results` (question id → latest row) against the question set, every group. */
export function scoreGears(questions: readonly GearsQuestion[], results: ReadonlyMap<string, ResultRow>, dataset: string, by?: 'unit' | 'question_type' | 'category'): GearsScore {
  const groups: Record<string, GroupSummary> = {};
  for (const [name, members] of questionGroups(questions, dataset, by)) groups[name] = summarize(members, results, dataset);
  return { dataset, overall: groups.overall, groups };
}

/** Python's `f"{x:.2f}"`: correctly rounded, an exact tie to the even hundredth (toFixed goes away from zero). */
export function f2(x: number): string {
  const s = x.toFixed(2);
  if (!Number.isFinite(x) || Math.abs(x) >= 1e15) return s;
  // The exact decimal expansion (a double below 1e15 has fewer than 100 significant digits).
  const d = Math.abs(x).toPrecision(100).replace(/0+$/, '');
  const dot = d.indexOf('.');
  if (dot < 0 || d.length - dot - 1 !== 3 || !d.endsWith('5')) return s;
  const truncated = d.slice(0, dot + 3);
  if (Number(truncated[truncated.length - 1]) % 2 !== 0) return s;
  return `${x < 0 ? '-' : ''}${truncated}`;
}

/** The published `score` printout (plus labelled extra lines). */
export function formatScore(s: GearsScore): string {
  const o = s.overall;
  const out = [`SCORE ${s.dataset} completed=${o.completed}/${o.total} failed=${o.failed} missing=${o.missing}`];
  if (o.missing) out.push(`  PARTIAL RUN: ${o.missing} questions have no result; this is not a full-run score`);
  for (const [name, g] of Object.entries(s.groups)) {
    if (!g.total) continue;
    out.push(
      `  ${name}: exact=${g.exact}/${g.total} (${f2(g.exact_pct)}%) [completed-only ${g.exact}/${g.completed} (${f2(g.exact_completed_pct)}%)] ` +
        `overlap=${f2(g.overlap_pct)}% wellformed=${f2(g.wellformed_pct)}% failed=${g.failed} missing=${g.missing}`,
    );
  }
  out.push('', 'beside the published lines (not printed by unified_eval.py):');
  for (const [name, g] of Object.entries(s.groups)) {
    if (!g.total) continue;
    out.push(
      `  ${name}: chance exact=${f2(g.chance_exact_pct)}% overlap=${f2(g.chance_overlap_pct)}% (score.py's baselines over the group's questions; ` +
        `over the completed ones ${f2(g.chance_exact_completed_pct)}% / ${f2(g.chance_overlap_completed_pct)}%) ` +
        `jaccard=${g.jaccard_pct === null ? 'n/a (rows without pred/gold)' : `${f2(g.jaccard_pct)}%`}`,
    );
  }
  return out.join('\n');
}
