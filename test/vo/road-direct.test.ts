/**
 * The direct road alignment's own readings (native/vo/scale/road_direct.cc; each pair's `directDistance`,
 * which a wide-baseline clip measures on every pair) against the truth, at the published
 * protocol's 10 frames (0.33 s apart). The alignment scores each distance on the current frame's
 * road mapped back into the previous frame, a fixed set of samples; mapped forward, the near road
 * left the frame as the distance grew, the far road that remained correlated at any distance, and
 * the readings ran long (KITTI 06: +49% median, 00: +23%). Readings the engine would use (a
 * correlation of 0.5 or more) count.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readDataset } from '../../src/datasets/benchmark.js';
import { readNpzArrays } from '../../src/datasets/groundtruth.js';
import { kittiClips, readKittiSequence } from '../../src/datasets/kitti.js';
import { engineConfig, engineInput } from '../../src/vo/config.js';
import { estimateClip } from '../../src/vo/estimate.js';
import { evenFrames, type LoadedClip, loadFrames, selectFrames } from '../../src/vo/frames.js';
import { needsShared, sharedPath } from '../helpers/shared.js';
import { cli, ensureDist, NATIVE_BUILT } from '../run/fixtures.js';

const MIN_SCORE = 0.5; // native/vo/scale/road_scale.cc kMinDirectScore

/** Per pair with a usable reading: log(direct distance / true distance). */
function readings(clip: LoadedClip, truth: (i: number) => [number, number]): number[] {
  const est = estimateClip(clip, engineInput(clip, engineConfig()).options); // the run's defaults
  const out: number[] = [];
  est.native.pairs.forEach((p, k) => {
    const [a, b] = [truth(k), truth(k + 1)];
    const d = Math.hypot(b[0] - a[0], b[1] - a[1]);
    if (p.quality === 'ok' && d > 0.5 && p.directDistance > 0 && p.directScore >= MIN_SCORE) out.push(Math.log(p.directDistance / d));
  });
  return out;
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const summary = (v: number[]) => `n ${v.length}, median ${(100 * median(v)).toFixed(1)}%, ${v.map((x) => (100 * x).toFixed(0)).join(' ')}`;

const KITTI = needsShared('the direct alignment on KITTI 00 and 06 at 10 frames', 'data/kitti/00/poses.txt', 'data/kitti/06/poses.txt');

describe.skipIf(!NATIVE_BUILT || !KITTI)('direct road alignment on KITTI at 10 frames', () => {
  const errors = (seq: string) =>
    kittiClips(readKittiSequence(sharedPath('data/kitti', seq))).flatMap((full) => {
      const idx = evenFrames(full.frames.length, 10);
      const gt = full.groundTruth!;
      return readings(selectFrames(full, idx), (i) => [gt.x[idx[i]], gt.y[idx[i]]]);
    });

  it('06 (parked cars beside a wide road): the median reading within 10% of the truth', () => {
    const e = errors('06');
    expect(e.length).toBeGreaterThanOrEqual(15);
    expect(Math.abs(median(e)), summary(e)).toBeLessThan(0.1);
  }, 120_000);

  it('00 (urban): the median reading within 18%, and fewer than 40% of the readings off by more than 25%', () => {
    const e = errors('00');
    expect(e.length).toBeGreaterThanOrEqual(200);
    expect(median(e), summary(e)).toBeLessThan(0.18);
    expect(e.filter((x) => Math.abs(x) > Math.log(1.25)).length / e.length, summary(e)).toBeLessThan(0.4);
  }, 240_000);
});

describe.skipIf(!NATIVE_BUILT)('direct road alignment on rendered CARLA-like clips at 10 frames', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'egogeo-direct-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  // A guard: the rendered streets' sides are flat, so the forward mapping read them without the
  // bias too (median +0.1% on this seed, the same two readings off by more than 25%).
  it('the median reading within 2% of the truth, and at most one in 10 off by more than 25%', () => {
    ensureDist();
    const ds = join(tmp, 'ds');
    const s = cli(['synth', '--clips', '6', '--seed', '47', '--preset', 'carla', '--out', ds, '--no-progress']);
    expect(s.code, s.stderr).toBe(0);
    const e = readDataset(ds).clips.flatMap((c) => {
      const g = readNpzArrays(c.arrays!);
      const full = loadFrames(c);
      const idx = evenFrames(full.frames.length, 10);
      const at = (i: number): [number, number] => {
        const j = g.timestamps.findIndex((t) => Math.abs(t - full.timestamps[idx[i]]) < 1e-6);
        return [g.x[j], g.y[j]];
      };
      return readings(selectFrames(full, idx), at);
    });
    expect(e.length).toBeGreaterThanOrEqual(20);
    expect(Math.abs(median(e)), summary(e)).toBeLessThan(0.02);
    expect(e.filter((x) => Math.abs(x) > Math.log(1.25)).length, summary(e)).toBeLessThanOrEqual(Math.floor(e.length / 10));
  }, 180_000);
});
