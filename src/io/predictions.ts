/**
 * io/predictions — reads a predictions JSONL file (the reference's `results/*.jsonl`: one record a
 * line, as its evaluators write them) into records for `grade/evaluate`.
 *
 * Record fields: `clip_id` (string), `question_id` (string), `model_answer` (string, or null for
 * "no answer"), `oracle_label` or else `answer` (string, number or boolean; numbers become the
 * text Python's `str()` gives them, so `1.0` stays "1.0" as in the reference), optional `category`
 * (string, default "unknown"), optional `source` (non-empty string: overrides the per-source bucket),
 * optional `qa_id`; other keys are ignored. Blank lines are skipped; lines split as Python's text
 * mode does (\n, \r\n, \r). Every error is an `InputError` whose message names `file:line` and the
 * field. Unknown question ids are not an error here: the grader counts them as unparsed.
 *
 * `asReference` (the grader): read as the reference's scripts/evaluate.py reads, so a file it grades
 * is graded. A line that is not JSON is skipped (`skipped`); Python's NaN/Infinity tokens are
 * numbers; a record without clip_id or question_id, without an oracle label (null or missing), or
 * without model_answer is kept as it is, for the grader to count as unparsed (`unparsed` names
 * why). What the reference itself stops on (a line that is not an object, a model_answer that is a
 * number or NaN) is still an error.
 */
import { readInputText } from './safety.js';
import { InputError } from '../core/errors.js';
import { pyNumberTokenStr, pyStrip } from '../core/pystring.js';
import { oracleText, type Prediction } from '../core/prediction.js';

export interface PredictionsFile {
  path: string;
  records: Prediction[];
  /** 1-based line number of each record. */
  lines: number[];
  /** `asReference`: records kept that the reference counts as unparsed, and why (1-based lines). */
  unparsed: { line: number; reason: string }[];
  /** `asReference`: lines skipped as the reference skips them (not JSON). */
  skipped: { line: number; reason: string }[];
}

export interface ReadOptions {
  /** Read as the reference's evaluate.py does (see the module comment). */
  asReference?: boolean;
}

/** Reads and validates a predictions JSONL file. */
export function readPredictions(path: string, opts: ReadOptions = {}): PredictionsFile {
  const text = readInputText(path, 'predictions JSONL file');
  return parsePredictionsJsonl(text, path, opts);
}

const LINE_SPLIT = /\r\n|\r|\n/;

/** Parses predictions JSONL text; `file` names the source in error messages. */
export function parsePredictionsJsonl(text: string, file = '<predictions>', opts: ReadOptions = {}): PredictionsFile {
  const records: Prediction[] = [];
  const lines: number[] = [];
  const unparsed: PredictionsFile['unparsed'] = [];
  const skipped: PredictionsFile['skipped'] = [];
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const raw = src.includes('\r') ? src.split(LINE_SPLIT) : src.split('\n');
  for (let i = 0; i < raw.length; i++) {
    const line = pyStrip(raw[i]);
    if (!line) continue;
    const where = `${file}:${i + 1}`;
    if (!opts.asReference) {
      records.push(predictionFromJson(line, where));
      lines.push(i + 1);
      continue;
    }
    const r = referenceRecord(line, where);
    if ('skip' in r) {
      skipped.push({ line: i + 1, reason: r.skip });
      continue;
    }
    records.push(r.record);
    lines.push(i + 1);
    if (r.unparsed) unparsed.push({ line: i + 1, reason: r.unparsed });
  }
  return { path: file, records, lines, unparsed, skipped };
}

/**
 * One line as the reference's evaluate.py takes it: `json.loads` (NaN/Infinity allowed), kept
 * loose where the grader counts the record as unparsed; `unparsed` says why.
 */
