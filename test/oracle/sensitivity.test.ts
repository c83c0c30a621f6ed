/** Threshold sensitivity on trajectories built here (no ../shared). */
import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { groupMetrics } from '../../src/grade/index.js';
import { clipData, loadQuestions, runOracle } from '../../src/oracle/index.js';
import { alphaGrid, kendallTau, rankByScore, sensitivity, type ParsedPredictions } from '../../src/oracle/sensitivity.js';
import { oracleConsistency } from '../../src/cli/commands/sensitivity.js';

const Q = loadQuestions();
const grid = Array.from({ length: 31 }, (_, i) => i / 10);
// Straight runs at 1.25, 2.25, ..., 20.25 m/s (mean speed = v to 1e-9), then left turns at 8 m/s
// with yaw rates 0.05..0.5 rad/s.
const straight = Array.from({ length: 20 }, (_, i) => {
  const v = i + 1.25;
  return makeTrajectory(`v${i}`, { t: grid, x: grid.map((t) => v * t), y: grid.map(() => 0), yaw: grid.map(() => 0) });
});
const turns = Array.from({ length: 10 }, (_, i) => {
  const w = 0.05 * (i + 1), r = 8 / w;
  return makeTrajectory(`w${i}`, { t: grid, x: grid.map((t) => r * Math.sin(w * t)), y: grid.map((t) => r * (1 - Math.cos(w * t))), yaw: grid.map((t) => w * t) });
});
const trajs = [...straight, ...turns];
const results = trajs.map((t) => runOracle(t, Q));
const clips = results.map((r) => clipData(r.arrays, r.features));
const questionsAt = (a: number) => loadQuestions(undefined, a);
const bacc = (o: string[], p: string[]) => groupMetrics(o, p);

describe('alphaGrid', () => {
  it('0.5..1.5 step 0.05: 21 values, decimal-exact, containing 1', () => {
    const g = alphaGrid(0.5, 1.5, 0.05);
    expect(g).toHaveLength(21);
    expect(g[1]).toBe(0.55);
    expect(g[10]).toBe(1);
    expect(g[20]).toBe(1.5);
  });
  it('always contains 1', () => {
    expect(alphaGrid(0.82, 1.3, 0.1)).toEqual([0.82, 0.92, 1, 1.02, 1.12, 1.22]);
    expect(alphaGrid(1.1, 1.2, 0.1)).toEqual([1, 1.1, 1.2]);
  });
  it('rejects bad ranges', () => {
    expect(() => alphaGrid(1.5, 0.5, 0.1)).toThrow(/--to/);
    expect(() => alphaGrid(0.5, 1.5, 0)).toThrow(/--step/);
    expect(() => alphaGrid(-1, 1.5, 0.1)).toThrow(/--from/);
  });
});

describe('kendallTau (the reference: concordant − discordant over untied pairs) and rankByScore', () => {
  it('identical 1, reversed −1, one swap of three 1/3, fewer than two common 1, empty 0', () => {
    expect(kendallTau(['a', 'b', 'c'], ['a', 'b', 'c'])).toBe(1);
    expect(kendallTau(['a', 'b', 'c'], ['c', 'b', 'a'])).toBe(-1);
    expect(kendallTau(['a', 'b', 'c'], ['b', 'a', 'c'])).toBeCloseTo(1 / 3, 15);
    expect(kendallTau(['a'], ['a'])).toBe(1);
    expect(kendallTau(['a', 'b'], ['c', 'd'])).toBe(1);
    expect(kendallTau([], ['a'])).toBe(0);
    // only common names count, at their positions in each ranking
    expect(kendallTau(['a', 'x', 'b'], ['b', 'a', 'y'])).toBe(-1);
  });
  it('ranks best first; ties keep name order', () => {
    expect(rankByScore(['m2', 'm1', 'm3'], [0.5, 0.5, 0.9])).toEqual(['m3', 'm1', 'm2']);
  });
});

describe('sensitivity: flip rates', () => {
  const alphas = alphaGrid(0.5, 1.5, 0.05);
  const r = sensitivity({ clips, questionsAt, alphas });
  const row = (a: number) => r.rows.find((x) => x.alpha === a)!;

  it('no label flips at α = 1', () => {
    expect(row(1).overallFlipRate).toBe(0);
    for (const q of r.questions) expect(row(1).flipRate[q]).toBe(0);
    expect(r.questions).toHaveLength(14);
    expect(r.trajectories).toBe(30);
  });

  it('mean_speed_low (mean speed < 5α) flips exactly for the speeds between 5 and 5α', () => {
    // α = 1.5: threshold 7.5 → 5.25, 6.25, 7.25 flip to yes (3 of 30); the turns run at ≈ 8 m/s.
    expect(row(1.5).flipRate.mean_speed_low).toBeCloseTo(3 / 30, 15);
    // α = 0.5: threshold 2.5 → 3.25 and 4.25 flip to no (2 of 30).
    expect(row(0.5).flipRate.mean_speed_low).toBeCloseTo(2 / 30, 15);
    // α = 1.04 and 0.96: thresholds 5.2 and 4.8 leave every speed on its side
    const r2 = sensitivity({ clips, questionsAt, alphas: [0.96, 1.04] });
    for (const x of r2.rows) expect(x.flipRate.mean_speed_low).toBe(0);
  });

  it('turn direction (|yaw rate| > 0.04α): turns at 0.05 rad/s flip to straight once 0.04α ≥ 0.05', () => {
    expect(row(1.2).flipRate.yaw_rate_turn_direction).toBe(0);
    expect(row(1.3).flipRate.yaw_rate_turn_direction).toBeCloseTo(1 / 30, 15);
  });

  it('flip rates grow monotonically as α moves away from 1 (overall and single-threshold questions)', () => {
    const below = r.rows.filter((x) => x.alpha <= 1).reverse();
    const above = r.rows.filter((x) => x.alpha >= 1);
    for (const side of [below, above]) {
      for (let i = 1; i < side.length; i++) {
        expect(side[i].overallFlipRate).toBeGreaterThanOrEqual(side[i - 1].overallFlipRate);
        for (const q of ['mean_speed_low', 'speed_regime', 'significant_heading_change', 'high_lateral_accel', 'yaw_rate_turn_direction']) {
          expect(side[i].flipRate[q], `${q} at ${side[i].alpha}`).toBeGreaterThanOrEqual(side[i - 1].flipRate[q]);
        }
      }
    }
    expect(row(0.5).overallFlipRate).toBeGreaterThan(0);
    expect(row(1.5).overallFlipRate).toBeGreaterThan(0);
  });

  it('questionIds restricts the report', () => {
    const r2 = sensitivity({ clips, questionsAt, alphas: [0.5, 1], questionIds: ['mean_speed_low'] });
    expect(r2.questions).toEqual(['mean_speed_low']);
    expect(r2.rows[0].overallFlipRate).toBeCloseTo(2 / 30, 15);
  });
});

