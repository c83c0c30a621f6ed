/**
 * `--device gpu` clips in flight share one device context (native/vo/track/gpu_backend.cc GpuHub): each
 * leases a slot, and calls that arrive together go to the library as one batch. Run on the
 * library's host reference (EGOGEO_GPU_REFERENCE=1), so it holds on any machine: four clips at
 * once make one context, some calls carry several clips' jobs, and every clip's estimate is the
 * one it gets alone.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gpuInfo, type NativeResult, processClip, processClipAsync, type VoOptions } from '../../src/native/index.js';
import { drivingClip, type SyntheticClip } from '../helpers/render.js';
import { NATIVE_BUILT, ROOT } from '../run/fixtures.js';

const HAS_LIB = NATIVE_BUILT && existsSync(join(ROOT, 'build/Release/libegogeo_gpu.so'));

const input = (c: SyntheticClip) => ({ frames: c.frames, timestamps: c.timestamps, intrinsics: c.intrinsics });
const options = (c: SyntheticClip): VoOptions => ({ cameraHeight: c.cameraHeight, scale: 'road', device: 'gpu' });
const estimate = (r: NativeResult) => ({ positions: Array.from(r.positions), speed: Array.from(r.speedProfile.speed), tracks: r.pairs.map((p) => [p.tracks, p.inliers]) });

describe.skipIf(!HAS_LIB)('--device gpu: clips in flight share one device context (host reference)', () => {
  it('four clips at once: one context, batched calls, each estimate as when its clip runs alone', async () => {
    const clips = [1, 2, 3, 4].map((k) => drivingClip({ frames: 8, speed: 6 + 2 * k, yawRate: 0.04 * k, seed: 60 + k }));
    const saved = process.env.EGOGEO_GPU_REFERENCE;
    process.env.EGOGEO_GPU_REFERENCE = '1';
    try {
      const s0 = gpuInfo().shared;
      const alone = clips.map((c) => estimate(processClip(input(c), options(c))));
      const s1 = gpuInfo().shared;
      expect(s1.contexts - s0.contexts).toBe(4); // one after the other: each clip's context is gone when the next starts
      expect(s1.jobs - s0.jobs).toBe(s1.calls - s0.calls); // nothing to batch with
      const together = await Promise.all(clips.map((c) => processClipAsync(input(c), options(c))));
      const s2 = gpuInfo().shared;
      expect(together.map(estimate)).toEqual(alone);
      expect(s2.contexts - s1.contexts).toBe(1);
      expect(s2.jobs - s1.jobs).toBeGreaterThan(s2.calls - s1.calls);
      expect(alone.every((e) => e.tracks.every(([t]) => t > 0))).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.EGOGEO_GPU_REFERENCE;
      else process.env.EGOGEO_GPU_REFERENCE = saved;
    }
  }, 300_000);
});