function referenceRecord(line: string, where: string): { skip: string } | { record: Prediction; unparsed?: string } {
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch (e) {
    rec = parsePyJson(line);
    if (rec === undefined) return { skip: `not JSON (${firstMessage(e)})` };
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
    throw new InputError(`${where}: expected a JSON object with clip_id, question_id, model_answer, oracle_label (the reference grader stops here too)`);
  }
  const r = rec as Record<string, unknown>;
  const reasons: string[] = [];
  const out = { ...r } as Record<string, unknown>;
  for (const k of ['clip_id', 'question_id'] as const) {
    const v = r[k];
    if (v === undefined || v === null) reasons.push(`no ${k}`);
    else if (typeof v !== 'string') {
      if (k === 'clip_id' || typeof v === 'object') throw new InputError(`${where}: field '${k}' must be a string, got ${describe(v)}`);
      reasons.push(`question_id ${describe(v)} is not a string`);
    }
  }
  const ma = r.model_answer;
  if (ma === undefined) reasons.push('no model_answer');
  else if (ma !== null && typeof ma !== 'string') {
    // Python: `not model_answer` passes falsy values as unparsed; anything else reaches `.strip()` and fails.
    const falsy = ma === 0 || ma === false || (Array.isArray(ma) && ma.length === 0) || (typeof ma === 'object' && Object.keys(ma).length === 0);
    if (!falsy) throw new InputError(`${where}: field 'model_answer' must be a string or null, got ${describe(ma)} (the reference grader stops here too)`);
    reasons.push(`model_answer ${describe(ma)}`);
  }
  const oracleField = r.oracle_label !== undefined ? 'oracle_label' : 'answer';
  const ov = r[oracleField];
  delete out.answer;
  if (ov === undefined || ov === null) {
    reasons.push(ov === null ? `'${oracleField}' is null` : "no 'oracle_label' (or 'answer')");
    out.oracle_label = null;
  } else if (typeof ov === 'number') {
    out.oracle_label = Number.isNaN(ov) ? 'nan' : ov === Infinity ? 'inf' : ov === -Infinity ? '-inf' : pyNumberTokenStr(numberToken(line, oracleField) ?? String(ov));
  } else if (typeof ov === 'string' || typeof ov === 'boolean') out.oracle_label = oracleText(ov);
  else throw new InputError(`${where}: field '${oracleField}' must be a string, number or boolean, got ${describe(ov)}`);
  if (r.category !== undefined && typeof r.category !== 'string') {
    throw new InputError(`${where}: field 'category' must be a string, got ${describe(r.category)}`);
  }
  if (r.source !== undefined && r.source !== null && (typeof r.source !== 'string' || r.source === '')) {
    throw new InputError(`${where}: field 'source' must be a non-empty string, got ${describe(r.source)}`);
  }
  return { record: out as unknown as Prediction, unparsed: reasons.length > 0 ? reasons.join(', ') : undefined };
}

const firstMessage = (e: unknown): string => {
  const msg = (e as Error).message.split('\n')[0];
  return msg.length > 80 ? `${msg.slice(0, 77)}...` : msg;
};

/**
 * Python's `json.loads` of a line that JSON.parse refused because of bare NaN, Infinity or
 * -Infinity tokens (which Python's json writes and reads): those become numbers. undefined when the
 * line is not JSON even so.
 */
