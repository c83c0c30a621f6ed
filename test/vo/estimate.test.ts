/**
 * Both tracking sizes (resolution 'auto', src/vo/estimate.ts): the engine runs a clip under both
 * option sets and keeps the estimate whose speeds the smoother is surer of.
 */
import { describe, expect, it } from 'vitest';
import type { Clip } from '../../src/core/clip.js';
import { engineConfig, engineInput } from '../../src/vo/config.js';
import { estimateClip, estimateClipAsync, speedUncertainty } from '../../src/vo/estimate.js';
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

describe.skipIf(!NATIVE_BUILT)('estimateClip with the other tracking size', () => {
  // 10 frames 0.33 s apart on a rendered road at 8 m/s: frames far apart, so 'auto' hands both sizes.
  const sim = drivingClip({ frames: 10, speed: 8, yawRate: 0.05, seed: 11, fps: 3 });
  const clip: Clip = {
    id: 'wide', source: 'synthetic', index: 0, qa: [],
    camera: { intrinsics: sim.intrinsics, height: sim.cameraHeight }, frames: sim.frames, timestamps: sim.timestamps,
  };
  const input = engineInput(clip as never, engineConfig({ resolution: 'auto' }));

  it('keeps the estimate the smoother is surer of, bit for bit the one that size gives alone', async () => {
    expect(input.alternative).toBeDefined();
    const half = estimateClip(input.clip, input.options), full = estimateClip(input.clip, input.alternative);
    const u = [speedUncertainty(half.native, input.clip.timestamps), speedUncertainty(full.native, input.clip.timestamps)];
    expect(u.every(Number.isFinite), JSON.stringify(u)).toBe(true);
    // The two sizes measure differently: the rule has something to choose.
    expect(u[0]).not.toBe(u[1]);
    const kept = u[1] < u[0] ? full : half;
    const both = estimateClip(input.clip, input.options, input.alternative);
    expect(Array.from(both.trajectory.x)).toEqual(Array.from(kept.trajectory.x));
    expect(Array.from(both.native.positions)).toEqual(Array.from(kept.native.positions));
    const bothAsync = await estimateClipAsync(input.clip, input.options, input.alternative);
    expect(Array.from(bothAsync.native.positions)).toEqual(Array.from(kept.native.positions));
    // Listed the other way round, the same estimate is kept.
    expect(Array.from(estimateClip(input.clip, input.alternative, input.options).native.positions)).toEqual(Array.from(kept.native.positions));
  }, 60_000);
});
