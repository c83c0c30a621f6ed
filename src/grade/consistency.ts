/**
 * grade/consistency — the reference's ego-motion consistency check (`compute_consistency` in
 * `evaluation/metrics.py`): 10 hard kinematic rules "if the model answers X to one question of a
 * clip, it must answer Y to another". A rule is applicable to a clip when both questions were
 * answered and its condition holds; a clip is evaluable when at least one rule applies.
 *
 * Outputs (key order as the reference): rate (EMCR: evaluable clips with no violation / evaluable),
 * wemcr (rate × rule_coverage), mean_compliance (mean over evaluable clips of satisfied/applicable),
 * rule_coverage (rules triggered at least once / rules), n_rules_triggered, n_rules_total, n_clips,
 * n_evaluable, n_consistent, consistency_coverage (evaluable / clips), mean_violations (per evaluable
 * clip), per_rule {n_applicable, n_violations, compliance}. Rates are Python `round(x, 4)`.
 */
import { pyRound } from '../core/numeric.js';

/** `[question_id, op, value]`; op is `==`, anything else means `!=` (as in the reference). */
export type RuleClause = readonly [questionId: string, op: string, value: string];

export interface ConsistencyRule {
  readonly name: string;
  readonly description: string;
  readonly if: RuleClause;
  readonly then: RuleClause;
}

/** The reference's `CONSISTENCY_RULES`, in its order (the order of `per_rule`). */
export const CONSISTENCY_RULES: readonly ConsistencyRule[] = [
  {
    name: 'heading_change_implies_turning',
    description: 'Significant heading change implies the vehicle is turning (not straight)',
    if: ['significant_heading_change', '==', 'yes'],
    then: ['yaw_rate_turn_direction', '!=', 'straight'],
  },
  {
    name: 'lateral_accel_implies_turning',
    description: 'High lateral acceleration implies the vehicle is turning (not straight)',
    if: ['high_lateral_accel', '==', 'yes'],
    then: ['yaw_rate_turn_direction', '!=', 'straight'],
  },
  {
    name: 'straight_implies_no_heading_change',
    description: 'Going straight implies no significant heading change',
    if: ['yaw_rate_turn_direction', '==', 'straight'],
    then: ['significant_heading_change', '==', 'no'],
  },
  {
    name: 'straight_implies_no_high_lateral_accel',
    description: 'Going straight implies no high lateral acceleration',
    if: ['yaw_rate_turn_direction', '==', 'straight'],
    then: ['high_lateral_accel', '==', 'no'],
  },
  {
    name: 'highway_implies_not_low_speed',
    description: 'Highway speed regime implies mean speed is not low',
    if: ['speed_regime', '==', 'highway'],
    then: ['mean_speed_low', '==', 'no'],
  },
  {
    name: 'stopped_implies_low_speed',
    description: 'Stopped speed regime implies mean speed is low',
    if: ['speed_regime', '==', 'stopped'],
    then: ['mean_speed_low', '==', 'yes'],
  },
  {
    name: 'stopped_not_accelerating',
    description: 'Stopped speed regime implies speed trend is not accelerating',
    if: ['speed_regime', '==', 'stopped'],
    then: ['speed_trend', '!=', 'accelerating'],
  },
  {
    name: 'brake_then_turn_implies_braking',
    description: 'Brake-then-turn implies braking intensity is not none',
    if: ['brake_then_turn', '==', 'yes'],
    then: ['braking_intensity', '!=', 'none'],
  },
  {
    name: 'brake_then_turn_implies_turning',
    description: 'Brake-then-turn implies vehicle is not going straight',
    if: ['brake_then_turn', '==', 'yes'],
    then: ['yaw_rate_turn_direction', '!=', 'straight'],
  },
  {
    name: 'stop_and_go_not_stopped',
    description: 'Stop-and-go implies speed regime is not stopped (vehicle must also move)',
    if: ['stop_and_go', '==', 'yes'],
    then: ['speed_regime', '!=', 'stopped'],
  },
];