function parsePyJson(line: string): unknown {
  const MARK = '\u0000egogeo-nonfinite:';
  let s = '';
  let marked = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      const end = skipString(line, i);
      s += line.slice(i, end);
      i = end - 1;
      continue;
    }
    const m = /^(-?Infinity|NaN)/.exec(line.slice(i, i + 9));
    if (m && !/[A-Za-z0-9_.]/.test(line[i - 1] ?? '')) {
      s += JSON.stringify(MARK + m[1]);
      i += m[1].length - 1;
      marked = true;
      continue;
    }
    s += c;
  }
  if (!marked) return undefined;
  try {
    return JSON.parse(s, (_k, v) => (typeof v === 'string' && v.startsWith(MARK) ? Number(v.slice(MARK.length)) : v));
  } catch {
    return undefined;
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  const s = JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/** One JSON line → a validated prediction; `where` is "file:line". */
export function predictionFromJson(line: string, where: string): Prediction {
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch (e) {
    const msg = (e as Error).message.split('\n')[0];
    throw new InputError(`${where}: invalid JSON (${msg.length > 120 ? `${msg.slice(0, 117)}...` : msg})`);
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
    throw new InputError(`${where}: expected a JSON object with clip_id, question_id, model_answer, oracle_label`);
  }
  const r = rec as Record<string, unknown>;
  const str = (field: string): string => {
    const v = r[field];
    if (v === undefined) throw new InputError(`${where}: missing field '${field}'`);
    if (typeof v !== 'string') throw new InputError(`${where}: field '${field}' must be a string, got ${describe(v)}`);
    return v;
  };
  const clip_id = str('clip_id');
  const question_id = str('question_id');

  const ma = r.model_answer;
  if (ma === undefined) throw new InputError(`${where}: missing field 'model_answer'`);
  if (ma !== null && typeof ma !== 'string') {
    throw new InputError(`${where}: field 'model_answer' must be a string or null, got ${describe(ma)}`);
  }

  const oracleField = r.oracle_label !== undefined ? 'oracle_label' : 'answer';
  const ov = r[oracleField];
  if (ov === undefined) throw new InputError(`${where}: missing field 'oracle_label' (or 'answer')`);
  let oracle_label: string;
  if (typeof ov === 'number') oracle_label = pyNumberTokenStr(numberToken(line, oracleField) ?? String(ov));
  else if (typeof ov === 'string' || typeof ov === 'boolean') oracle_label = oracleText(ov)!;
  else throw new InputError(`${where}: field '${oracleField}' must be a string, number or boolean, got ${describe(ov)}`);

  const out: Prediction = { clip_id, question_id, oracle_label, model_answer: ma as string | null };
  if (r.qa_id !== undefined) out.qa_id = r.qa_id;
  if (r.category !== undefined) {
    if (typeof r.category !== 'string') {
      throw new InputError(`${where}: field 'category' must be a string, got ${describe(r.category)}`);
    }
    out.category = r.category;
  }
  if (r.source !== undefined && r.source !== null) {
    if (typeof r.source !== 'string' || r.source === '') {
      throw new InputError(`${where}: field 'source' must be a non-empty string, got ${describe(r.source)}`);
    }
    out.source = r.source;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The raw text of a top-level number (JSON.parse cannot tell 1 from 1.0; Python's json can)
// ---------------------------------------------------------------------------------------------

function skipWs(s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
    else break;
  }
  return i;
}

function skipString(s: string, i: number): number {
  // s[i] === '"'
  i++;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === 0x5c) i += 2;
    else if (c === 0x22) return i + 1;
    else i++;
  }
  return i;
}

function skipValue(s: string, i: number): number {
  const c = s[i];
  if (c === '"') return skipString(s, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    while (i < s.length) {
      const d = s[i];
      if (d === '"') {
        i = skipString(s, i);
        continue;
      }
      if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return i;
  }
  while (i < s.length && !',}] \t\n\r'.includes(s[i])) i++;
  return i;
}

/** The source text of the last top-level `key`'s value in a valid JSON object, or null. */
function numberToken(line: string, key: string): string | null {
  let found: string | null = null;
  let i = skipWs(line, 0);
  if (line[i] !== '{') return null;
  i = skipWs(line, i + 1);
  while (i < line.length && line[i] === '"') {
    const end = skipString(line, i);
    const k = JSON.parse(line.slice(i, end)) as string;
    i = skipWs(line, end);
    i = skipWs(line, i + 1); // ':'
    const vEnd = skipValue(line, i);
    if (k === key) found = line.slice(i, vEnd);
    i = skipWs(line, vEnd);
    if (line[i] === ',') i = skipWs(line, i + 1);
  }
  return found;
}
