/**
 * Metrics, consistency and the JSON writer on hand-written records with hand-computed expected
 * values (no ../shared needed).
 */
import { describe, expect, it } from 'vitest';
import {
  balancedAccuracy,
  checkRule,
  computeConsistency,
  CONSISTENCY_RULES,
  compareCodePoints,
  confusionMatrix,
  evaluate,
  groupMetrics,
  macroF1,
  metricsToJson,
  semanticAccuracy,
  type ConsistencyRule,
  type LooseRecord,
} from '../../src/grade/index.js';
import { loadQuestions } from '../../src/oracle/questions.js';

const Q = loadQuestions();

/** A record for the shipped questions; oracle = prediction unless given. */
function rec(clip: string, qid: string, answer: string, oracle = answer, extra: Partial<Record<string, unknown>> = {}): LooseRecord {
  return { clip_id: clip, question_id: qid, category: Q.byId.get(qid)?.category ?? 'x', oracle_label: oracle, model_answer: answer, ...extra };
}

describe('list metrics (reference helpers)', () => {
  it('accuracy', () => {
    expect(semanticAccuracy(['a', 'b', 'c', 'd'], ['a', 'x', 'c', 'x'])).toBe(0.5);
    expect(semanticAccuracy([], [])).toBe(0);
    expect(() => semanticAccuracy(['a'], [])).toThrow(/same length/);
  });

  it('balanced accuracy averages recall over classes with support only', () => {
    // left: 1/2, right: 2/2, straight: no support (left out, not counted as 0)
    const o = ['left', 'left', 'right', 'right'];
    const p = ['left', 'straight', 'right', 'right'];
    expect(balancedAccuracy(o, p, ['left', 'right', 'straight'])).toBe(0.75);
    expect(balancedAccuracy(o, p)).toBe(0.75);
    expect(balancedAccuracy([], [])).toBe(0);
    expect(balancedAccuracy(['a'], ['a'], [])).toBe(0);
  });

  it('macro F1 gives a never-predicted class F1 = 0', () => {
    // a: P = 2/3, R = 1 → 0.8; b: never predicted → 0; mean 0.4
    expect(macroF1(['a', 'a', 'b'], ['a', 'a', 'a'])).toBeCloseTo(0.4, 12);
    // yes: P = 0.8, R = 1 → 8/9; no: 0 → 4/9
    expect(macroF1([...Array(8).fill('yes'), 'no', 'no'], Array(10).fill('yes'))).toBeCloseTo(4 / 9, 12);
    // a label with neither support nor predictions still counts (as 0)
    expect(macroF1(['a', 'b'], ['a', 'b'], ['a', 'b', 'c'])).toBeCloseTo(2 / 3, 12);
  });

  it('confusion matrix: rows oracle, columns prediction', () => {
    expect(confusionMatrix(['left', 'left', 'right', 'straight'], ['left', 'straight', 'right', 'straight'])).toEqual({
      labels: ['left', 'right', 'straight'],
      matrix: [[1, 0, 1], [0, 1, 0], [0, 0, 1]],
    });
    expect(confusionMatrix(['yes', 'yes'], ['yes', 'yes'], ['yes', 'no'])).toEqual({ labels: ['yes', 'no'], matrix: [[2, 0], [0, 0]] });
    expect(confusionMatrix([], [])).toEqual({ labels: [], matrix: [] });
  });

  it('rounds as Python round(x, 4): the exact tie 0.03125 goes to 0.0312', () => {
    const o = Array(32).fill('yes');
    const p = ['yes', ...Array(31).fill('no')];
    // (0.03125).toFixed(4) would give 0.0313
    expect(groupMetrics(o, p)).toEqual({ accuracy: 0.0312, balanced_acc: 0.0312, macro_f1: 0.0303, n: 32 });
  });

  it('sorts labels by code point like Python', () => {
    // UTF-16 order puts U+FF5E before U+1F600; code-point order does not.
    expect(['\u{1F600}', '\uff5e', 'b', 'B'].sort(compareCodePoints)).toEqual(['B', 'b', '\uff5e', '\u{1F600}']);
    expect(confusionMatrix(['\u{1F600}', '\uff5e'], ['\u{1F600}', '\uff5e']).labels).toEqual(['\uff5e', '\u{1F600}']);
  });
});

