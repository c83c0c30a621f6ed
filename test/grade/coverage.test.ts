/**
 * Coverage and the figures with the unanswered counted as wrong (src/grade/coverage.ts): the
 * grader's own figures stay exact, abstaining raises them, and the "all" figure takes that back.
 */
import { describe, expect, it } from 'vitest';
import type { Prediction } from '../../src/core/prediction.js';
import { coverageOf, evaluate, evaluateAnsweredAll, unansweredAsWrong } from '../../src/grade/index.js';
import { loadQuestions } from '../../src/oracle/questions.js';

const questions = loadQuestions();
const rec = (clip: string, question_id: string, oracle_label: string | null, model_answer: string | null): Prediction => ({
  qa_id: `qa_${clip}_${question_id}`, clip_id: clip, question_id, category: 'direct_dynamics', oracle_label, model_answer,
});

// An answering run: 8 clips, speed_trend and stop_and_go; some answers wrong.
const answering: Prediction[] = [
  rec('clip_1', 'speed_trend', 'steady', 'steady'), rec('clip_1', 'stop_and_go', 'no', 'no'),
  rec('clip_2', 'speed_trend', 'accelerating', 'accelerating'), rec('clip_2', 'stop_and_go', 'yes', 'no'),
  rec('clip_3', 'speed_trend', 'decelerating', 'steady'), rec('clip_3', 'stop_and_go', 'no', 'no'),
  rec('clip_4', 'speed_trend', 'steady', 'steady'), rec('clip_4', 'stop_and_go', 'yes', 'yes'),
];
// The same run abstaining exactly where it was wrong.
const abstaining = answering.map((r) => (r.model_answer !== r.oracle_label ? { ...r, model_answer: null } : r));

describe('coverage', () => {
  it('abstaining raises the grader\'s balanced accuracy; counted as wrong it equals the answering run\'s', () => {
    const a = coverageOf(answering, questions), b = coverageOf(abstaining, questions);
    expect(a).toMatchObject({ answered: 8, total: 8, coverage: 1 });
    expect(a.balanced_acc_all).toBe(a.balanced_acc);
    expect(b).toMatchObject({ answered: 6, total: 8, coverage: 0.75 });
    expect(b.balanced_acc).toBeGreaterThan(a.balanced_acc); // the reviewer's objection
    expect(b.balanced_acc_all).toBe(a.balanced_acc); // taken back
    expect(evaluateAnsweredAll(abstaining, questions).per_question.stop_and_go.balanced_acc).toBe(evaluate(answering, questions).per_question.stop_and_go.balanced_acc);
  });
  it('gives each unanswered item a wrong choice, whatever it was (null, blank, unparsable); the rest pass unchanged', () => {
    const rs = [rec('c', 'speed_trend', 'steady', null), rec('c', 'stop_and_go', 'no', '  '), rec('c', 'speed_regime', 'urban', 'no idea'), rec('c', 'speed_trend', 'steady', 'steady')];
    const out = unansweredAsWrong(rs, questions);
    expect(out.map((r) => r.model_answer)).toEqual(['accelerating', 'yes', 'stopped', 'steady']);
    expect(out[3]).toBe(rs[3]);
    // Not gradable (no oracle label, unknown question): left as they are, out of both figures.
    const odd = [rec('c', 'speed_trend', null, null), rec('c', 'lane_change', 'yes', null)];
    expect(unansweredAsWrong(odd, questions)).toEqual(odd);
    expect(coverageOf(odd, questions)).toMatchObject({ answered: 0, total: 0, coverage: 1 });
  });
});
