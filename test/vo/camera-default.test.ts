/**
 * The default camera (a clip with neither intrinsics nor a field of view) is defined once in TS,
 * core/clip.ts `defaultIntrinsics`, and once in the addon (native/vo/camera.cc): the two must agree.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_FOCAL_PER_WIDTH, defaultIntrinsics } from '../../src/core/clip.js';
import { processClip, renderClip } from '../../src/native/index.js';
import { NATIVE_BUILT } from '../run/fixtures.js';

describe('defaultIntrinsics', () => {
  it('is fx = fy = 0.9 W at the image centre', () => {
    expect(DEFAULT_FOCAL_PER_WIDTH).toBe(0.9);
    expect(defaultIntrinsics(321, 181)).toEqual({ fx: 0.9 * 321, fy: 0.9 * 321, cx: 160.5, cy: 90.5 });
  });
});

describe.skipIf(!NATIVE_BUILT)('defaultIntrinsics against the addon', () => {
  it('the renderer and processClip, given no intrinsics, use the camera TS names (odd sizes: half-pixel centres)', () => {
    const t = [0, 0.1, 0.2, 0.3];
    for (const [width, height] of [[321, 181], [640, 360]]) {
      const r = renderClip({
        trajectory: { t, x: t.map((s) => 8 * s), y: t.map(() => 0), yaw: t.map(() => 0) },
        camera: { width, height, mountHeight: 1.5 },
        world: { seed: 3, environment: 'urban' },
        output: { pixels: true },
      });
      expect(r.intrinsics).toEqual(defaultIntrinsics(width, height));
      const out = processClip({ frames: r.frames.map((data) => ({ data, width: r.width, height: r.height })), timestamps: t }, { cameraHeight: 1.5 });
      expect(out.intrinsics).toEqual(defaultIntrinsics(width, height));
    }
  });
});