describe('consistency rules', () => {
  const rule: ConsistencyRule = { name: 't', description: '', if: ['q_a', '==', 'yes'], then: ['q_b', '==', 'no'] };

  it('checkRule: applicable only when both answered and the condition holds', () => {
    expect(checkRule(rule, { q_a: 'no', q_b: 'yes' })).toEqual([false, false]);
    expect(checkRule(rule, { q_b: 'no' })).toEqual([false, false]);
    expect(checkRule(rule, new Map([['q_a', 'yes']]))).toEqual([false, false]);
    expect(checkRule(rule, { q_a: 'yes', q_b: 'no' })).toEqual([true, false]);
    expect(checkRule(rule, { q_a: 'yes', q_b: 'yes' })).toEqual([true, true]);
  });

  it('has the 10 reference rules', () => {
    expect(CONSISTENCY_RULES.map((r) => r.name)).toEqual([
      'heading_change_implies_turning', 'lateral_accel_implies_turning', 'straight_implies_no_heading_change',
      'straight_implies_no_high_lateral_accel', 'highway_implies_not_low_speed', 'stopped_implies_low_speed',
      'stopped_not_accelerating', 'brake_then_turn_implies_braking', 'brake_then_turn_implies_turning', 'stop_and_go_not_stopped',
    ]);
  });

  it('computeConsistency counts evaluable clips, violations and coverage', () => {
    const rules: ConsistencyRule[] = [
      { name: 'straight_no_heading', description: '', if: ['turn_dir', '==', 'straight'], then: ['heading_change', '==', 'no'] },
      { name: 'brake_not_accel', description: '', if: ['braking', '==', 'yes'], then: ['speed_trend', '!=', 'accelerating'] },
    ];
    const c = computeConsistency(
      new Map([
        ['c1', { turn_dir: 'straight', heading_change: 'yes' }], // 1 violation
        ['c2', { turn_dir: 'straight', heading_change: 'no' }], // ok
        ['c3', { unrelated: 'answer' }], // not evaluable
      ]),
      rules,
    );
    expect(c).toEqual({
      rate: 0.5, wemcr: 0.25, mean_compliance: 0.5, rule_coverage: 0.5, n_rules_triggered: 1, n_rules_total: 2,
      n_clips: 3, n_evaluable: 2, n_consistent: 1, consistency_coverage: 0.6667, mean_violations: 0.5,
      per_rule: {
        straight_no_heading: { n_applicable: 2, n_violations: 1, compliance: 0.5 },
        brake_not_accel: { n_applicable: 0, n_violations: 0, compliance: 1 },
      },
    });
    expect(computeConsistency({}, rules)).toMatchObject({ rate: 0, n_clips: 0, n_evaluable: 0, mean_violations: 0, consistency_coverage: 0 });
  });
});

