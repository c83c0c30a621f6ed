/**
 * The default camera (a clip with neither intrinsics nor a field of view) is defined once in TS,
 * core/clip.ts `defaultIntrinsics`, and once in C++, native/default_camera.h, which the VO engine,
 * the renderer and the VO proxy read: the two must agree, and no C++ file may spell it again.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_FOCAL_PER_WIDTH, defaultIntrinsics } from '../../src/core/clip.js';
import { processClip, renderClip } from '../../src/native/index.js';
import { NATIVE_BUILT } from '../run/fixtures.js';

describe('defaultIntrinsics', () => {
  it('is fx = fy = 0.9 W at the image centre', () => {
    expect(DEFAULT_FOCAL_PER_WIDTH).toBe(0.9);
    expect(defaultIntrinsics(321, 181)).toEqual({ fx: 0.9 * 321, fy: 0.9 * 321, cx: 160.5, cy: 90.5 });
  });

  const NATIVE = join(import.meta.dirname, '../../native');
  it('equals the one C++ constant (native/default_camera.h)', () => {
    const m = /constexpr double kDefaultFocalPerWidth = ([0-9.]+);/.exec(readFileSync(join(NATIVE, 'default_camera.h'), 'utf8'));
    expect(m, 'native/default_camera.h defines kDefaultFocalPerWidth').not.toBeNull();
    expect(Number(m![1])).toBe(DEFAULT_FOCAL_PER_WIDTH);
  });

  it('no C++ file spells the focal again (a width times 0.9); the three users read the header', () => {
    const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : /\.(cc|h|cu|cuh)$/.test(e.name) ? [join(d, e.name)] : []));
    const code = (f: string) => readFileSync(f, 'utf8').replace(/\/\/.*$/gm, '');
    const spelled = walk(NATIVE).filter((f) => /\b0\.9\s*\*\s*[\w.]*(?:w|width|cols)\b|\b(?:w|width|cols)\s*\*\s*0\.9\b/.test(code(f)));
    expect(spelled).toEqual([]);
    for (const f of ['vo/pose/camera.cc', 'render/raster.cc', 'baselines/proxy.cc']) expect(code(join(NATIVE, f)), f).toMatch(/#include "(?:\.\.\/)+default_camera\.h"[\s\S]*kDefaultFocalPerWidth \*/);
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
