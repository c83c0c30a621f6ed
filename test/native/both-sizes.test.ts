/**
 * processClip(clip, options, alternative): the engine under two option sets over frames decoded
 * once (resolution 'auto' tracks frames far apart at both sizes this way). The first result is
 * exactly processClip under the first options; the second exactly processClip under the second
 * over the frames as full-size pixels (a working size below the frame is their area average), so
 * one decode changes nothing but the work. Frames are rendered here and written as PGM files.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NativeClip, type NativeResult, processClip, processClipBoth, processClipBothAsync, type VoOptions } from '../../src/native/index.js';
import { drivingClip, type SyntheticClip } from '../helpers/render.js';
import { thrown } from '../helpers/throws.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const BUILT = existsSync(ADDON);

/** What a result says about the motion and the work's inputs (timing aside). */
const motion = (r: NativeResult) => ({ size: [r.width, r.height], rotations: Array.from(r.rotations), positions: Array.from(r.positions), pairs: r.pairs, speed: Array.from(r.speedProfile.speed) });

describe.skipIf(!BUILT)('processClip with an alternative option set', () => {
  let dir: string;
  let rendered: SyntheticClip;
  let files: NativeClip;
  let pixels: NativeClip;
  const full: VoOptions = { cameraHeight: 1.5, scale: 'road' };
  const half: VoOptions = { cameraHeight: 1.5, scale: 'road', downsample: 2, kltWindow: 9, minDistance: 4 };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'egogeo-both-'));
    rendered = drivingClip({ frames: 6, speed: 10, yawRate: 0.1, seed: 31 });
    const paths = rendered.frames.map((f, k) => {
      const p = join(dir, `${k}.pgm`);
      writeFileSync(p, Buffer.concat([Buffer.from(`P5\n${f.width} ${f.height}\n255\n`, 'latin1'), Buffer.from(f.data)]));
      return p;
    });
    files = { frames: paths, timestamps: rendered.timestamps, intrinsics: rendered.intrinsics };
    pixels = { frames: rendered.frames, timestamps: rendered.timestamps, intrinsics: rendered.intrinsics };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives exactly what two calls give, decoding each file once', async () => {
    const [a, b] = processClipBoth(files, full, half);
    expect(motion(a)).toEqual(motion(processClip(files, full)));
    expect(motion(b)).toEqual(motion(processClip(pixels, half)));
    expect(b.width).toBe(rendered.frames[0].width); // the caller's pixels, whatever the working size
    expect(a.pairs.some((p) => p.distance > 0)).toBe(true);
    const [c, d] = await processClipBothAsync(files, full, half);
    expect(motion(c)).toEqual(motion(a));
    expect(motion(d)).toEqual(motion(b));
  });

  it('refuses a bad alternative with one line naming it', () => {
    expect(thrown(() => processClipBoth(files, full, 3 as unknown as VoOptions)).message).toMatch(/alternative options must be an object/);
    expect(thrown(() => processClipBoth(files, full, { bogus: 1 } as unknown as VoOptions)).message).toMatch(/alternative\.bogus/);
    expect(thrown(() => processClipBoth(files, full, { keepFrames: true } as VoOptions)).message).toMatch(/alternative\.keepFrames/);
    expect(thrown(() => processClipBoth(files, full, { scale: 'gt', gtSpeeds: [1] })).message).toMatch(/gtSpeeds/);
  });

  it('names a missing frame once, as a single run does', () => {
    const broken = { ...files, frames: [...(files.frames as string[]).slice(0, 5), join(dir, 'missing.pgm')] };
    const single = thrown(() => processClip(broken, full)).message;
    expect(single).toMatch(/missing\.pgm/);
    expect(thrown(() => processClipBoth(broken, full, half)).message).toBe(single);
  });
});
