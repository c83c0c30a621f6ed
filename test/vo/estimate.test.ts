/**
 * Both tracking sizes (resolution 'auto', src/vo/estimate.ts): the engine runs a clip at full size,
 * and at half size too only where full size's own quality verdict is not ok; then it keeps full
 * size's estimate unless its scale failed or the two disagree grossly on the distance travelled,
 * then the one whose speeds the smoother is surer of.
 */
import { describe, expect, it } from 'vitest';
import type { Clip } from '../../src/core/clip.js';
import { engineConfig, engineInput, GROSS_DISAGREEMENT } from '../../src/vo/config.js';
import { pathLength } from '../../src/core/trajectory.js';
import { estimateClip, estimateClipAsync, kept, speedUncertainty } from '../../src/vo/estimate.js';
import { clipQuality } from '../../src/vo/quality.js';
import { drivingClip } from '../helpers/render.js';
import { NATIVE_BUILT } from '../run/fixtures.js';

type Pair = { quality: string; distance: number; speedSigma: number };
const pairs = (ps: Pair[]) => ({ pairs: ps }) as never;
const ok = (distance: number, speedSigma: number): Pair => ({ quality: 'ok', distance, speedSigma });

describe('speedUncertainty', () => {
  const t = [0, 0.5, 1, 1.5];
  it('the mean relative posterior sd of the moving pairs; a moving pair without a distance counts as 1', () => {
    // 2 m in 0.5 s is 4 m/s: 0.2 m/s is 5%; 1 m in 0.5 s is 2 m/s: 0.4 m/s is 20%.
    expect(speedUncertainty(pairs([ok(2, 0.2), ok(1, 0.4), { quality: 'low_parallax', distance: 0, speedSigma: 0 }]), t)).toBeCloseTo(0.125, 12);
    expect(speedUncertainty(pairs([ok(2, 0.2), ok(0, 0), ok(2, 0.2)]), t)).toBeCloseTo((0.05 + 1 + 0.05) / 3, 12);
  });
  it('infinite when nothing moves or an uncertainty is unknown (scale none); 0 with exact speeds', () => {
    expect(speedUncertainty(pairs([{ quality: 'low_parallax', distance: 0, speedSigma: 0 }]), [0, 1])).toBe(Infinity);
    expect(speedUncertainty(pairs([ok(2, NaN)]), [0, 1])).toBe(Infinity);
    expect(speedUncertainty(pairs([ok(2, 0), ok(3, 0)]), t)).toBe(0);
  });
});

describe('kept: which of the two sizes\' estimates stands', () => {
  const t = [0, 1, 2];
  type P = Pair & { roadDistance: number; roadPoints: number };
  const road = (distance: number, speedSigma: number): P => ({ ...ok(distance, speedSigma), roadDistance: distance, roadPoints: 40 });
  const unscaled: P = { ...ok(0, 0), roadDistance: 0, roadPoints: 0 };
  // A straight path of `metres` whose two pairs carry `ps`.
  const est = (metres: number, ps: P[]) => ({ trajectory: { x: Float64Array.from([0, metres / 2, metres]), y: new Float64Array(3) }, native: { pairs: ps }, quality: clipQuality({ pairs: ps } as never, { timestamps: t }) }) as never;

  it('the first (full size) where the two agree on the distance, even when the smoother is surer of the second', () => {
    const first = est(10, [road(5, 1), road(5, 1)]), second = est(12, [road(6, 0.1), road(6, 0.1)]);
    expect(kept(t, first, second)).toBe(first);
    // A factor of exactly GROSS_DISAGREEMENT still agrees.
    const far = est(10 * GROSS_DISAGREEMENT, [road(7.5, 0.1), road(7.5, 0.1)]);
    expect(kept(t, first, far)).toBe(first);
  });
  it('the surer where they disagree grossly: one of them lost the road or the scale', () => {
    const collapsed = est(0.6, [road(0.3, 0.2), road(0.3, 0.2)]), good = est(10, [road(5, 0.2), road(5, 0.2)]);
    expect(kept(t, collapsed, good)).toBe(good);
    const long = est(20, [road(10, 0.5), road(10, 0.5)]), half = est(10, [road(5, 2), road(5, 2)]);
    expect(kept(t, long, half)).toBe(long);
  });
  it('the surer where the first one\'s scale failed, whatever the distances', () => {
    const failed = est(10, [unscaled, unscaled]), second = est(11, [road(5.5, 0.3), road(5.5, 0.3)]);
    expect(kept(t, failed, second)).toBe(second);
  });
});

