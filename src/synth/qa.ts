/**
 * QA items as the reference's `QAGenerator` writes them (`dataset/generation/qa_generator.py`):
 * one record per (clip, question) with the question text (with `{param}` substitution), the
 * oracle's answer, the question file's choices, units, metadata and label source, and the rule's
 * evidence dict (`oracle/evidence.ts`). Everything comes from the loaded question set.
 */
import { clipData, evidenceFor, type OracleResult, type QuestionSet } from '../oracle/index.js';

/** The fields of one QA record, in the reference's key order. */
export interface QaRecord {
  qa_id: string;
  clip_id: string;
  question_id: string;
  category: string;
  question: string;
  answer: string;
  answer_type: string;
  choices: string[] | null;
  units: string | null;
  label_source: string;
  rule_name: string;
  split: string;
  t_end: number;
  evidence: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
}

/**
 * The 14 QA records of one clip, numbered from `qaBase` in question-file order (the reference's
 * counter runs clip-major over the whole dataset).
 */
export function qaRecords(
  clipId: string,
  oracle: OracleResult,
  questions: QuestionSet,
  qaBase: number,
  tEnd: number,
  split = 'unsplit',
): QaRecord[] {
  const c = clipData(oracle.arrays, oracle.features);
  return questions.questions.map((q, i) => {
    return {
      qa_id: `qa_${String(qaBase + i).padStart(8, '0')}`,
      clip_id: clipId,
      question_id: q.id,
      category: q.category,
      question: q.text,
      answer: oracle.labels[q.id],
      answer_type: q.answerType,
      choices: q.rawChoices,
      units: q.units,
      label_source: questions.labelSource,
      rule_name: q.ruleName,
      split,
      t_end: tEnd,
      evidence: questions.includeEvidence ? evidenceFor(q, c) : null,
      metadata: q.metadata,
    };
  });
}
