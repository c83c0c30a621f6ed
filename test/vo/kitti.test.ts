/**
 * The native VO engine on real KITTI 00 frames (../shared/data/kitti/00) against the official
 * poses: three benchmark windows (31 frames, 3 s) — straight, a right turn, a left turn — with
 * loose bounds that still catch a broken pipeline (wrong rotation sign or axis, scale off by a
 * factor, lost tracks): heading change within 2° of the truth, mean speed within 25%, every pair
 * 'ok', per-frame heading never more than 2° off. Skipped without ../shared or the built addon.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Clip } from '../../src/core/clip.js';
import { kittiClips, readKittiSequence } from '../../src/datasets/kitti.js';
import { type Estimate, estimateClip, estimateClipAsync } from '../../src/vo/estimate.js';
import { evenFrames, selectFrames } from '../../src/vo/frames.js';
import { planarFromCameraPoses } from '../../src/vo/planar.js';
import { dynamicsRmse } from '../../src/vo/errors.js';
import { computeDynamics } from '../../src/oracle/dynamics.js';
import { summaryFeatures } from '../../src/oracle/features.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const BUILT = existsSync(ADDON);
const KITTI = needsShared('native VO on KITTI 00 windows', 'data/kitti/00/image_0', 'data/kitti/00/poses.txt');
if (KITTI && !BUILT) console.warn(`[egogeo tests] ${ADDON} is not built (npx cmake-js compile): the KITTI VO tests are skipped.`);

const DEG = Math.PI / 180;
/** Window start → what it shows (measured from poses.txt). */
const WINDOWS: Record<string, string> = {
  kitti00_000000: 'straight at ~8.5 m/s',
  kitti00_000080: 'a right turn, ~-48° at ~4.8 m/s',
  kitti00_000175: 'a left turn, ~+37° at ~5.7 m/s',
};

const wrap = (a: number): number => Math.atan2(Math.sin(a), Math.cos(a));
function pathLength(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let s = 0;
  for (let i = 1; i < x.length; i++) s += Math.hypot(x[i] - x[i - 1], y[i] - y[i - 1]);
  return s;
}

