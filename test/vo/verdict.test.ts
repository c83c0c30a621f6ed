/**
 * The quality verdict (src/vo/quality.ts) on clips the tests render, through a run's clip task
 * (`runClipTask`: the published 10 frames at resolution auto, or every frame): a clean clip is
 * 'ok', a forced scale failure (the road flattened to one grey) is 'failed', and on a small set of
 * clean and degraded clips the flagged ones have clearly larger speed errors than the rest.
 * bench/verdict.mjs measures the same on rendered sets, the published-layout stand-in and KITTI.
 */
import { describe, expect, it } from 'vitest';
import type { ClipQuality } from '../../src/io/trajectories.js';
import { parseTum } from '../../src/io/trajectories.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../../src/oracle/index.js';
import { engineConfig } from '../../src/vo/config.js';
import { drivingClip, prng } from '../helpers/render.js';
import { NATIVE_BUILT } from '../run/fixtures.js';

type Frame = { data: Uint8Array; width: number; height: number };
type Degrade = (frames: Frame[], row: number, seed: number) => Frame[];

const map = (frames: Frame[], f: (d: Uint8Array, width: number) => void) =>
  frames.map((fr) => {
    const d = Uint8Array.from(fr.data);
    f(d, fr.width);
    return { ...fr, data: d };
  });
const DEGRADE: Record<string, Degrade> = {
  clean: (frames) => frames,
  // A forced scale failure: the road below the horizon one grey (nothing to measure its distance on).
  flat: (frames, row) => map(frames, (d, w) => d.fill(110, row * w)),
  // The road's texture at 15% of its contrast: tracked poorly, its distances loose.
  faint: (frames, row) => map(frames, (d, w) => {
    for (let i = row * w; i < d.length; i++) d[i] = 110 + (d[i] - 110) * 0.15;
  }),
  // Sensor noise, ±40 grey levels uniform, every frame.
  noisy: (frames, _row, seed) => {
    const rnd = prng(seed);
    return map(frames, (d) => {
      for (let i = 0; i < d.length; i++) d[i] = Math.max(0, Math.min(255, d[i] + 80 * (rnd() - 0.5)));
    });
  },
};

/** A rendered clip (constant speed and yaw rate, 3 s at 10 Hz) degraded, through a run's clip task: its verdict and speed RMSE. */
async function verdictOf(speed: number, yawRate: number, seed: number, degrade: string, frames: number | null): Promise<{ quality: ClipQuality; rmse: number }> {
  const { runClipTask } = await import('../../src/run/task.js');
  const clip = drivingClip({ frames: 31, speed, yawRate, seed, supersample: 1 });
  const horizon = Math.ceil(clip.intrinsics.cy) + 4;
  const questions = loadQuestions();
  const out = await runClipTask({
    clip: { index: 0, id: `${degrade}-${speed}`, source: 'synthetic', frames: DEGRADE[degrade](clip.frames, horizon, seed), timestamps: clip.timestamps, camera: { intrinsics: clip.intrinsics, height: clip.cameraHeight }, qa: [] },
    qa: [],
    engine: engineConfig({ frames }),
    config: DEFAULT_QUESTIONS_PATH,
    questionsDoc: questions.document,
    questionIds: questions.questions.map((q) => q.id),
    qaBase: 0,
  }, { async: true }); // the engine on libuv's pool: the test worker's event loop stays free
  // The true speed is constant: the estimate's speed between consecutive poses against it (bench/lib/speed-rmse.mjs).
  const t = parseTum(out.tum);
  const v = Array.from({ length: t.t.length - 1 }, (_, k) => Math.hypot(t.x[k + 1] - t.x[k], t.y[k + 1] - t.y[k]) / (t.t[k + 1] - t.t[k]));
  return { quality: out.quality, rmse: Math.sqrt(v.reduce((a, x) => a + (x - speed) ** 2, 0) / v.length) };
}

const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

describe.skipIf(!NATIVE_BUILT)('the quality verdict on rendered clips', () => {
  it('all frames: a clean clip is ok, a flattened road fails, a faint one is weak and off', async () => {
    const clean = await verdictOf(10, 0, 3, 'clean', null);
    expect(clean.quality.verdict, JSON.stringify(clean.quality)).toBe('ok');
    expect(clean.rmse).toBeLessThan(0.5);
    const flat = await verdictOf(10, 0, 3, 'flat', null);
    expect(flat.quality.verdict, JSON.stringify(flat.quality)).toBe('failed');
    const faint = await verdictOf(8, 0.15, 4, 'faint', null);
    expect(faint.quality.verdict, JSON.stringify(faint.quality)).toBe('weak');
    expect(faint.rmse).toBeGreaterThan(4 * clean.rmse);
  }, 120_000);

  it('the published 10 frames: flagged clips have clearly larger speed errors than the ok ones', async () => {
    const rows: { name: string; verdict: string; rmse: number }[] = [];
    for (const [speed, yawRate, seed] of [[10, 0, 3], [8, 0.15, 4], [14, -0.1, 5]] as const) {
      for (const degrade of Object.keys(DEGRADE)) {
        const r = await verdictOf(speed, yawRate, seed, degrade, 10);
        rows.push({ name: `${degrade} ${speed} m/s`, verdict: r.quality.verdict, rmse: r.rmse });
      }
    }
    const info = JSON.stringify(rows.map((r) => `${r.name}: ${r.verdict} ${r.rmse.toFixed(2)}`));
    // A clean straight clip is ok; every flattened road fails (the scale collapsed).
    expect(rows.find((r) => r.name === 'clean 10 m/s')!.verdict, info).toBe('ok');
    for (const r of rows.filter((r) => r.name.startsWith('flat'))) expect(r.verdict, info).toBe('failed');
    // The separation, failed clips aside (they read as standing still: trivially off): weak against ok.
    const ok = rows.filter((r) => r.verdict === 'ok').map((r) => r.rmse), weak = rows.filter((r) => r.verdict === 'weak').map((r) => r.rmse);
    expect(ok.length, info).toBeGreaterThanOrEqual(3);
    expect(weak.length, info).toBeGreaterThanOrEqual(3);
    expect(median(weak), info).toBeGreaterThan(2 * median(ok));
  }, 300_000);
});