export interface RuleStats {
  n_applicable: number;
  n_violations: number;
  compliance: number;
}

export interface ConsistencyMetrics {
  rate: number;
  wemcr: number;
  mean_compliance: number;
  rule_coverage: number;
  n_rules_triggered: number;
  n_rules_total: number;
  n_clips: number;
  n_evaluable: number;
  n_consistent: number;
  consistency_coverage: number;
  mean_violations: number;
  per_rule: Record<string, RuleStats>;
}

/** One clip's answers: question_id → parsed label. */
export type ClipAnswers = ReadonlyMap<string, string> | Readonly<Record<string, string>>;

function answerOf(a: ClipAnswers, qid: string): string | undefined {
  if (a instanceof Map) return a.get(qid);
  const r = a as Readonly<Record<string, string>>;
  return Object.prototype.hasOwnProperty.call(r, qid) ? r[qid] : undefined;
}

/** The reference's `_check_rule`: `[applicable, violated]` for one clip. */
export function checkRule(rule: ConsistencyRule, answers: ClipAnswers): [applicable: boolean, violated: boolean] {
  const [cq, cop, cv] = rule.if;
  const [iq, iop, iv] = rule.then;
  const c = answerOf(answers, cq);
  const i = answerOf(answers, iq);
  if (c === undefined || c === null || i === undefined || i === null) return [false, false];
  const condMatches = cop === '==' ? c === cv : c !== cv;
  if (!condMatches) return [false, false];
  const holds = iop === '==' ? i === iv : i !== iv;
  return [true, !holds];
}

// ---------------------------------------------------------------------------------------------
// Compiled form used by evaluate(): answers are integer label ids in a clips × slots table
// ---------------------------------------------------------------------------------------------

/** Rules over slot indices and interned label ids (-1 in the table = not answered). */
export interface CompiledRules {
  readonly names: readonly string[];
  /** question_id → slot. */
  readonly slots: ReadonlyMap<string, number>;
  readonly condSlot: Int32Array;
  readonly condEq: Uint8Array;
  readonly condVal: Int32Array;
  readonly implSlot: Int32Array;
  readonly implEq: Uint8Array;
  readonly implVal: Int32Array;
}

/** Compiles `rules`; `intern` maps a label string to the id used in the answer table. */
export function compileRules(rules: readonly ConsistencyRule[], intern: (label: string) => number): CompiledRules {
  const slots = new Map<string, number>();
  const slot = (q: string): number => {
    let s = slots.get(q);
    if (s === undefined) {
      s = slots.size;
      slots.set(q, s);
    }
    return s;
  };
  const n = rules.length;
  const c: CompiledRules = {
    names: rules.map((r) => r.name),
    slots,
    condSlot: new Int32Array(n),
    condEq: new Uint8Array(n),
    condVal: new Int32Array(n),
    implSlot: new Int32Array(n),
    implEq: new Uint8Array(n),
    implVal: new Int32Array(n),
  };
  rules.forEach((r, k) => {
    c.condSlot[k] = slot(r.if[0]);
    c.condEq[k] = r.if[1] === '==' ? 1 : 0;
    c.condVal[k] = intern(r.if[2]);
    c.implSlot[k] = slot(r.then[0]);
    c.implEq[k] = r.then[1] === '==' ? 1 : 0;
    c.implVal[k] = intern(r.then[2]);
  });
  return c;
}

/**
 * Consistency over the clips `rows` (in the reference's dict order: first appearance) of an answer
 * table with `rules.slots.size` columns. Summation order matches the reference bit for bit.
 */