describe.skipIf(!NATIVE_BUILT)('estimateClip with the other tracking size', () => {
  // 10 frames 0.33 s apart on a rendered road at 8 m/s (24 m): frames far apart, so 'auto' hands both sizes.
  const input = (seed: number) => {
    const sim = drivingClip({ frames: 10, speed: 8, yawRate: 0.05, seed, fps: 3 });
    const clip: Clip = {
      id: `wide${seed}`, source: 'synthetic', index: 0, qa: [],
      camera: { intrinsics: sim.intrinsics, height: sim.cameraHeight }, frames: sim.frames, timestamps: sim.timestamps,
    };
    return engineInput(clip as never, engineConfig({ resolution: 'auto' }));
  };
  const sizes = (i: ReturnType<typeof input>) => {
    expect(i.alternative).toBeDefined();
    const full = estimateClip(i.clip, i.options), half = estimateClip(i.clip, i.alternative);
    return { full, half, ratio: pathLength(full.trajectory) / pathLength(half.trajectory) };
  };

  it('keeps full size where both sizes track, bit for bit the estimate that size gives alone', async () => {
    const i = input(12);
    const { full, half, ratio } = sizes(i);
    // Both sizes measured the drive, and differently (here the smoother is about as sure of either).
    expect(pathLength(full.trajectory)).toBeGreaterThan(22);
    expect(ratio).toBeGreaterThan(1 / GROSS_DISAGREEMENT);
    expect(ratio).toBeLessThan(GROSS_DISAGREEMENT);
    expect(Array.from(full.native.positions)).not.toEqual(Array.from(half.native.positions));
    const both = estimateClip(i.clip, i.options, i.alternative);
    expect(Array.from(both.trajectory.x)).toEqual(Array.from(full.trajectory.x));
    expect(Array.from(both.native.positions)).toEqual(Array.from(full.native.positions));
    const bothAsync = await estimateClipAsync(i.clip, i.options, i.alternative);
    expect(Array.from(bothAsync.native.positions)).toEqual(Array.from(full.native.positions));
    expect(both.runs.map((r) => r.downsample)).toEqual([1]); // full size's verdict is ok: half size never ran
  }, 60_000);

  it('runs half size where full size doubts itself (verdict not ok, or little tracked road), then keeps the surer', async () => {
    const i = input(11);
    const { half } = sizes(i);
    // Full size's own verdict is ok here, but its level rests on the tracked road of 3 of its 9
    // moving pairs, and is wrong (1.7 m a pair where the car drives 2.67 m): half size runs, the
    // two disagree by more than a third, and half size, the surer, is kept.
    const lost = estimateClip(i.clip, i.options, i.alternative);
    expect(lost.runs.map((r) => r.downsample)).toEqual([1, 2]);
    expect(lost.sizeRatio!).toBeLessThan(1 / GROSS_DISAGREEMENT);
    expect(Array.from(lost.native.positions)).toEqual(Array.from(half.native.positions));
    // Full size starved of corners: most pairs without a pose, its verdict 'failed'; half size runs and is kept.
    const starved = { ...i.options, maxFeatures: 16, fastThreshold: 120 };
    const first = estimateClip(i.clip, starved);
    expect(clipQuality(first.native, { timestamps: i.clip.timestamps }).verdict).toBe('failed');
    for (const both of [estimateClip(i.clip, starved, i.alternative), await estimateClipAsync(i.clip, starved, i.alternative)]) {
      expect(both.runs.map((r) => r.downsample)).toEqual([1, 2]);
      expect(both.sizeRatio).toBeDefined();
      expect(Array.from(both.native.positions)).toEqual(Array.from(half.native.positions));
    }
  }, 60_000);
});
