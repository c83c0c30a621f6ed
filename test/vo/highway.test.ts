/**
 * The published protocol's 10 frames (0.33 s apart) at highway speed, on clips the native renderer
 * makes (`egogeo synth --speed`): 7-11 m a pair, so road points near the camera move past KLT's
 * reach and the tracked road fit has nothing to fit. The direct road alignment
 * (native/vo/scale/road_direct.cc) measures the distances; without it the scale collapses towards zero
 * (a car at 25 m/s written as standing still). Measured bounds; bench/highway.mjs measures 40 clips.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readDataset } from '../../src/datasets/benchmark.js';
import { readNpzArrays } from '../../src/datasets/groundtruth.js';
import { engineConfig, engineInput, isWideBaseline, WIDE_BASELINE } from '../../src/vo/config.js';
import { estimateClip } from '../../src/vo/estimate.js';
import { loadFrames } from '../../src/vo/frames.js';
import { clipQuality, WEAK_SPEED_UNCERTAINTY } from '../../src/vo/quality.js';
import { cli, ensureDist, NATIVE_BUILT } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-highway-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const length = (x: ArrayLike<number>, y: ArrayLike<number>, idx: readonly number[]) =>
  idx.slice(1).reduce((s, i, k) => s + Math.hypot(x[i] - x[idx[k]], y[i] - y[idx[k]]), 0);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

// These test the wide-baseline preset's road measurements at half size (WIDE_BASELINE), where
// they were found; the default also tracks at full size and keeps one (test/vo/estimate.test.ts).
describe.skipIf(!NATIVE_BUILT)('highway speed at the published 10 frames (rendered CARLA-like clips)', () => {
  it('the path length is measured (median within 5%), where the tracked road alone collapses', () => {
    ensureDist();
    const ds = join(tmp, 'ds');
    const s = cli(['synth', '--clips', '4', '--seed', '31', '--speed', '22:30', '--out', ds, '--no-progress']);
    expect(s.code, s.stderr).toBe(0);
    const errs = { direct: [] as number[], tracked: [] as number[] };
    for (const c of readDataset(ds).clips) {
      const g = readNpzArrays(c.arrays!);
      const { clip, options } = engineInput(loadFrames(c), engineConfig({ frames: 10, resolution: 'half' }));
      const idx = Array.from(clip.timestamps, (t) => g.timestamps.findIndex((u) => Math.abs(u - t) < 1e-6));
      const truth = length(g.x, g.y, idx);
      for (const [k, extra] of [['direct', {}], ['tracked', { directRoad: false }]] as const) {
        const est = estimateClip(clip, { ...options, ...extra }).trajectory;
        errs[k].push(length(est.x, est.y, Array.from(est.x, (_, i) => i)) / truth - 1);
      }
    }
    const info = JSON.stringify(errs);
    expect(Math.abs(median(errs.direct)), info).toBeLessThan(0.05);
    expect(median(errs.tracked), info).toBeLessThan(-0.5);
  }, 120_000);

  // Past KLT's reach the road tracks that survive can be aliased: a dashed lane line moved by about
  // one dash period matches the next dash, and dozens of such tracks read a small fraction of the
  // distance (0.6 m for 10.8 m), outweighing the direct alignments of the pairs around them. Where
  // the two measurements of a pair contradict each other, neither is used
  // (native/vo/scale/road_scale.cc, tracked_contradicted). On this seed the fourth clip read -92% before.
  it('no clip collapses on aliased road tracks: every path within 10%', () => {
    ensureDist();
    const ds = join(tmp, 'ds10');
    const s = cli(['synth', '--clips', '4', '--seed', '10', '--speed', '22:30', '--out', ds, '--no-progress']);
    expect(s.code, s.stderr).toBe(0);
    const errs: number[] = [];
    for (const c of readDataset(ds).clips) {
      const g = readNpzArrays(c.arrays!);
      const { clip, options } = engineInput(loadFrames(c), engineConfig({ frames: 10, resolution: 'half' }));
      const idx = Array.from(clip.timestamps, (t) => g.timestamps.findIndex((u) => Math.abs(u - t) < 1e-6));
      const est = estimateClip(clip, options).trajectory;
      errs.push(length(est.x, est.y, Array.from(est.x, (_, i) => i)) / length(g.x, g.y, idx) - 1);
    }
    for (const e of errs) expect(Math.abs(e), JSON.stringify(errs)).toBeLessThan(0.1);
  }, 120_000);

  // All frames at 20-33 m/s the tracked road points are 25-50 m away, about 35 mrad below the
  // horizon, so a road-normal pitch error of 1 mrad is a ~3% distance error. The normal is made
  // perpendicular to the clip's median heading; the per-pair essential matrices' headings scatter
  // by ~4 mrad in pitch, the bundle-adjusted ones by about half (RoadScale::solve). The rendered
  // road is flat and the camera level, so the true normal is the camera's down axis. Measured on
  // this seed: bundle headings 0.07-0.63 mrad, the pairs' 0.05-1.88 mrad.
  it('all frames: the road normal from the bundle headings is within 1 mrad of the true pitch', () => {
    ensureDist();
    const ds = join(tmp, 'ds77');
    const s = cli(['synth', '--clips', '8', '--seed', '77', '--speed', '20:33', '--out', ds, '--no-progress']);
    expect(s.code, s.stderr).toBe(0);
    const pitch = { bundle: [] as number[], pair: [] as number[] };
    const errs: number[] = [];
    for (const c of readDataset(ds).clips) {
      const g = readNpzArrays(c.arrays!);
      const { clip, options } = engineInput(loadFrames(c), engineConfig({}));
      const idx = Array.from(clip.timestamps, (t) => g.timestamps.findIndex((u) => Math.abs(u - t) < 1e-6));
      for (const [k, bundleNormal] of [['bundle', true], ['pair', false]] as const) {
        const est = estimateClip(clip, { ...options, bundleNormal });
        const n = est.native.roadNormal;
        pitch[k].push(Math.abs(Math.atan2(n[2], n[1])) * 1000);
        if (bundleNormal) errs.push(length(est.trajectory.x, est.trajectory.y, Array.from(est.trajectory.x, (_, i) => i)) / length(g.x, g.y, idx) - 1);
      }
    }
    const info = JSON.stringify({ pitch, errs });
    for (const p of pitch.bundle) expect(p, info).toBeLessThan(1);
    const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
    expect(mean(pitch.bundle), info).toBeLessThan(0.5 * mean(pitch.pair));
    for (const e of errs) expect(Math.abs(e), info).toBeLessThan(0.025);
  }, 180_000);

  // Road texture moved by ~10 m between frames 0.33 s apart can match a repeat of itself: on this
  // clip 60-90 consistent road tracks per pair read 0.2-0.8 m for 9-13 m, the relative scales agree
  // with them, and the clip came out at ~1 m/s against 30 with a verdict of 'ok'. The wide-baseline
  // preset checks every pair's tracks against its direct alignment (directCheck), so those pairs
  // lose their road distance, and the smoother is unsure of what is left: the verdict says so.
  // Never silent; the distance stays unknown.
  it('10 frames: road tracks aliased on repeating texture are caught by the direct check and flagged', () => {
    ensureDist();
    const ds = join(tmp, 'ds63');
    const s = cli(['synth', '--clips', '4', '--seed', '63', '--speed', '22:33', '--out', ds, '--no-progress']);
    expect(s.code, s.stderr).toBe(0);
    const c = readDataset(ds).clips[2];
    const g = readNpzArrays(c.arrays!);
    const { clip, options } = engineInput(loadFrames(c), engineConfig({ frames: 10, resolution: 'half' }));
    expect(isWideBaseline(clip.timestamps) && WIDE_BASELINE.directCheck).toBe(true);
    const idx = Array.from(clip.timestamps, (t) => g.timestamps.findIndex((u) => Math.abs(u - t) < 1e-6));
    const truth = length(g.x, g.y, idx);
    const unchecked = estimateClip(clip, { ...options, directCheck: false });
    const est = unchecked.trajectory;
    const err = length(est.x, est.y, Array.from(est.x, (_, i) => i)) / truth - 1;
    expect(err, 'the aliased reading this test is about').toBeLessThan(-0.5);
    // Without the check the smoother alone sees it (mean relative speed sigma ~12%): flagged too,
    // where the verdict that counted tracked road pairs called it 'ok'.
    const u = clipQuality(unchecked.native, { timestamps: clip.timestamps });
    expect(u.verdict, JSON.stringify(u)).toBe('weak');
    expect(u.speed_uncertainty!, JSON.stringify(u)).toBeGreaterThan(WEAK_SPEED_UNCERTAINTY);
    const checked = estimateClip(clip, options).native;
    const q = clipQuality(checked, { timestamps: clip.timestamps });
    expect(q.verdict, JSON.stringify(q)).not.toBe('ok');
    expect(2 * q.road_pairs, JSON.stringify(q)).toBeLessThan(q.moving_pairs);
  }, 120_000);

  // Where most pairs lost their tracked road, the direct distances lead, and they also bound what
  // the tracked road may read: on these two clips a few pairs kept 11-79 aliased road tracks
  // (0.4-1.5 m for 8-13 m) whose own direct alignment failed, so nothing contradicted them, and
  // their tight errors outweighed the right direct distances of the other pairs: the paths came
  // out 95% and 84% short. A tracked speed more than 4x off the clip's median direct speed is now
  // not used (native/vo/scale/road_scale.cc, kDirectConsensus).
  it('10 frames: aliased road tracks far off the clip\'s direct distances are not used', () => {
    ensureDist();
    const ds = join(tmp, 'ds5151');
    const s = cli(['synth', '--clips', '5', '--seed', '5151', '--speed', '20:33', '--out', ds, '--no-progress']);
    expect(s.code, s.stderr).toBe(0);
    const errs: number[] = [];
    for (const c of readDataset(ds).clips.slice(3, 5)) {
      const g = readNpzArrays(c.arrays!);
      const { clip, options } = engineInput(loadFrames(c), engineConfig({ frames: 10, resolution: 'half' }));
      const idx = Array.from(clip.timestamps, (t) => g.timestamps.findIndex((u) => Math.abs(u - t) < 1e-6));
      const est = estimateClip(clip, options);
      const q = clipQuality(est.native);
      expect(2 * q.road_pairs, JSON.stringify(q)).toBeLessThan(q.moving_pairs);  // the direct distances lead
      const t = est.trajectory;
      errs.push(length(t.x, t.y, Array.from(t.x, (_, i) => i)) / length(g.x, g.y, idx) - 1);
    }
    for (const e of errs) expect(Math.abs(e), JSON.stringify(errs)).toBeLessThan(0.15);
  }, 120_000);
});
