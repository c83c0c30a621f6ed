/**
 * Bad input to the native engine gives a clear JS error (TypeError for a malformed call, Error for
 * input the pipeline cannot use), with a message naming the field or the file — never a crash —
 * and processClipAsync resolves and rejects like processClip returns and throws.
 * Frames are rendered here (test/helpers/render.ts) or written to a temporary folder; no ../shared.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { zlibSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NativeClip, type NativeResult, processClip, processClipAsync, type VoOptions } from '../../src/native/index.js';
import { drivingClip, prng, type SyntheticClip } from '../helpers/render.js';
import { thrown } from '../helpers/throws.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const BUILT = existsSync(ADDON);
if (!BUILT) console.warn(`[egogeo tests] ${ADDON} is not built (npx cmake-js compile): native error tests are skipped.`);

const W = 64, H = 48;
const blank = (w = W, h = H) => ({ data: new Uint8Array(w * h), width: w, height: h });

/** Minimal greyscale PNG encoder (fflate for zlib), so the file tests need no fixtures. */
function png(data: Uint8Array, width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Uint8Array) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, body: Uint8Array) => {
    const b = Buffer.alloc(12 + body.length);
    b.writeUInt32BE(body.length, 0);
    b.write(type, 4, 'latin1');
    Buffer.from(body).copy(b, 8);
    b.writeUInt32BE(crc(b.subarray(4, 8 + body.length)), 8 + body.length);
    return b;
  };
  const raw = new Uint8Array((width + 1) * height);
  for (let y = 0; y < height; y++) raw.set(data.subarray(y * width, (y + 1) * width), y * (width + 1) + 1);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth; colour type 0 (grey), no interlace
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlibSync(raw)),
    chunk('IEND', new Uint8Array()),
  ]);
}

