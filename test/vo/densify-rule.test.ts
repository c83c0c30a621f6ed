/**
 * Which path the densifier takes between sparse frames (vo/densify.ts `densify`), on the
 * trajectories the rendered sets are drawn from (synth/plan.ts, 80 CARLA-shaped clips): exact
 * poses at the published 10 frames go through the spline distance and score within 0.01 of the
 * natural cubic spline through the poses on all 14 questions (above the pair rates); poses with
 * stated noise (5 % per pair, the engine's level) keep the pair rates, which beat the spline there.
 */
import { describe, expect, it } from 'vitest';
import { interpolated, keptFrames } from '../../src/audit/sampling.js';
import { mulberry32 } from '../../src/core/random.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { evaluate } from '../../src/grade/index.js';
import { loadQuestions } from '../../src/oracle/index.js';
import { runOracle } from '../../src/oracle/oracle.js';
import { groundTruth, planDataset } from '../../src/synth/plan.js';
import { densify, denseTimes, fromPairRates, SPLINE_SPEED_SIGMA } from '../../src/vo/densify.js';

const questions = loadQuestions();
const clips = planDataset({ clips: 80, seed: 2026, preset: 'carla', questions }).map(groundTruth);
const labels = clips.map((c) => runOracle(c, questions).labels);
const kept = clips.map((c) => keptFrames(c, 10));

/** Balanced accuracy on all 14 questions of the oracle over `traj(i)` against the truth's labels. */
function bacc14(traj: (i: number) => Trajectory): number {
  const preds = clips.flatMap((c, i) => {
    const est = runOracle(traj(i), questions).labels;
    return questions.questions.map((q, k) => ({ qa_id: `${c.id}_${k}`, clip_id: c.id, question_id: q.id, category: q.category, oracle_label: labels[i][q.id], model_answer: est[q.id], source: 'carla' }));
  });
  return evaluate(preds, questions).global.balanced_acc;
}

/** `t` with each pair's step scaled by a random walk of relative sigma `rel` (a road scale's error), yaw untouched. */
function scaleNoise(t: Trajectory, rel: number, seed: number): Trajectory {
  const rand = mulberry32(seed);
  const g = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const x = Float64Array.from(t.x), y = Float64Array.from(t.y);
  let s = 1 + rel * g();
  for (let k = 1; k < t.t.length; k++) {
    s *= 1 + rel * g();
    x[k] = x[k - 1] + s * (t.x[k] - t.x[k - 1]);
    y[k] = y[k - 1] + s * (t.y[k] - t.y[k - 1]);
  }
  return { ...t, x, y };
}

describe('densify between the published 10 frames', () => {
  it('exact poses: within 0.01 of the natural cubic spline on all 14, above the pair rates', () => {
    const spline = bacc14((i) => interpolated(kept[i], clips[i].t, 'spline'));
    const exact = bacc14((i) => densify(kept[i], 10, 0).trajectory);
    const rates = bacc14((i) => fromPairRates(kept[i], denseTimes(kept[i].t, 10), 'rates'));
    console.log(`exact poses at 10 frames, 80 clips, all 14: natural spline ${spline.toFixed(3)}, densify ${exact.toFixed(3)}, pair rates ${rates.toFixed(3)}`);
    expect(exact).toBeGreaterThanOrEqual(spline - 0.01);
    expect(exact).toBeGreaterThan(rates + 0.005);
  });

  it('noisy poses (5 % per pair, stated): the pair rates, which score at least the spline distance on them', () => {
    const noisy = kept.map((k, i) => scaleNoise(k, 0.05, 100 + i));
    const times = noisy.map((k) => denseTimes(k.t, 10));
    for (const [i, k] of noisy.entries()) expect(densify(k, 10, 0.05).trajectory.x).toEqual(fromPairRates(k, times[i], 'rates').x);
    const stated = bacc14((i) => densify(noisy[i], 10, 0.05).trajectory);
    const spline = bacc14((i) => fromPairRates(noisy[i], times[i], 'spline'));
    console.log(`5 % scale noise at 10 frames, all 14: densify (pair rates) ${stated.toFixed(3)}, spline distance ${spline.toFixed(3)}`);
    expect(stated).toBeGreaterThanOrEqual(spline);
    expect(SPLINE_SPEED_SIGMA).toBeLessThan(0.05);
  });
});