describe('evaluate', () => {
  it('computes every group by hand', () => {
    const records: LooseRecord[] = [
      // nuScenes clip: heading change "yes" but going "straight" → 2 rule violations
      rec('clip_1', 'significant_heading_change', 'Yes.', 'yes'),
      rec('clip_1', 'yaw_rate_turn_direction', 'straight', 'left'),
      // CARLA clip: no rule applies (conditions false; high_lateral_accel "no")
      rec('carla_1', 'significant_heading_change', 'no'),
      rec('carla_1', 'yaw_rate_turn_direction', 'Turning left, clearly.', 'left'),
      rec('carla_1', 'high_lateral_accel', 'no'),
      // CARLA clip: stopped + mean speed low + steady → 2 rules applicable, both hold
      rec('carla_2', 'speed_regime', 'stopped'),
      rec('carla_2', 'mean_speed_low', 'yes'),
      rec('carla_2', 'speed_trend', 'steady', 'accelerating'),
      // temporal question, answered with the space variant
      rec('carla_2', 'speed_peak_half', 'first half', 'first_half'),
      // unparsed: refusal, blank, unknown question, missing clip, missing oracle
      rec('carla_2', 'stop_and_go', 'I cannot tell.', 'no'),
      rec('carla_2', 'brake_then_turn', '   ', 'no'),
      rec('carla_2', 'no_such_question', 'yes'),
      { question_id: 'stop_and_go', oracle_label: 'no', model_answer: 'no' },
      { clip_id: 'carla_3', question_id: 'stop_and_go', model_answer: 'no' },
    ];
    const m = evaluate(records, Q);
    expect(m.n_total).toBe(14);
    expect(m.n_parsed).toBe(9);
    expect(m.parsable_coverage).toBe(0.6429);
    // 7 of 9 correct (clip_1 turn direction and carla_2 speed trend are wrong)
    expect(m.global.accuracy).toBe(0.7778);
    expect(m.global.n).toBe(9);
    // classes: accelerating first_half left no steady stopped straight yes (sorted union)
    // recalls: accelerating 0/1, first_half 1, left 1/2, no 1, stopped 1, yes 1 (steady, straight: no support)
    expect(m.global.balanced_acc).toBe(pyMean([0, 1, 0.5, 1, 1, 1]));
    // F1: accelerating 0, first_half 1, left 2/3, no 1, steady 0, stopped 1, straight 0, yes 1
    expect(m.global.macro_f1).toBe(round4((0 + 1 + 2 / 3 + 1 + 0 + 1 + 0 + 1) / 8));
    expect(m.temporal).toEqual({ accuracy: 0.5, balanced_acc: 0.5, macro_f1: 0.3333, n: 2 });
    expect(Object.keys(m.per_category)).toEqual(['comparative', 'direct_dynamics']);
    expect(m.per_question.yaw_rate_turn_direction).toEqual({
      accuracy: 0.5, balanced_acc: 0.5, macro_f1: 0.2222, n: 2,
      confusion_matrix: { labels: ['left', 'right', 'straight'], matrix: [[1, 0, 1], [0, 0, 0], [0, 0, 0]] },
    });
    expect(Object.keys(m.per_question)).toEqual([
      'high_lateral_accel', 'mean_speed_low', 'significant_heading_change', 'speed_peak_half', 'speed_regime',
      'speed_trend', 'yaw_rate_turn_direction',
    ]);

    const c = m.consistency;
    expect(c.n_clips).toBe(3);
    expect(c.n_evaluable).toBe(2);
    expect(c.n_consistent).toBe(1);
    expect(c.rate).toBe(0.5);
    expect(c.n_rules_triggered).toBe(4);
    expect(c.rule_coverage).toBe(0.4);
    expect(c.wemcr).toBe(0.2);
    expect(c.mean_compliance).toBe(0.5);
    expect(c.mean_violations).toBe(1);
    expect(c.consistency_coverage).toBe(0.6667);
    expect(c.per_rule.heading_change_implies_turning).toEqual({ n_applicable: 1, n_violations: 1, compliance: 0 });
    expect(c.per_rule.straight_implies_no_heading_change).toEqual({ n_applicable: 1, n_violations: 1, compliance: 0 });
    expect(c.per_rule.stopped_not_accelerating).toEqual({ n_applicable: 1, n_violations: 0, compliance: 1 });
    // inapplicable: high_lateral_accel was never "yes", so this rule never triggered
    expect(c.per_rule.lateral_accel_implies_turning).toEqual({ n_applicable: 0, n_violations: 0, compliance: 1 });

    expect(Object.keys(m.per_source)).toEqual(['carla', 'nuscenes']);
    expect(m.per_source.nuscenes.n).toBe(2);
    expect(m.per_source.nuscenes.consistency).toMatchObject({ rate: 0, n_clips: 1, n_evaluable: 1, mean_violations: 2, wemcr: 0 });
    expect(m.per_source.carla.consistency).toMatchObject({ rate: 1, n_clips: 2, n_evaluable: 1, consistency_coverage: 0.5, wemcr: 0.2 });
  });

  it('reads the oracle from "answer" when "oracle_label" is absent, and prefers oracle_label', () => {
    const m = evaluate(
      [
        { clip_id: 'c1', question_id: 'braking_intensity', answer: 'Emergency ', model_answer: 'emergency' },
        { clip_id: 'c2', question_id: 'braking_intensity', oracle_label: 'none', answer: 'low', model_answer: 'none' },
        { clip_id: 'c3', question_id: 'braking_intensity', oracle_label: null, answer: 'low', model_answer: 'low' },
      ],
      Q,
    );
    expect(m.n_parsed).toBe(2);
    expect(m.global.accuracy).toBe(1);
    expect(m.per_category).toHaveProperty('unknown');
  });

  it('handles an empty record list like the reference', () => {
    const m = evaluate([], Q);
    expect(m.parsable_coverage).toBe(0);
    expect(m.global).toEqual({ accuracy: 0, balanced_acc: 0, macro_f1: 0, n: 0 });
    expect(m.per_question).toEqual({});
    expect(m.consistency.n_rules_total).toBe(10);
  });

  it('uses a record\'s "source" field for per_source when present', () => {
    const m = evaluate(
      [
        rec('kitti00_000000', 'yaw_rate_turn_direction', 'straight', 'straight', { source: 'kitti' }),
        rec('kitti00_000000', 'significant_heading_change', 'yes', 'yes', { source: 'kitti' }),
        rec('clip_9', 'yaw_rate_turn_direction', 'left'),
        rec('sim_1', 'yaw_rate_turn_direction', 'left', 'left', { source: 'synthetic' }),
      ],
      Q,
    );
    expect(Object.keys(m.per_source)).toEqual(['kitti', 'nuscenes', 'synthetic']);
    expect(m.per_source.kitti.consistency).toMatchObject({ n_clips: 1, n_evaluable: 1, n_consistent: 0 });
    expect(m.per_source.synthetic.n).toBe(1);
  });

  it('numeric questions: oracle labels normalised, labels derived from the data', () => {
    const questions = {
      source: 'test',
      scale: 1,
      questions: [{ id: 'max_speed', category: 'direct_dynamics', answerType: 'numeric', choices: null, temporal: false }],
    } as unknown as typeof Q;
    (questions as { byId: Map<string, unknown> }).byId = new Map([['max_speed', questions.questions[0]]]);
    const m = evaluate(
      [
        { clip_id: 'c1', question_id: 'max_speed', oracle_label: '42.0', model_answer: '42' },
        { clip_id: 'c2', question_id: 'max_speed', oracle_label: '3.50', model_answer: 'The speed is about 3.5 m/s.' },
        { clip_id: 'c3', question_id: 'max_speed', oracle_label: 7, model_answer: 'roughly 8 m/s' },
      ],
      questions,
    );
    expect(m.n_parsed).toBe(3);
    expect(m.global.accuracy).toBe(0.6667);
    expect(m.per_question.max_speed.confusion_matrix.labels).toEqual(['3.5', '42', '7', '8']);
  });
});

