/** The geometric baseline's record building and frame selection (no native engine needed). */
import { describe, expect, it } from 'vitest';
import { GEOMETRIC_SUBSET, predictClip, predictionRecords } from '../../src/baseline/baseline.js';
import type { Clip } from '../../src/core/clip.js';
import { evenFrames, selectFrames } from '../../src/vo/frames.js';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { loadQuestions } from '../../src/oracle/index.js';
import { cli } from '../helpers/cli.js';

const questions = loadQuestions();
const grid = Array.from({ length: 31 }, (_, i) => i / 10);
// 10 m/s straight ahead, and a 0.2 rad/s left turn at 8 m/s.
const straight = makeTrajectory('s', { t: grid, x: grid.map((t) => 10 * t), y: grid.map(() => 0), yaw: grid.map(() => 0) });
const left = makeTrajectory('l', {
  t: grid,
  x: grid.map((t) => 40 * Math.sin(0.2 * t)),
  y: grid.map((t) => 40 * (1 - Math.cos(0.2 * t))),
  yaw: grid.map((t) => 0.2 * t),
});

describe('evenFrames', () => {
  it('spreads the published baselines\' 10 frames over a 31-frame clip, ends included', () => {
    expect(evenFrames(31, 10)).toEqual([0, 3, 7, 10, 13, 17, 20, 23, 27, 30]);
  });
  it('keeps every frame when asked for at least as many', () => {
    expect(evenFrames(5, 10)).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('predictionRecords / predictClip', () => {
  const clip: Clip = { id: 'c7', source: 'synthetic', index: 0, frames: [], timestamps: Float64Array.from(grid), camera: {}, groundTruth: straight, qa: [] };

  it('numbers questions clip-major in question-file order, whichever subset is answered', () => {
    const all = predictClip(clip, straight, questions, null, 28);
    expect(all.map((r) => r.qa_id)).toEqual(questions.questions.map((_, i) => `qa_${String(28 + i).padStart(8, '0')}`));
    const sub = predictClip(clip, straight, questions, new Set(GEOMETRIC_SUBSET), 28);
    expect(sub.map((r) => r.question_id)).toEqual(questions.questions.map((q) => q.id).filter((id) => (GEOMETRIC_SUBSET as readonly string[]).includes(id)));
    for (const r of sub) expect(r.qa_id).toBe(all.find((a) => a.question_id === r.question_id)!.qa_id);
  });

  it('answers from the estimate and labels from the ground truth', () => {
    const recs = predictClip(clip, left, questions, null, 0);
    const turn = recs.find((r) => r.question_id === 'yaw_rate_turn_direction')!;
    expect(turn).toMatchObject({ clip_id: 'c7', source: 'synthetic', category: 'direct_dynamics', oracle_label: 'straight', model_answer: 'left' });
  });

  it('leaves the oracle label null without ground truth', () => {
    const recs = predictionRecords({ id: 'x', source: 'kitti' }, questions, { speed_trend: 'steady' }, { truth: null, answer: new Set(['speed_trend']), qaBase: 0 });
    expect(recs).toEqual([
      { qa_id: 'qa_00000004', clip_id: 'x', question_id: 'speed_trend', category: 'direct_dynamics', oracle_label: null, model_answer: 'steady', source: 'kitti' },
    ]);
  });

  it('with QA items: one record per item in file order, the item\u2019s answer as the oracle label (as text)', () => {
    const qa = [
      { qa_id: 'qa_9', clip_id: 'x', question_id: 'speed_trend', category: 'direct_dynamics', answer: 'accelerating' },
      { qa_id: 'qa_3', clip_id: 'x', question_id: 'stop_and_go', category: 'direct_dynamics', answer: 'no' },
    ];
    const recs = predictionRecords({ id: 'x', source: 'carla' }, questions, { speed_trend: 'steady', stop_and_go: 'no' }, { qa });
    expect(recs).toEqual([
      { qa_id: 'qa_9', clip_id: 'x', question_id: 'speed_trend', category: 'direct_dynamics', oracle_label: 'accelerating', model_answer: 'steady', source: 'carla' },
      { qa_id: 'qa_3', clip_id: 'x', question_id: 'stop_and_go', category: 'direct_dynamics', oracle_label: 'no', model_answer: 'no', source: 'carla' },
    ]);
  });

  it('selectFrames keeps the full ground truth and picks frames and timestamps', () => {
    const c = selectFrames({ ...clip, frames: grid.map((t) => `f${t}`), timestamps: Float64Array.from(grid) }, [0, 15, 30]);
    expect(c.frames).toEqual(['f0', 'f1.5', 'f3']);
    expect(Array.from(c.timestamps)).toEqual([0, 1.5, 3]);
    expect(c.groundTruth).toBe(straight);
  });
});

describe('egogeo baseline: bad input', () => {
  it('a missing sequence directory: one line naming it, exit 1', async () => {
    const r = await cli('baseline', '--kitti', '/nonexistent/seq');
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain('/nonexistent/seq');
  });
  it('a bad --frames value', async () => {
    const r = await cli('baseline', '--kitti', '/nonexistent/seq', '--frames', 'ten');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/--frames/);
  });
  it('a bad --resolution value: one line naming the flag and its choices', async () => {
    const r = await cli('baseline', '--kitti', '/nonexistent/seq', '--frames', '10', '--resolution', 'quarter');
    expect(r.code).toBe(1);
    expect(r.err).toBe("egogeo: --resolution must be one of auto, half, full, got 'quarter'\n");
  });
});
