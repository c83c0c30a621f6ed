/**
 * The one config loader for question files (the reference's `questions_template.yaml` format):
 * parses YAML, validates every question, compiles its rule, and optionally scales thresholds.
 */
import { readInputText } from '../io/safety.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { InputError } from '../core/errors.js';
import { familyOf } from './families/index.js';
import { type Labeler, type Params, ParamReader, scaleParams } from './rules.js';

export interface Question {
  id: string;
  category: string;
  answerType: string;
  /** Lower-cased choices, as the grader compares them; null for numeric questions. */
  choices: string[] | null;
  temporal: boolean;
  /** The question text with `{param}` placeholders filled in, as the reference's QA generator does. */
  text: string;
  /** The choices as written in the file (the QA records keep their case). */
  rawChoices: string[] | null;
  units: string | null;
  metadata: Record<string, unknown> | null;
  ruleName: string;
  params: Params;
  label: Labeler;
}

export interface QuestionSet {
  source: string;
  /** The file as parsed (plain data): pool tasks carry it, so workers compile it without a YAML parser. */
  document: unknown;
  questions: Question[];
  byId: Map<string, Question>;
  /** The threshold scale these rules were compiled with (1 = as published). */
  scale: number;
  /** The file's `defaults`: label source and whether QA records carry evidence. */
  labelSource: string;
  includeEvidence: boolean;
}

/** The question file shipped with egogeo: the published thresholds of EgoDyn-Bench. */
export const DEFAULT_QUESTIONS_PATH = fileURLToPath(new URL('../../config/questions.yaml', import.meta.url));

const cache = new Map<string, QuestionSet>();
// Loaded on first use: pool workers (given the parsed document) never load a YAML parser.
const requireCjs = createRequire(import.meta.url);

/**
 * The shipped question file parsed at build time (`npm run build` writes it beside the compiled
 * loader: scripts/parse-questions.mjs), so a run of the default questions loads no YAML parser:
 * js-yaml's import and first parse were ~25 ms of every process's start (a KITTI sequence's 5
 * windows take ~0.5 s). Used only for text whose SHA-256 it names; anything else is parsed.
 */
export interface ParsedQuestions {
  sha256: string;
  document: unknown;
}
// Named from dist/'s parent of oracle/, so the bundle (dist/bundle/) finds the same file.
export const PARSED_QUESTIONS_URL = new URL('../oracle/questions.parsed.json', import.meta.url);
let parsedDefault: ParsedQuestions | null | undefined;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** `text` as YAML, as `questionsFromText` parses it (InputError naming `path` when it is not YAML). */
export function parseQuestionsYaml(text: string, path: string): unknown {
  try {
    return (requireCjs('js-yaml') as typeof import('js-yaml')).load(text);
  } catch (e) {
    throw new InputError(`${path}: invalid YAML (${(e as Error).message.split('\n')[0]})`);
  }
}

/** What the build stores for `text`: its hash and its parse, or null where JSON cannot hold the parse as it is (e.g. .inf, dates). */
export function parsedQuestions(text: string, path: string): ParsedQuestions | null {
  const document = parseQuestionsYaml(text, path);
  return isDeepStrictEqual(JSON.parse(JSON.stringify(document)), document) ? { sha256: sha256(text), document } : null;
}

/** The build's parse of `text`, when it is the text the build parsed. */
function prebuilt(text: string): unknown {
  if (parsedDefault === undefined) {
    try {
      parsedDefault = JSON.parse(readFileSync(PARSED_QUESTIONS_URL, 'utf8')) as ParsedQuestions;
    } catch {
      parsedDefault = null; // not built (tests run the sources) or unreadable: parse the YAML
    }
  }
  return parsedDefault && parsedDefault.sha256 === sha256(text) ? structuredClone(parsedDefault.document) : undefined;
}

export function loadQuestions(path = DEFAULT_QUESTIONS_PATH, scale = 1): QuestionSet {
  return questionsFromText(readInputText(path, 'question file (YAML)', 16 << 20), path, scale);
}

/** A question file's text (read by the caller, e.g. to hash the same bytes), parsed and compiled once per content and scale. */
export function questionsFromText(text: string, path: string, scale = 1): QuestionSet {
  const key = `${path}\0${scale}\0${text}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const doc = prebuilt(text) ?? parseQuestionsYaml(text, path);
  const set = compileQuestions(doc, path, scale);
  cache.set(key, set);
  return set;
}

/** compileQuestions, once per source and scale (a worker compiles each task's document once). */
export function questionsFromDocument(doc: unknown, source: string, scale = 1): QuestionSet {
  const key = `${source}\0${scale}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const set = compileQuestions(doc, source, scale);
  cache.set(key, set);
  return set;
}

export function compileQuestions(doc: unknown, source: string, scale = 1): QuestionSet {
  if (!Number.isFinite(scale) || scale <= 0) throw new InputError(`--scale must be a positive number, got ${scale}`);
  const list = (doc as { questions?: unknown })?.questions;
  if (!Array.isArray(list) || list.length === 0) throw new InputError(`${source}: expected a non-empty 'questions' list`);
  const questions: Question[] = [];
  const byId = new Map<string, Question>();
  list.forEach((raw, i) => {
    const q = raw as Record<string, unknown>;
    const where = `${source}: questions[${i}]`;
    const id = q?.question_id;
    if (typeof id !== 'string' || !id) throw new InputError(`${where}: missing 'question_id'`);
    if (byId.has(id)) throw new InputError(`${where}: duplicate question_id '${id}'`);
    const rule = q.rule as { name?: unknown; params?: unknown } | undefined;
    if (!rule || typeof rule.name !== 'string') throw new InputError(`${where} (${id}): missing 'rule.name'`);
    const family = familyOf(rule.name, `${where} (${id})`);
    const params0 = (rule.params ?? {}) as Params;
    const params = scale === 1 ? params0 : scaleParams(params0, scale);
    const answerType = typeof q.answer_type === 'string' ? q.answer_type : 'multiclass';
    const choices = Array.isArray(q.choices) ? q.choices.map((c) => String(c).toLowerCase()) : null;
    const meta = (q.metadata ?? {}) as Record<string, unknown>;
    let text = String(q.question_text ?? '');
    for (const [k, v] of Object.entries(params)) text = text.split(`{${k}}`).join(pyStr(v));
    const question: Question = {
      id,
      category: typeof q.category === 'string' ? q.category : 'unknown',
      answerType,
      choices,
      temporal: meta.temporal === true,
      text,
      rawChoices: Array.isArray(q.choices) ? q.choices.map(String) : null,
      units: typeof q.units === 'string' ? q.units : null,
      metadata: q.metadata && typeof q.metadata === 'object' ? (q.metadata as Record<string, unknown>) : null,
      ruleName: rule.name,
      params,
      label: family.label(new ParamReader(params, `${where} (${id}) rule ${rule.name}`)),
    };
    questions.push(question);
    byId.set(id, question);
  });
  const defaults = ((doc as { defaults?: Record<string, unknown> }).defaults ?? {}) as Record<string, unknown>;
  return {
    source,
    document: doc,
    questions,
    byId,
    scale,
    labelSource: typeof defaults.label_source === 'string' ? defaults.label_source : 'sensor_rule',
    includeEvidence: defaults.include_evidence !== false,
  };
}

/** Python's str() for the scalars a question template substitutes. */
function pyStr(v: unknown): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null || v === undefined) return 'None';
  return String(v);
}
