/**
 * egogears/load — reads EgoGears question files (JSONL: `{id | review_id, unit, question_type,
 * options{letter: text}, answer[letters], …}`) and prediction / result files (JSONL keyed by
 * `question_id`, else `id` / `review_id`; the last line of a question wins, as `load_results` keeps
 * it). Errors are one line naming file, line and field. May import: core/, io/, datasets/benchmark (its JSONL reader).
 */
import { InputError } from '../core/errors.js';
import { readJsonlRecords } from '../datasets/benchmark.js';
import type { Dataset, GearsQuestion } from './score.js';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface QuestionFile {
  path: string;
  dataset: string;
  questions: GearsQuestion[];
}

/**
 * A question file. The dataset (which id field the published code reads, and whether the
 * multi_video_531 group exists) is `dataset` when given, else `mixed_1487` when the questions carry
 * `review_id`, else `single_567_human`.
 */
export function loadQuestionFile(path: string, dataset?: Dataset): QuestionFile {
  const rows = readJsonlRecords(path);
  if (rows.length === 0) throw new InputError(`${path}: no questions`);
  const ds = dataset ?? (typeof rows[0].rec.review_id === 'string' ? 'mixed_1487' : 'single_567_human');
  const idField = ds.startsWith('single_') ? 'id' : 'review_id';
  const seen = new Set<string>();
  const questions = rows.map(({ line, rec }) => {
    const id = rec[idField];
    if (typeof id !== 'string') throw new InputError(`${path}:${line}: no string "${idField}" (the ${ds} questions are keyed by it)`);
    if (seen.has(id)) throw new InputError(`${path}:${line}: duplicate question id ${id}`);
    seen.add(id);
    if (!isObj(rec.options) || Object.keys(rec.options).length === 0) throw new InputError(`${path}:${line}: "options" is not an object of letter → text`);
    if (!Array.isArray(rec.answer) || rec.answer.length === 0 || rec.answer.some((a) => typeof a !== 'string' || !(a in (rec.options as object)))) {
      throw new InputError(`${path}:${line}: "answer" is not a non-empty list of option letters`);
    }
    return rec as unknown as GearsQuestion;
  });
  return { path, dataset: ds, questions };
}

/** Prediction or result rows: question id → the last row given for it. */
export function loadPredictions(path: string): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const { line, rec } of readJsonlRecords(path)) {
    const id = rec.question_id ?? rec.id ?? rec.review_id;
    if (typeof id !== 'string') throw new InputError(`${path}:${line}: no string "question_id" (or "id" / "review_id")`);
    out.set(id, rec);
  }
  return out;
}