describe('metricsToJson', () => {
  it("writes the reference's JSON: Python floats, code-point key order, ASCII escapes", () => {
    const m = evaluate(
      [
        { clip_id: 'c1', question_id: 'mean_speed_low', category: '9', oracle_label: 'yes', model_answer: 'yes' },
        { clip_id: 'c1', question_id: 'stop_and_go', category: '10', oracle_label: 'no', model_answer: 'no' },
        { clip_id: 'c2', question_id: 'stop_and_go', category: 'é', oracle_label: 'no', model_answer: 'no' },
      ],
      Q,
    );
    const text = metricsToJson(m);
    // JS objects list "9" before "10"; Python's sorted() puts "10" first.
    expect(text.indexOf('"10": {')).toBeLessThan(text.indexOf('"9": {'));
    expect(text).toContain('"\\u00e9": {');
    expect(text).toContain('"accuracy": 1.0,');
    expect(text).toContain('"n": 1');
    expect(text.startsWith('{\n  "n_total": 3,\n  "n_parsed": 3,\n  "parsable_coverage": 1.0,\n  "global": {\n    "accuracy": 1.0,')).toBe(true);
    expect(JSON.parse(text).per_question.stop_and_go.confusion_matrix).toEqual({ labels: ['yes', 'no'], matrix: [[0, 0], [0, 2]] });
    expect(text).toContain('"per_category": {\n    "10": {');
  });
});

function round4(x: number): number {
  // the values in these tests are not ties, so toFixed is safe here
  return Number(x.toFixed(4));
}
function pyMean(xs: number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return round4(s / xs.length);
}
