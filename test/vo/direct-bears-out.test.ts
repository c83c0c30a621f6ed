/**
 * `directBearsOut` (src/vo/estimate.ts): where the tracked road measured under half a clip's
 * moving pairs, the second tracking size runs unless the direct road alignments that found the
 * road cover at least half the moving pairs and their median distance agrees with the fused one
 * within GROSS_DISAGREEMENT. Constructed pairs; the rendered cases it must still send to half size
 * are in test/vo/estimate.test.ts (a consistent wrong level) and test/vo/verdict.test.ts (a faint road).
 */
import { describe, expect, it } from 'vitest';
import { GROSS_DISAGREEMENT } from '../../src/vo/config.js';
import { directBearsOut } from '../../src/vo/estimate.js';

type P = { quality: string; distance: number; directDistance: number; directScore: number };
const pair = (distance: number, directDistance: number, directScore: number, quality = 'ok'): P => ({ quality, distance, directDistance, directScore });
const nat = (pairs: P[]) => ({ pairs }) as never;

describe('directBearsOut', () => {
  it('agrees where most moving pairs have a road-finding direct reading near the fused distance', () => {
    expect(directBearsOut(nat(Array.from({ length: 9 }, (_, k) => pair(2.6, 2.6 * (1 + 0.02 * (k - 4)), 0.9))), 9)).toBe(true);
  });
  it('disagrees where their median is more than GROSS_DISAGREEMENT away, on either side', () => {
    const f = GROSS_DISAGREEMENT * 1.02;
    expect(directBearsOut(nat(Array.from({ length: 9 }, () => pair(1.7, 1.7 * f, 0.9))), 9)).toBe(false);
    expect(directBearsOut(nat(Array.from({ length: 9 }, () => pair(1.7, 1.7 / f, 0.9))), 9)).toBe(false);
    const g = GROSS_DISAGREEMENT * 0.98;
    expect(directBearsOut(nat(Array.from({ length: 9 }, () => pair(1.7, 1.7 * g, 0.9))), 9)).toBe(true);
  });
  it('reads only alignments that found the road (score ≥ 0.5): low-score readings neither confirm nor refute', () => {
    // The rendered case of estimate.test.ts: fused 1.70 m, good readings ~2.65, poor ones scattered low.
    const pairs = [pair(1.7, 0.59, 0.29), pair(1.7, 1.22, 0.48), pair(1.7, 0.33, 0.35), pair(1.71, 2.63, 0.93), pair(1.71, 2.68, 0.91), pair(1.71, 2.76, 0.93), pair(1.72, 1.19, 0.52), pair(1.73, 1.61, 0.51), pair(1.75, 2.51, 0.78)];
    expect(directBearsOut(nat(pairs), 9)).toBe(false);
    // The same clip with every score good: the median (1.61 / 1.73) now agrees.
    expect(directBearsOut(nat(pairs.map((p) => ({ ...p, directScore: 0.9 }))), 9)).toBe(true);
  });
  it('needs readings on at least half the moving pairs; pairs not moving, not run or unmeasured do not count', () => {
    const few = [pair(2, 2, 0.9), pair(2, 2, 0.9), pair(2, 2, 0.4), pair(2, 2, 0.4), pair(2, 2, 0.4)];
    expect(directBearsOut(nat(few), 5)).toBe(false);
    expect(directBearsOut(nat([...few.slice(0, 3).map((p) => ({ ...p, directScore: 0.9 })), ...few.slice(3)]), 5)).toBe(true);
    expect(directBearsOut(nat([pair(2, 2, 0.9, 'low_parallax'), pair(2, 0, 0), pair(0, 2, 0.9)]), 3)).toBe(false);
    expect(directBearsOut(nat([]), 0)).toBe(false);
  });
});
