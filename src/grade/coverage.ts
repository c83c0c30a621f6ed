/**
 * Coverage, and the grader's figures with the unanswered counted as wrong. The published grader
 * (`evaluation/metrics.py`) leaves a missing or unparsable answer out of every metric, so a run
 * that abstains on its hard clips scores higher than one that answers them. These figures stand
 * beside the grader's own (which stay exact, `evaluate`): coverage = answered / gradable, and the
 * metrics of the same records with each unanswered item given a wrong label, the figure abstaining
 * runs are ranked by. Gradable: a known question and an oracle label (what the grader counts in
 * `n_total` and could have scored). Pure.
 */
import type { Prediction } from '../core/prediction.js';
import { pyLower, pyStr, pyStrip } from '../core/pystring.js';
import type { QuestionSet } from '../oracle/questions.js';
import { evaluate, type GradeMetrics, type GroupMetrics, type LooseRecord } from './metrics.js';
import { normalizeNumeric, parseAnswer } from './parse.js';

/** Candidate wrong answers for a question without choices (numeric): the first that parses to another label. */
const NUMERIC_CANDIDATES = ['-1', '-2'];

/**
 * The records with every gradable but unanswered item (null, blank or unparsable answer) answered
 * with a label that is not its oracle label (the first such choice), so that the grader counts it
 * as wrong: for balanced accuracy and accuracy which wrong label does not matter (macro F1 does:
 * read it from the grader's own figures). Other records pass through unchanged.
 */
export function unansweredAsWrong(records: readonly Prediction[], questions: QuestionSet): Prediction[] {
  return records.map((r) => {
    const rec = r as LooseRecord;
    const q = typeof rec.question_id === 'string' ? questions.byId.get(rec.question_id) : undefined;
    const raw = rec.oracle_label !== undefined ? rec.oracle_label : rec.answer;
    if (!q || raw === undefined || raw === null || rec.clip_id === undefined || rec.clip_id === null) return r;
    if (parseAnswer(rec.model_answer === undefined ? '' : rec.model_answer, q.choices, q.answerType) !== null) return r;
    let oracle = pyStrip(pyLower(typeof raw === 'string' ? raw : pyStr(raw)));
    if (q.answerType === 'numeric') oracle = normalizeNumeric(oracle);
    const candidates = q.choices && q.choices.length > 0 ? q.choices : NUMERIC_CANDIDATES;
    const wrong = candidates.find((c) => {
      const p = parseAnswer(c, q.choices, q.answerType);
      return p !== null && p !== oracle;
    });
    return wrong === undefined ? r : { ...r, model_answer: wrong };
  });
}

/** A group's coverage and its balanced accuracy both ways. */
export interface CoveredGroup {
  /** Items answered (the grader's `n`) and gradable. */
  answered: number;
  total: number;
  /** answered / total (1 when nothing is gradable). */
  coverage: number;
  /** The published grader's figure: over the answered items only. */
  balanced_acc: number;
  /** The unanswered counted as wrong: the figure a ranking uses. */
  balanced_acc_all: number;
}

export function coveredGroup(answered: GroupMetrics, all: GroupMetrics | undefined): CoveredGroup {
  const total = all?.n ?? answered.n;
  return {
    answered: answered.n,
    total,
    coverage: total > 0 ? answered.n / total : 1,
    balanced_acc: answered.balanced_acc,
    balanced_acc_all: all?.balanced_acc ?? answered.balanced_acc,
  };
}

/** The grader's metrics of the records with the unanswered counted as wrong (`unansweredAsWrong`). */
export function evaluateAnsweredAll(records: readonly Prediction[], questions: QuestionSet): GradeMetrics {
  return evaluate(unansweredAsWrong(records, questions), questions);
}

/** Pooled coverage and both balanced accuracies of a set of records. */
export function coverageOf(records: readonly Prediction[], questions: QuestionSet): CoveredGroup {
  return coveredGroup(evaluate(records, questions).global, evaluateAnsweredAll(records, questions).global);
}