describe.skipIf(!KITTI || !BUILT)('native VO on KITTI 00 windows', () => {
  const runs = new Map<string, { clip: Clip; est: Estimate }>();
  beforeAll(() => {
    const clips = kittiClips(readKittiSequence(sharedPath('data/kitti/00')));
    for (const id of Object.keys(WINDOWS)) {
      const clip = clips.find((c) => c.id === id);
      if (!clip) throw new Error(`window ${id} is not in data/kitti/00`);
      runs.set(id, { clip, est: estimateClip(clip) });
    }
  });

  describe.each(Object.entries(WINDOWS))('%s (%s)', (id) => {
    const get = () => runs.get(id)!;

    it('has ground truth and 31 frames', () => {
      const { clip, est } = get();
      expect(clip.groundTruth).toBeDefined();
      expect(clip.frames).toHaveLength(31);
      expect(est.native.pairs).toHaveLength(30);
      expect(est.trajectory.t).toHaveLength(31);
    });

    it("every pair is 'ok' with inliers on the road", () => {
      const { est } = get();
      for (const p of est.native.pairs) {
        expect(p.quality).toBe('ok');
        expect(p.inliers).toBeGreaterThanOrEqual(20);
        expect(p.roadPoints).toBeGreaterThanOrEqual(15);
      }
    });

    it('heading change over the window within 2° of the truth, and every frame within 2°', () => {
      const { clip, est } = get();
      const gt = clip.groundTruth!, tr = est.trajectory;
      const n = gt.t.length - 1;
      const dTrue = wrap(gt.yaw[n] - gt.yaw[0]), dEst = wrap(tr.yaw[n] - tr.yaw[0]);
      expect(Math.abs(dEst - dTrue) / DEG, `Δyaw ${dEst / DEG}° vs ${dTrue / DEG}°`).toBeLessThan(2);
      for (let i = 0; i <= n; i++) {
        const e = wrap(tr.yaw[i] - tr.yaw[0] - (gt.yaw[i] - gt.yaw[0]));
        expect(Math.abs(e) / DEG, `frame ${i}`).toBeLessThan(2);
      }
    });

    it('mean speed within 25% of the truth', () => {
      const { clip, est } = get();
      const gt = clip.groundTruth!, tr = est.trajectory;
      const T = gt.t[gt.t.length - 1] - gt.t[0];
      const vTrue = pathLength(gt.x, gt.y) / T, vEst = pathLength(tr.x, tr.y) / T;
      expect(vTrue).toBeGreaterThan(3);
      expect(Math.abs(vEst / vTrue - 1), `${vEst} m/s vs ${vTrue} m/s`).toBeLessThan(0.25);
    });

    it('drives forward: the end point lies ahead, on the side of the turn', () => {
      const { clip, est } = get();
      const gt = clip.groundTruth!, tr = est.trajectory;
      const n = gt.t.length - 1;
      // Both in the first frame's planar coordinates (X forward, Y left).
      const local = (t: typeof gt, i: number) => {
        const c = Math.cos(t.yaw[0]), s = Math.sin(t.yaw[0]);
        const dx = t.x[i] - t.x[0], dy = t.y[i] - t.y[0];
        return [c * dx + s * dy, -s * dx + c * dy];
      };
      const [gx, gy] = local(gt, n), [ex, ey] = local(tr, n);
      expect(ex).toBeGreaterThan(0.5 * gx);
      // The lateral offset has the true sign whenever the truth bends by more than a metre.
      if (Math.abs(gy) > 1) expect(Math.sign(ey)).toBe(Math.sign(gy));
      // And the end point is within 15% of the true displacement.
      expect(Math.hypot(ex - gx, ey - gy)).toBeLessThan(0.15 * Math.hypot(gx, gy));
    });

    it('timing fields present and positive', () => {
      const { est } = get();
      const t = est.native.timing;
      for (const k of ['decode', 'detect', 'track', 'pose', 'scale', 'total'] as const) {
        expect(Number.isFinite(t[k]), k).toBe(true);
        expect(t[k], k).toBeGreaterThan(0);
      }
      expect(t.total).toBeCloseTo(t.decode + t.detect + t.track + t.pose + t.scale, 6);
      expect(est.native.tracks.created).toBeGreaterThan(0);
      expect(est.native.tracks.meanLength).toBeGreaterThan(2);
      expect(est.native.width).toBe(1241);
      expect(est.native.height).toBe(376);
    });
  });

  it('estimateClipAsync gives the same trajectory as estimateClip', async () => {
    const { clip, est } = runs.get('kitti00_000080')!;
    const a = await estimateClipAsync(clip);
    expect(a.native.positions).toEqual(est.native.positions);
    expect(a.trajectory.yaw).toEqual(est.trajectory.yaw);
  });

  // The published protocol's 10 frames, 0.33 s apart: the trajectory the oracle answers from holds
  // the motion between them on its 10 Hz grid (vo/densify.ts). Against straight lines between the
  // same poses, the oracle's acceleration is nearer the truth on each window, and its mean |jerk|
  // (driving_smoothness) nearer on the three together (measured 0.80 -> 0.31 m/s³ mean error).
  it('10 frames: the motion between frames brings the acceleration and jerk nearer the truth', () => {
    let jerkLinear = 0, jerkDense = 0;
    for (const id of Object.keys(WINDOWS)) {
      const full = runs.get(id)!.clip;
      const clip = selectFrames(full, evenFrames(full.frames.length, 10));
      const est = estimateClip(clip);
      const tr = est.trajectory, gt = full.groundTruth!;
      const linear = planarFromCameraPoses(id, clip.timestamps, est.native.rotations, est.native.positions);
      expect(tr.t.length).toBeGreaterThan(25);
      expect(tr.speedProfile.speed).toHaveLength(tr.t.length);
      for (let i = 0; i < linear.t.length; i++) {
        const j = Array.from(tr.t).indexOf(linear.t[i]);
        expect(j, `frame ${i} is a sample`).toBeGreaterThanOrEqual(0);
        expect(Math.hypot(tr.x[j] - linear.x[i], tr.y[j] - linear.y[i]), `frame ${i}`).toBeLessThan(0.1);
      }
      expect(dynamicsRmse(tr, gt).accel, id).toBeLessThan(dynamicsRmse(linear, gt).accel);
      const mj = (t: typeof gt) => summaryFeatures(computeDynamics(t)).mean_abs_jerk;
      jerkLinear += Math.abs(mj(linear) - mj(gt));
      jerkDense += Math.abs(mj(tr) - mj(gt));
    }
    expect(jerkDense).toBeLessThan(0.6 * jerkLinear);
  });
});