describe('sensitivity: prediction sets', () => {
  const nominal = results.map((x) => x.labels);
  const set = (name: string, answer: (clip: number, q: string) => string): ParsedPredictions => ({
    name,
    items: nominal.flatMap((labels, clip) => Object.keys(labels).map((q) => ({ clip, questionId: q, parsed: answer(clip, q) }))),
  });
  const perfect = set('perfect', (c, q) => nominal[c][q]);
  const half = set('half', (c, q) => (c % 2 ? nominal[c][q] : q === 'speed_regime' ? 'stopped' : 'none'));
  const constant = set('constant', () => 'no');

  it('one set: τ = 1 at every α; the oracle itself scores balanced accuracy 1 at α = 1', () => {
    const r = sensitivity({ clips, questionsAt, alphas: [0.8, 1, 1.2], predictions: [perfect], metric: bacc });
    const one = r.rows.find((x) => x.alpha === 1)!;
    expect(one.scores).toEqual({ perfect: 1 });
    expect(r.rows.every((x) => x.tau === 1)).toBe(true);
    // relabelling moves the oracle away from the α = 1 answers
    expect(r.rows[0].scores!.perfect).toBeLessThan(1);
    expect(r.predictions).toEqual([{ name: 'perfect', used: 30 * 14, skipped: {} }]);
  });

  it('several sets: ranked perfect > half > constant at α = 1, τ = 1 there', () => {
    const r = sensitivity({ clips, questionsAt, alphas: alphaGrid(0.5, 1.5, 0.25), predictions: [constant, half, perfect], metric: bacc });
    expect(r.nominalRanking).toEqual(['perfect', 'half', 'constant']);
    const one = r.rows.find((x) => x.alpha === 1)!;
    expect(one.tau).toBe(1);
    expect(one.scores!.perfect).toBe(1);
    expect(one.scores!.half).toBeLessThan(1);
    for (const row of r.rows) {
      expect(row.tau).toBeGreaterThanOrEqual(-1);
      expect(row.tau).toBeLessThanOrEqual(1);
    }
  });

  it('per question: flips as the all-thresholds relabelling gives them; only that question is regraded', () => {
    const alphas = alphaGrid(0.5, 1.5, 0.25);
    const r = sensitivity({ clips, questionsAt, alphas, predictions: [constant, half, perfect], metric: bacc, perQuestion: true });
    expect(r.perQuestion!.map((q) => q.question)).toEqual(r.questions);
    const one = r.alphas.indexOf(1);
    for (const q of r.perQuestion!) {
      // a question's label depends on its own thresholds only
      r.alphas.forEach((_, k) => expect(q.flipRate[k], `${q.question} at ${r.alphas[k]}`).toBe(r.rows[k].flipRate[q.question]));
      expect(q.metrics[one].perfect.balanced_acc).toBe(1);
      expect(q.meanAbsDelta[one]).toBe(0);
      expect(q.tau[one]).toBe(1);
      // with every other question nominal, the perfect set loses only on this one
      for (let k = 0; k < r.alphas.length; k++) expect(q.metrics[k].perfect.accuracy).toBeCloseTo(1 - q.flipRate[k], 4); // rounded to 4 places, as the reference rounds
    }
    // mean_speed_low at α = 1.5 flips 3 of 30 trajectories: perfect's accuracy on it 27/30
    const msl = r.perQuestion!.find((q) => q.question === 'mean_speed_low')!;
    expect(msl.flipRate[r.alphas.indexOf(1.5)]).toBeCloseTo(3 / 30, 15);
    expect(msl.metrics[r.alphas.indexOf(1.5)].perfect.accuracy).toBe(0.9);
    expect(msl.meanAbsDelta[r.alphas.indexOf(1.5)]).toBeGreaterThan(0);
  });

  it("the oracle's own consistency per α: its labels obey every physics rule at α = 1", () => {
    const r = sensitivity({ clips, questionsAt, alphas: [0.5, 1, 1.5], consistency: oracleConsistency });
    const one = r.rows.find((x) => x.alpha === 1)!.oracleConsistency!;
    expect(one.emcr).toBe(1);
    expect(one.n_evaluable).toBeGreaterThan(0);
    for (const row of r.rows) expect(row.oracleConsistency!.rule_coverage).toBeGreaterThan(0);
  });
});
