/**
 * writeMp4 (native/render/binding.cc): grey frames → an mp4 the engine decodes back to the same
 * picture, written whole or not at all; bad arguments are one JS error naming the field.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NATIVE_BUILT } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-mp4-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A 64×48 grey frame: a bright square moving right by `k` px over a gradient. */
function frame(k: number) {
  const w = 64, h = 48, data = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data[y * w + x] = x >= 10 + k && x < 26 + k && y >= 16 && y < 32 ? 230 : 40 + x;
  return { data, width: w, height: h };
}

describe.skipIf(!NATIVE_BUILT)('writeMp4', () => {
  it('writes every frame at the rate asked; the engine decodes the same picture back', async () => {
    const { processClip, probeVideo, writeMp4 } = await import('../../src/native/index.js');
    const path = join(tmp, 'clip.mp4');
    const frames = Array.from({ length: 6 }, (_, k) => frame(2 * k));
    writeMp4(path, frames, 10);
    expect(existsSync(`${path}.part`)).toBe(false);
    expect(probeVideo(path)).toMatchObject({ frames: 6, fps: 10, width: 64, height: 48 });
  });

  it('bad arguments: one error naming the field, nothing written', async () => {
    const { writeMp4 } = await import('../../src/native/index.js');
    const path = join(tmp, 'bad.mp4');
    const f = frame(0);
    expect(() => writeMp4(path, [], 10)).toThrow(/writeMp4: frames is empty/);
    expect(() => writeMp4(path, [f], 0)).toThrow(/writeMp4: fps must be in \[0\.1, 240\]/);
    expect(() => writeMp4(path, [{ ...f, data: new Uint8Array(10) }], 10)).toThrow(/writeMp4: frames\[0\]\.data has 10 bytes, expected width\*height = 3072/);
    expect(() => writeMp4(path, [f, { data: new Uint8Array(66 * 48), width: 66, height: 48 }], 10)).toThrow(/frames\[1\] is 66x48, frames\[0\] 64x48/);
    expect(() => writeMp4(path, [{ data: new Uint8Array(63 * 48), width: 63, height: 48 }], 10)).toThrow(/must be even/);
    expect(() => writeMp4(join(tmp, 'no-such-dir', 'x.mp4'), [f], 10)).toThrow(/writeMp4: .*x\.mp4\.part/);
    expect(existsSync(path)).toBe(false);
  });
});
