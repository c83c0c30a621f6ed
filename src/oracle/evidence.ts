/**
 * What each rule saw when it labelled a clip: the reference rules' evidence dicts
 * (`labeling_rules.py`, same keys in the same order), which the benchmark stores in `qa.jsonl`.
 * Computed on demand from the same clip data the labelers read (each family's `evidence`,
 * families/); the labelers themselves stay lean for throughput.
 */
import { familyOf } from './families/index.js';
import type { Question } from './questions.js';
import type { ClipData } from './rules.js';

/** The reference rule's evidence dict for one question. */
export function evidenceFor(q: Question, c: ClipData): Record<string, unknown> | null {
  return familyOf(q.ruleName, `question '${q.id}'`).evidence(q.params, c);
}
