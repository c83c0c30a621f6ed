/**
 * grade/ — the EgoDyn-Bench grader with exact parity to the published reference
 * (`evaluation/parsers.py` + `evaluation/metrics.py`): free-text answers → canonical labels
 * (`parse`), accuracy / balanced accuracy / macro F1 / confusion matrices grouped globally, for the
 * temporal subset, per category, question and source (`metrics`), and the 10 physics-consistency
 * rules → EMCR / WPCR (`consistency`; the grader's key `wemcr`). Pure computation, no I/O (predictions files are read by
 * io/predictions). May import: core/, oracle/questions.
 *
 * Main entry points: `evaluate(records, questions)` → the reference's metrics object;
 * `metricsToJson(metrics)` → the reference's JSON text; `parseAnswer(text, choices, answerType)`
 * and `parseAnswerFor(question, text)` → one parsed label or null; `bootstrapIntervals` and
 * `bootstrapDifference` → clip-level bootstrap intervals (the reference's scripts/bootstrap_confidence.py);
 * `coverageOf` / `evaluateAnsweredAll` → coverage and the figures with the unanswered counted as wrong.
 */
import type { Question } from '../oracle/questions.js';
import { parserFor } from './parse.js';

export * from './parse.js';
export * from '../core/pystring.js';
export * from './consistency.js';
export * from './metrics.js';
export * from './bootstrap.js';
export * from './coverage.js';
export * from './draws.js';

/** Parses one model answer for a question of a loaded `QuestionSet` (label or null). */
export function parseAnswerFor(question: Question, modelAnswer: unknown): string | null {
  return parserFor(question.choices, question.answerType).parse(modelAnswer);
}