describe.skipIf(!BUILT)('native engine: bad input', () => {
  let dir: string;
  let clip: SyntheticClip; // 4 rendered 640×360 frames, driving forward
  let good: string[]; // the same frames as PNG files
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'egogeo-errors-'));
    clip = drivingClip({ frames: 4, speed: 10, yawRate: 0.1, seed: 11 });
    good = clip.frames.map((f, i) => {
      const p = join(dir, `frame${i}.png`);
      writeFileSync(p, png(f.data, f.width, f.height));
      return p;
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const ts = (n: number) => Array.from({ length: n }, (_, i) => i * 0.1);

  describe('what the pipeline does with unusable pictures', () => {
    it('all-zero frames: a clean result, every pair too_few_tracks with no motion', () => {
      const r = processClip({ frames: [blank(), blank(), blank()], timestamps: ts(3) });
      expect(r.pairs).toHaveLength(3 - 1);
      for (const p of r.pairs) {
        expect(p).toMatchObject({ quality: 'too_few_tracks', tracks: 0, inliers: 0, roadPoints: 0, distance: 0 });
      }
      expect(Array.from(r.positions)).toEqual(new Array(9).fill(0));
      for (const x of r.rotations) expect(Number.isFinite(x)).toBe(true);
    });

    it('PNG files decode like the same pixels given as buffers', () => {
      const fromFiles = processClip({ frames: good, timestamps: clip.timestamps, intrinsics: clip.intrinsics });
      const fromPixels = processClip({ frames: clip.frames, timestamps: clip.timestamps, intrinsics: clip.intrinsics });
      expect(fromFiles.rotations).toEqual(fromPixels.rotations);
      expect(fromFiles.positions).toEqual(fromPixels.positions);
      expect(fromFiles.timing.decode).toBeGreaterThan(0);
    });

    it('a missing file names the file and the frame', () => {
      const missing = join(dir, 'nope.jpg');
      const e = thrown(() => processClip({ frames: [good[0], missing], timestamps: ts(2) }));
      expect(e.message).toContain(missing);
      expect(e.message).toMatch(/frame 1/);
    });

    it('random bytes in a .jpg name the file', () => {
      const bad = join(dir, 'random.jpg');
      const rnd = prng(5);
      writeFileSync(bad, Uint8Array.from({ length: 4096 }, () => Math.floor(rnd() * 256)));
      const e = thrown(() => processClip({ frames: [good[0], bad, good[2]], timestamps: ts(3) }));
      expect(e.message).toContain(bad);
      expect(e.message).toMatch(/frame 1.*not a readable JPEG\/PNG\/PGM/);
    });

    it('a JPEG cut off inside its header names the file; an empty file says it is empty', () => {
      const cut = join(dir, 'cut.jpg');
      // SOI + the start of an APP0 segment: no image data at all.
      writeFileSync(cut, Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]));
      expect(thrown(() => processClip({ frames: [good[0], cut], timestamps: ts(2) })).message).toContain(cut);
      const empty = join(dir, 'empty.jpg');
      writeFileSync(empty, Buffer.alloc(0));
      const e = thrown(() => processClip({ frames: [empty, good[1]], timestamps: ts(2) }));
      expect(e.message).toContain(empty);
      expect(e.message).toMatch(/frame 0.*empty/);
    });

    it('a truncated PNG names the file', () => {
      const whole = readFileSync(good[1]);
      const cut = join(dir, 'truncated.png');
      writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 3)));
      const e = thrown(() => processClip({ frames: [good[0], cut, good[2]], timestamps: ts(3) }));
      expect(e.message).toContain(cut);
    });

    // libjpeg decodes a JPEG whose entropy-coded data stops early, with the rest of the picture
    // grey (it only warns "Premature end of JPEG file"), so the engine may accept it. Either a
    // clean error naming the file or a finite result — no crash.
    it.skipIf(!needsShared('a truncated real JPEG', 'data/kitti/00/image_0/000002.jpg'))(
      'a real JPEG truncated to a third: an error naming it, or a finite result',
      () => {
        const img = sharedPath('data/kitti/00/image_0');
        const whole = readFileSync(join(img, '000001.jpg'));
        const cut = join(dir, 'kitti-truncated.jpg');
        writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 3)));
        let r: NativeResult | undefined;
        try {
          r = processClip({ frames: [join(img, '000000.jpg'), cut, join(img, '000002.jpg')], timestamps: ts(3) });
        } catch (e) {
          expect((e as Error).message).toContain(cut);
          return;
        }
        expect(r.pairs).toHaveLength(2);
        for (const x of [...r.rotations, ...r.positions]) expect(Number.isFinite(x)).toBe(true);
      },
    );

    it('a directory given as a frame path: an Error, no crash', () => {
      expect(() => processClip({ frames: [good[0], dir], timestamps: ts(2) })).toThrow(Error);
    });

    it('a directory given as a frame path: the message names the path', () => {
      expect(thrown(() => processClip({ frames: [good[0], dir], timestamps: ts(2) })).message).toContain(dir);
    });

    it('frames of different sizes name the frame and both sizes', () => {
      const e = thrown(() => processClip({ frames: [blank(), blank(), blank(80, 48)], timestamps: ts(3) }));
      expect(e.message).toMatch(/frame 2/);
      expect(e.message).toContain('80x48');
      expect(e.message).toContain(`${W}x${H}`);
      // A file and a buffer of different sizes, too.
      const f = thrown(() => processClip({ frames: [good[0], blank()], timestamps: ts(2) }));
      expect(f.message).toMatch(/frame 1.*640x360/);
    });

    it('a frame too small to track (< 32 px) says so', () => {
      expect(thrown(() => processClip({ frames: [blank(16, 16), blank(16, 16)], timestamps: ts(2) })).message).toMatch(
        /too small.*16x16/,
      );
    });
  });

  describe('malformed calls throw a TypeError naming the field', () => {
    const cases: [string, () => unknown, RegExp][] = [
      ['no arguments', () => (processClip as unknown as () => unknown)(), /clip/],
      ['clip not an object', () => processClip(42 as unknown as NativeClip), /clip/],
      ['frames not an array', () => processClip({ frames: 'a.jpg' as unknown as string[], timestamps: [0] }), /clip\.frames/],
      ['one frame', () => processClip({ frames: [blank()], timestamps: [0] }), /clip\.frames.*at least 2.*got 1/],
      ['no frames', () => processClip({ frames: [], timestamps: [] }), /clip\.frames.*at least 2.*got 0/],
      ['a frame of the wrong type', () => processClip({ frames: [blank(), 7 as unknown as string], timestamps: ts(2) }), /clip\.frames\[1\]/],
      ['an empty path', () => processClip({ frames: ['', ''], timestamps: ts(2) }), /clip\.frames\[0\].*empty/],
      [
        'data a plain array',
        () => processClip({ frames: [blank(), { data: [1, 2] as unknown as Uint8Array, width: 1, height: 2 }], timestamps: ts(2) }),
        /clip\.frames\[1\]\.data.*Uint8Array/,
      ],
      [
        'data a Float32Array',
        () => processClip({ frames: [{ data: new Float32Array(W * H) as unknown as Uint8Array, width: W, height: H }, blank()], timestamps: ts(2) }),
        /clip\.frames\[0\]\.data/,
      ],
      [
        'buffer size ≠ width*height',
        () => processClip({ frames: [blank(), { data: new Uint8Array(W * H - 1), width: W, height: H }], timestamps: ts(2) }),
        new RegExp(`clip\\.frames\\[1\\]\\.data has ${W * H - 1} bytes, expected width\\*height = ${W * H}`),
      ],
      [
        'width missing',
        () => processClip({ frames: [{ data: new Uint8Array(W * H), height: H } as unknown as ReturnType<typeof blank>, blank()], timestamps: ts(2) }),
        /clip\.frames\[0\]\.width is required/,
      ],
      [
        'width not an integer',
        () => processClip({ frames: [{ data: new Uint8Array(W * H), width: W + 0.5, height: H }, blank()], timestamps: ts(2) }),
        /clip\.frames\[0\].*width and height must be positive integers/,
      ],
      ['timestamps missing', () => processClip({ frames: [blank(), blank()] } as unknown as NativeClip), /clip\.timestamps/],
      ['timestamps a string', () => processClip({ frames: [blank(), blank()], timestamps: '01' as unknown as number[] }), /clip\.timestamps/],
      ['timestamps length mismatch', () => processClip({ frames: [blank(), blank(), blank()], timestamps: ts(2) }), /clip\.timestamps has 2 entries for 3 frames/],
      ['NaN timestamp', () => processClip({ frames: [blank(), blank(), blank()], timestamps: [0, NaN, 0.2] }), /clip\.timestamps\[1\] must be finite/],
      ['Infinity timestamp', () => processClip({ frames: [blank(), blank()], timestamps: new Float64Array([0, Infinity]) }), /clip\.timestamps\[1\] must be finite/],
      ['a string timestamp', () => processClip({ frames: [blank(), blank()], timestamps: [0, '1' as unknown as number] }), /clip\.timestamps\[1\] must be a number/],
      [
        'negative fx',
        () => processClip({ frames: [blank(), blank()], timestamps: ts(2), intrinsics: { fx: -500, fy: 500, cx: 32, cy: 24 } }),
        /clip\.intrinsics\.fx and fy must be positive/,
      ],
      [
        'zero fy',
        () => processClip({ frames: [blank(), blank()], timestamps: ts(2), intrinsics: { fx: 500, fy: 0, cx: 32, cy: 24 } }),
        /clip\.intrinsics\.fx and fy must be positive/,
      ],
      [
        'intrinsics without cy',
        () => processClip({ frames: [blank(), blank()], timestamps: ts(2), intrinsics: { fx: 500, fy: 500, cx: 32 } as unknown as NativeClip['intrinsics'] }),
        /clip\.intrinsics\.cy is required/,
      ],
      [
        'NaN intrinsics',
        () => processClip({ frames: [blank(), blank()], timestamps: ts(2), intrinsics: { fx: NaN, fy: 500, cx: 32, cy: 24 } }),
        /clip\.intrinsics\.fx must be finite/,
      ],
      ['options not an object', () => processClip({ frames: [blank(), blank()], timestamps: ts(2) }, 3 as unknown as VoOptions), /options must be an object/],
      [
        "detector: 'sift'",
        () => processClip({ frames: [blank(), blank()], timestamps: ts(2) }, { detector: 'sift' as 'fast' }),
        /options\.detector must be one of 'fast', 'orb', got 'sift'/,
      ],
      ["scale: 'metric'", () => processClip({ frames: [blank(), blank()], timestamps: ts(2) }, { scale: 'metric' as 'road' }), /options\.scale must be one of/],
      ["poseMethod: 'lmeds'", () => processClip({ frames: [blank(), blank()], timestamps: ts(2) }, { poseMethod: 'lmeds' as 'usac' }), /options\.poseMethod/],
      ["scale 'gt' without gtSpeeds", () => processClip({ frames: [blank(), blank()], timestamps: ts(2) }, { scale: 'gt' }), /options\.gtSpeeds must have one speed per frame pair \(1\)/],
      [
        "scale 'gt' with the wrong number of speeds",
        () => processClip({ frames: [blank(), blank(), blank()], timestamps: ts(3) }, { scale: 'gt', gtSpeeds: [1, 2, 3] }),
        /options\.gtSpeeds must have one speed per frame pair \(2\)/,
      ],
      ['downsample 3', () => processClip({ frames: [blank(), blank()], timestamps: ts(2) }, { downsample: 3 as 2 }), /options\.downsample must be 1, 2 or 4/],
      ['downsample 8', () => processClip({ frames: [blank(), blank()], timestamps: ts(2) }, { downsample: 8 as 2 }), /options\.downsample must be/],
      ['maxFeatures not an integer', () => processClip({ frames: [blank(), blank()], timestamps: ts(2) }, { maxFeatures: 100.5 }), /options\.maxFeatures must be an integer/],
      ['negative cameraHeight', () => processClip({ frames: [blank(), blank()], timestamps: ts(2) }, { cameraHeight: -1.65 }), /options\.cameraHeight must be in/],
      ['cameraHeight a string', () => processClip({ frames: [blank(), blank()], timestamps: ts(2) }, { cameraHeight: '1.65' as unknown as number }), /options\.cameraHeight must be a number/],
    ];
    it.each(cases)('%s', (_name, call, message) => {
      const e = thrown(call);
      expect(e).toBeInstanceOf(TypeError);
      expect(e.message).toMatch(message);
    });
  });

  it('non-increasing timestamps: an Error naming the entry', () => {
    for (const t of [[0, 0.1, 0.1], [0, 0.2, 0.1]]) {
      const e = thrown(() => processClip({ frames: [blank(), blank(), blank()], timestamps: t }));
      expect(e.message).toMatch(/timestamps must be strictly increasing \(entry 2\)/);
    }
  });

  it('a Uint8Array view into a larger buffer reads only its own bytes', () => {
    const f = clip.frames[0];
    const big = new Uint8Array(f.data.length + 100);
    big.set(f.data, 100);
    const view = { data: big.subarray(100), width: f.width, height: f.height };
    const a = processClip({ frames: [view, clip.frames[1]], timestamps: ts(2), intrinsics: clip.intrinsics });
    const b = processClip({ frames: [f, clip.frames[1]], timestamps: ts(2), intrinsics: clip.intrinsics });
    expect(a.positions).toEqual(b.positions);
  });

  describe('processClipAsync', () => {
    it('resolves with the same result as processClip', async () => {
      const input = { frames: clip.frames, timestamps: clip.timestamps, intrinsics: clip.intrinsics };
      const sync = processClip(input, { cameraHeight: clip.cameraHeight });
      const pending = processClipAsync(input, { cameraHeight: clip.cameraHeight });
      expect(pending).toBeInstanceOf(Promise);
      const r = await pending;
      expect(r.rotations).toEqual(sync.rotations);
      expect(r.positions).toEqual(sync.positions);
      expect(r.pairs).toEqual(sync.pairs);
    });

    it('copies the pixels: overwriting the buffers after the call does not change the result', async () => {
      const frames = clip.frames.map((f) => ({ ...f, data: f.data.slice() }));
      const input = { frames, timestamps: clip.timestamps, intrinsics: clip.intrinsics };
      const expected = processClip(input);
      const pending = processClipAsync(input);
      for (const f of frames) f.data.fill(0);
      const r = await pending;
      expect(r.positions).toEqual(expected.positions);
    });

    it('rejects with the pipeline error (missing file, non-increasing timestamps, corrupt image)', async () => {
      const missing = join(dir, 'missing.png');
      await expect(processClipAsync({ frames: [good[0], missing], timestamps: ts(2) })).rejects.toThrow(missing);
      await expect(processClipAsync({ frames: [blank(), blank()], timestamps: [0.1, 0] })).rejects.toThrow(/strictly increasing/);
      const bad = join(dir, 'bad.png');
      writeFileSync(bad, Buffer.from('not a png at all'));
      const e = await processClipAsync({ frames: [bad, good[0]], timestamps: ts(2) }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(Error);
      expect((e as Error).message).toContain(bad);
    });

    // Argument validation runs before the Promise exists, so a malformed call throws
    // synchronously (not a rejection). Wrapped in an async function both surface as a rejection.
    it('a malformed call fails with the same TypeError', async () => {
      const call = () => processClipAsync({ frames: [blank()], timestamps: [0] });
      await expect((async () => call())()).rejects.toThrow(TypeError);
      await expect((async () => call())()).rejects.toThrow(/at least 2 frames/);
    });

    it('many calls in flight at once all settle', async () => {
      const input = { frames: clip.frames, timestamps: clip.timestamps, intrinsics: clip.intrinsics };
      const expected = processClip(input);
      const results = await Promise.allSettled([
        ...Array.from({ length: 4 }, () => processClipAsync(input)),
        processClipAsync({ frames: [good[0], join(dir, 'gone.png')], timestamps: ts(2) }),
      ]);
      for (const r of results.slice(0, 4)) {
        expect(r.status).toBe('fulfilled');
        expect((r as PromiseFulfilledResult<NativeResult>).value.positions).toEqual(expected.positions);
      }
      expect(results[4].status).toBe('rejected');
    });
  });
});