export function consistencyFromTable(
  table: Int32Array,
  rows: ArrayLike<number>,
  rules: CompiledRules,
): ConsistencyMetrics {
  const nRules = rules.names.length;
  const width = rules.slots.size;
  const app = new Int32Array(nRules);
  const vio = new Int32Array(nRules);
  const { condSlot, condEq, condVal, implSlot, implEq, implVal } = rules;
  let nEvaluable = 0;
  let nConsistent = 0;
  let totalViolations = 0;
  let complianceSum = 0;
  for (let r = 0; r < rows.length; r++) {
    const base = rows[r] * width;
    let clipApp = 0;
    let clipVio = 0;
    for (let k = 0; k < nRules; k++) {
      const a = table[base + condSlot[k]];
      const b = table[base + implSlot[k]];
      if (a < 0 || b < 0) continue;
      if ((a === condVal[k]) !== (condEq[k] === 1)) continue;
      clipApp++;
      app[k]++;
      if ((b === implVal[k]) !== (implEq[k] === 1)) {
        vio[k]++;
        clipVio++;
      }
    }
    if (clipApp > 0) {
      nEvaluable++;
      totalViolations += clipVio;
      complianceSum += (clipApp - clipVio) / clipApp;
      if (clipVio === 0) nConsistent++;
    }
  }
  const perRule: Record<string, RuleStats> = {};
  let triggered = 0;
  for (let k = 0; k < nRules; k++) {
    const name = rules.names[k];
    const prev = perRule[name];
    // Duplicate names share one entry, as in the reference's dict.
    const st = prev ?? { n_applicable: 0, n_violations: 0, compliance: 1 };
    st.n_applicable += app[k];
    st.n_violations += vio[k];
    perRule[name] = st;
  }
  for (const st of Object.values(perRule)) {
    st.compliance = st.n_applicable > 0 ? pyRound(1 - st.n_violations / st.n_applicable, 4) : 1.0;
    if (st.n_applicable > 0) triggered++;
  }
  const nClips = rows.length;
  const emcr = nEvaluable > 0 ? pyRound(nConsistent / nEvaluable, 4) : 0.0;
  const ruleCoverage = nRules > 0 ? triggered / nRules : 0.0;
  return {
    rate: emcr,
    wemcr: pyRound(emcr * ruleCoverage, 4),
    mean_compliance: nEvaluable > 0 ? pyRound(complianceSum / nEvaluable, 4) : 0.0,
    rule_coverage: pyRound(ruleCoverage, 4),
    n_rules_triggered: triggered,
    n_rules_total: nRules,
    n_clips: nClips,
    n_evaluable: nEvaluable,
    n_consistent: nConsistent,
    consistency_coverage: nClips > 0 ? pyRound(nEvaluable / nClips, 4) : 0.0,
    mean_violations: nEvaluable > 0 ? pyRound(totalViolations / nEvaluable, 4) : 0.0,
    per_rule: perRule,
  };
}

/**
 * The reference's `compute_consistency(clip_answers, rules)`: `clipAnswers` maps clip_id →
 * (question_id → parsed label), in clip order.
 */
export function computeConsistency(
  clipAnswers: ReadonlyMap<string, ClipAnswers> | Readonly<Record<string, ClipAnswers>>,
  rules: readonly ConsistencyRule[] = CONSISTENCY_RULES,
): ConsistencyMetrics {
  const ids = new Map<string, number>();
  const intern = (s: string): number => {
    let id = ids.get(s);
    if (id === undefined) {
      id = ids.size;
      ids.set(s, id);
    }
    return id;
  };
  const compiled = compileRules(rules, intern);
  const clips = clipAnswers instanceof Map ? [...clipAnswers.values()] : Object.values(clipAnswers);
  const width = compiled.slots.size;
  const table = new Int32Array(clips.length * width).fill(-1);
  clips.forEach((a, r) => {
    for (const [q, s] of compiled.slots) {
      const v = answerOf(a as ClipAnswers, q);
      if (v !== undefined && v !== null) table[r * width + s] = intern(v);
    }
  });
  const rows = Int32Array.from({ length: clips.length }, (_, i) => i);
  return consistencyFromTable(table, rows, compiled);
}
