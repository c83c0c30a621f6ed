/**
 * The clip quality verdict (src/vo/quality.ts) and what a run does with it: a collapsed scale is
 * 'failed'; by default every question is still answered (from the estimate, the verdict beside it),
 * and with `abstain` the scale-dependent answers are withheld (null) while the heading questions
 * keep theirs; the verdict rides in the trajectory file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { qualityFromTum } from '../../src/io/trajectories.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../../src/oracle/index.js';
import { engineConfig } from '../../src/vo/config.js';
import { clipQuality, scaleFree, WEAK_SPEED_UNCERTAINTY } from '../../src/vo/quality.js';

type Pair = { quality: string; distance: number; roadDistance: number; roadPoints: number; speedSigma: number };
// A pair 1 s long (timestamps 0, 1, 2, …): its speed is its distance; speedSigma relative to it is `rel`.
const pair = (quality: string, distance: number, roadDistance: number, roadPoints = roadDistance > 0 ? 40 : 0, rel = 0.05): Pair => ({ quality, distance, roadDistance, roadPoints, speedSigma: rel * distance });
const pairs = (n: number, f: (k: number) => Pair) => ({ pairs: Array.from({ length: n }, (_, k) => f(k)) }) as never;
const seconds = (n: number) => Array.from({ length: n + 1 }, (_, i) => i);

describe('clipQuality', () => {
  it('ok when the smoother is as sure of the speeds as the road level allows; standing still is ok', () => {
    expect(clipQuality(pairs(9, () => pair('ok', 1, 1)), { timestamps: seconds(9) })).toMatchObject({ verdict: 'ok', speed_uncertainty: 0.05 });
    expect(clipQuality(pairs(9, () => pair('low_parallax', 0, 0)), { timestamps: seconds(9) })).toMatchObject({ verdict: 'ok', speed_uncertainty: null });
  });
  it('failed when most moving pairs have no metric distance (a collapsed scale)', () => {
    const q = clipQuality(pairs(9, (k) => pair('ok', k < 3 ? 2 : 0, 0)), { timestamps: seconds(9) });
    expect(q).toMatchObject({ verdict: 'failed', moving_pairs: 9, measured_pairs: 3, road_pairs: 0 });
    expect(q.reasons).toEqual(['scale collapsed: 6 of 9 moving pairs have no metric distance']);
  });
  it('failed when most pairs have no pose; a few lost pairs alone are not judged', () => {
    expect(clipQuality(pairs(4, (k) => (k < 2 ? pair('too_few_tracks', 0, 0) : pair('ok', 2, 2)))).verdict).toBe('failed');
    expect(clipQuality(pairs(9, (k) => (k === 4 ? pair('degenerate', 0, 0) : pair('ok', 2, 2))), { timestamps: seconds(9) }).verdict).toBe('ok');
  });
  it('weak when the smoother is unsure of the speeds: mean relative sigma above 1.5 × the road level\'s 5%', () => {
    expect(WEAK_SPEED_UNCERTAINTY).toBeCloseTo(0.075, 12);
    const q = clipQuality(pairs(9, (k) => pair('ok', 2, 2, 40, k < 3 ? 0.15 : 0.05)), { timestamps: seconds(9) });
    expect(q).toMatchObject({ verdict: 'weak', speed_uncertainty: 0.0833 });
    expect(q.reasons).toEqual(["speeds uncertain: the smoother's mean relative speed sigma is 8.3% over 9 moving pairs (above 7.5%; road tracked on 9)"]);
    // Just below: ok. Without the frames' times the uncertainty is not judged (`kept` reads only 'failed').
    expect(clipQuality(pairs(9, (k) => pair('ok', 2, 2, 40, k < 2 ? 0.16 : 0.05)), { timestamps: seconds(9) }).verdict).toBe('ok');
    expect(clipQuality(pairs(9, () => pair('ok', 2, 2, 40, 0.5))).verdict).toBe('ok');
    // A moving pair with no metric distance counts as unknown to within itself (relative sigma 1).
    expect(clipQuality(pairs(9, (k) => pair('ok', k === 0 ? 0 : 2, 2)), { timestamps: seconds(9) }).verdict).toBe('weak');
    // No metric scale (scale 'none': no sigmas): weak, said so.
    expect(clipQuality(pairs(9, () => ({ ...pair('ok', 2, 0), speedSigma: NaN })), { timestamps: seconds(9) }).reasons).toEqual(['the speeds carry no uncertainty (no metric scale)']);
  });
  it('how much road was tracked is reported, not judged: direct alignments alone with tight speeds are ok', () => {
    const q = clipQuality(pairs(9, () => pair('ok', 2, 2, 3)), { timestamps: seconds(9) });
    expect(q).toMatchObject({ verdict: 'ok', road_pairs: 0, moving_pairs: 9 });
  });
  it('weak when the two tracking sizes disagree grossly on the distance travelled (more than a third)', () => {
    const clean = pairs(9, () => pair('ok', 2, 2));
    expect(clipQuality(clean, { timestamps: seconds(9), sizeRatio: 1.3 })).toMatchObject({ verdict: 'ok', size_ratio: 1.3 });
    expect(clipQuality(clean, { timestamps: seconds(9), sizeRatio: 0.76 }).verdict).toBe('ok');
    const q = clipQuality(clean, { timestamps: seconds(9), sizeRatio: 0.7 });
    expect(q).toMatchObject({ verdict: 'weak', size_ratio: 0.7, reasons: ['the two tracking sizes disagree on the distance travelled: 0.70× (more than a third apart)'] });
    expect(clipQuality(clean, { timestamps: seconds(9), sizeRatio: 1.4 }).verdict).toBe('weak');
    // One size travelled nothing: as gross as it gets (the ratio is not finite, so JSON holds null).
    expect(clipQuality(clean, { timestamps: seconds(9), sizeRatio: Infinity })).toMatchObject({ verdict: 'weak', size_ratio: null, reasons: ['the two tracking sizes disagree on the distance travelled: one of them travelled nothing (more than a third apart)'] });
    expect(clipQuality(clean, { timestamps: seconds(9), sizeRatio: 0 }).verdict).toBe('weak');
    expect(clipQuality(clean, { timestamps: seconds(9), sizeRatio: NaN }).verdict).toBe('ok');
    // A failed clip stays failed.
    expect(clipQuality(pairs(9, () => pair('ok', 0, 0)), { timestamps: seconds(9), sizeRatio: 3 }).verdict).toBe('failed');
  });
  it('the heading questions need no scale; every other published question does', () => {
    const free = loadQuestions().questions.filter(scaleFree).map((q) => q.id).sort();
    expect(free).toEqual(['significant_heading_change', 'yaw_rate_turn_direction']);
  });
});

// A run's clip task over an engine stubbed to give a collapsed scale on a left turn.
vi.mock('../../src/vo/estimate.js', async (orig) => ({
  ...(await orig<typeof import('../../src/vo/estimate.js')>()),
  estimateClip: () => {
    const t = Array.from({ length: 10 }, (_, i) => i / 3);
    const trajectory = Object.assign(makeTrajectory('c', { t, x: t.map(() => 0), y: t.map(() => 0), yaw: t.map((s) => 0.3 * s) }), {
      speedProfile: { speed: t.map(() => 0), speed_sigma: t.map(() => NaN), accel: t.map(() => 0), accel_sigma: t.map(() => NaN) },
    });
    const native = { width: 64, height: 64, pairs: t.slice(1).map(() => pair('ok', 0, 0)) };
    return { trajectory, native, quality: clipQuality(native as never, { timestamps: t }) };
  },
}));

describe('a run with a collapsed scale', () => {
  const dir = mkdtempSync(join(tmpdir(), 'egogeo-quality-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const collapsedTask = (abstain: boolean) => {
    const frames = Array.from({ length: 10 }, (_, i) => join(dir, `${i}.pgm`));
    for (const f of frames) writeFileSync(f, Buffer.concat([Buffer.from('P5\n64 64\n255\n'), Buffer.alloc(64 * 64, 128)]));
    const questions = loadQuestions();
    return {
      clip: { index: 0, id: 'c', source: 'synthetic', frames, timestamps: Array.from({ length: 10 }, (_, i) => i / 3), camera: {}, qa: [] },
      qa: [],
      engine: engineConfig(),
      config: DEFAULT_QUESTIONS_PATH,
      questionsDoc: questions.document,
      questionIds: questions.questions.map((q) => q.id),
      qaBase: 0,
      ...(abstain ? { abstain: true } : {}),
    };
  };
  it('answers every question by default, from the estimate, and writes the verdict into the trajectory file', async () => {
    const { runClipTask } = await import('../../src/run/task.js');
    const out = await runClipTask(collapsedTask(false));
    expect(out.quality.verdict).toBe('failed');
    const answers = Object.fromEntries(out.records.map((r) => [r.question_id, r.model_answer]));
    expect(answers.yaw_rate_turn_direction).toBe('left');
    expect(Object.values(answers).filter((a) => a === null)).toHaveLength(0);
    expect(answers.speed_regime).toBe('stopped'); // what the collapsed estimate reads; the verdict says why
    expect(qualityFromTum(out.tum)).toEqual(out.quality);
  });
  it('with abstain: withholds the scale-dependent answers, keeps the heading ones', async () => {
    const { runClipTask } = await import('../../src/run/task.js');
    const out = await runClipTask(collapsedTask(true));
    expect(out.quality.verdict).toBe('failed');
    const answers = Object.fromEntries(out.records.map((r) => [r.question_id, r.model_answer]));
    expect(answers.yaw_rate_turn_direction).toBe('left');
    expect(answers.significant_heading_change).toBe('yes');
    expect(answers.speed_regime).toBeNull(); // not "stopped"
    expect(answers.stop_and_go).toBeNull();
    expect(Object.values(answers).filter((a) => a === null)).toHaveLength(12);
    expect(qualityFromTum(out.tum)).toEqual(out.quality);
  });

  it('a moving clip whose road shows no texture (no road points) is flagged, never passed off as measured', async () => {
    const { runClipTask } = await import('../../src/run/task.js');
    const { drivingClip } = await import('../helpers/render.js');
    const clip = drivingClip({ frames: 21, speed: 10, yawRate: 0.1, seed: 3 });
    // The road region (below the horizon) flattened to one grey: the wall alone is left to track.
    const horizon = Math.ceil(clip.intrinsics.cy) + 4;
    const frames = clip.frames.map((f) => {
      const d = Uint8Array.from(f.data);
      d.fill(110, horizon * f.width);
      return { ...f, data: d };
    });
    const questions = loadQuestions();
    const out = await runClipTask({
      clip: { index: 0, id: 'noroad', source: 'synthetic', frames, timestamps: clip.timestamps, camera: { intrinsics: clip.intrinsics, height: clip.cameraHeight }, qa: [] },
      qa: [],
      engine: engineConfig(),
      config: DEFAULT_QUESTIONS_PATH,
      questionsDoc: questions.document,
      questionIds: questions.questions.map((q) => q.id),
      qaBase: 0,
    });
    expect(out.quality.verdict, JSON.stringify(out.quality)).not.toBe('ok');
    expect(out.quality.reasons.join('; ')).toMatch(/road|metric|scale|pose/);
    const answers = Object.fromEntries(out.records.map((r) => [r.question_id, r.model_answer]));
    expect(Object.values(answers).filter((a) => a === null)).toHaveLength(0); // answered by default, flagged beside
    if (out.quality.verdict !== 'failed') expect(answers.speed_regime).not.toBe('stopped');
  });
});
