/**
 * mp4 clips → 8-bit greyscale frames in JS memory, through `@u4/opencv4nodejs` (OpenCV's
 * VideoCapture, FFmpeg backend; built against the system OpenCV) — for looking at a video's frames
 * from JavaScript. Benchmark runs do not use it: the native engine decodes each clip's video in
 * its own worker (`processClip({ video })`, native/vo/decode/video.cc).
 *
 * One thread per process only: opencv4nodejs keeps its JS class templates in C++ statics, so a
 * second worker thread that loads it gets Mats without methods (or worse). It is an optional
 * dependency that loads lazily: when it is not built, the functions here throw one line naming
 * the fix and everything else works.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { PixelFrame } from '../native/index.js';
import { ClipDataError } from './benchmark.js';

interface CvMat {
  empty: boolean;
  channels: number;
  cols: number;
  rows: number;
  cvtColor(code: number): CvMat;
  cvtColorAsync(code: number, cb: (err: unknown, m: CvMat) => void): void;
  getData(): Buffer;
  /** Frees the pixels now (V8 does not see them: the memory tracker is off, see `opencv`). */
  release(): void;
}
/** The part of opencv4nodejs this module uses. */
interface Cv {
  VideoCapture: new (path: string, api?: number) => {
    get(prop: number): number;
    read(): CvMat;
    readAsync(cb: (err: unknown, m: CvMat) => void): void;
    release(): void;
  };
  CAP_PROP_FPS: number;
  CAP_PROP_FRAME_COUNT: number;
  CAP_FFMPEG?: number;
  COLOR_BGR2GRAY: number;
  isCustomMatAllocatorEnabled?(): boolean;
  dangerousDisableCustomMatAllocator?(): boolean;
}

let cv: Cv | undefined;

/**
 * opencv4nodejs's compiled binding (its JS wrapper only adds promisified helpers and prints
 * build-configuration logs on load, which a CLI must not).
 */
export function opencv(): Cv {
  if (cv) return cv;
  const require = createRequire(import.meta.url);
  // Its memory tracker replaces OpenCV's process-wide default Mat allocator with one that reports
  // to V8 — from whatever thread allocates, including the VO engine's worker threads, which
  // corrupts V8's heap. Off before loading, and off again should it be on anyway.
  process.env.OPENCV4NODEJS_DISABLE_EXTERNAL_MEM_TRACKING = '1';
  // An unreadable file is one line in the errors file, not a screen of OpenCV warnings.
  process.env.OPENCV_LOG_LEVEL ??= 'ERROR';
  try {
    const main = require.resolve('@u4/opencv4nodejs');
    const binding = join(dirname(main), '../../build/Release/opencv4nodejs.node');
    const loaded = (existsSync(binding) ? require(binding) : require('@u4/opencv4nodejs')) as Cv;
    if (loaded.isCustomMatAllocatorEnabled?.()) loaded.dangerousDisableCustomMatAllocator?.();
    cv = loaded;
  } catch (e) {
    throw new Error(
      `decoding video in JavaScript needs the optional @u4/opencv4nodejs, which is not built here (${why(e)}); ` +
        'run `npm run setup -- --with-opencv4nodejs` (it builds it against the system OpenCV; `egogeo doctor` checks it)',
    );
  }
  return cv;
}

export interface DecodedVideo {
  /** Greyscale frames, in file order. */
  frames: PixelFrame[];
  /** Frame rate the container declares (0 when unknown). */
  fps: number;
}

/** Callback → promise (the raw binding's async methods take node-style callbacks). */
const call = (f: (cb: (err: unknown, m: CvMat) => void) => void): Promise<CvMat> =>
  new Promise((resolve, reject) => f((err, m) => (err ? reject(err) : resolve(m))));

/** A thrown value's first line (the binding throws strings). */
const why = (e: unknown): string => String((e as Error)?.message ?? e).split('\n')[0];

/** The frame's grey pixels as a JS-owned copy; both Mats are freed at once. */
function grey(frame: CvMat, g: CvMat): PixelFrame {
  const buf = g.getData();
  const out = { data: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), width: g.cols, height: g.rows };
  g.release();
  if (g !== frame) frame.release();
  return out;
}

function open(path: string): { c: Cv; cap: InstanceType<Cv['VideoCapture']> } {
  if (!existsSync(path)) throw new ClipDataError(`missing video ${path}`);
  const c = opencv();
  try {
    // FFmpeg directly: no GStreamer fallback (and its warnings) for files FFmpeg cannot read.
    return { c, cap: c.CAP_FFMPEG === undefined ? new c.VideoCapture(path) : new c.VideoCapture(path, c.CAP_FFMPEG) };
  } catch (e) {
    throw new ClipDataError(`unreadable video ${path} (${why(e)})`);
  }
}

/** Every frame of `path` as greyscale, in file order (sequential reads: exact for any codec). */
export function decodeVideo(path: string): DecodedVideo {
  const { c, cap } = open(path);
  const frames: PixelFrame[] = [];
  let fps = 0;
  try {
    fps = cap.get(c.CAP_PROP_FPS) || 0;
    for (;;) {
      const m = cap.read();
      if (m.empty) break;
      frames.push(grey(m, m.channels === 1 ? m : m.cvtColor(c.COLOR_BGR2GRAY)));
    }
  } catch (e) {
    throw new ClipDataError(`unreadable video ${path} (${why(e)})`);
  } finally {
    cap.release();
  }
  if (frames.length === 0) throw new ClipDataError(`unreadable video ${path} (no frames decoded)`);
  return { frames, fps };
}

/**
 * Decodes on the libuv pool (the event loop stays free), handing each frame's greyscale pixels to
 * `sink` (a Buffer valid during the call) in file order. Returns the container's frame rate.
 */
async function decodeAsyncInto(path: string, sink: (pixels: Buffer, width: number, height: number, countHint: number) => void): Promise<{ fps: number; count: number }> {
  const { c, cap } = open(path);
  let fps = 0;
  let count = 0;
  try {
    fps = cap.get(c.CAP_PROP_FPS) || 0;
    const hint = Math.max(0, Math.round(cap.get(c.CAP_PROP_FRAME_COUNT) || 0));
    for (;;) {
      const m = await call((cb) => cap.readAsync(cb));
      if (m.empty) break;
      const g = m.channels === 1 ? m : await call((cb) => m.cvtColorAsync(c.COLOR_BGR2GRAY, cb));
      sink(g.getData(), g.cols, g.rows, hint);
      g.release();
      if (g !== m) m.release();
      count++;
    }
  } catch (e) {
    throw new ClipDataError(`unreadable video ${path} (${why(e)})`);
  } finally {
    cap.release();
  }
  if (count === 0) throw new ClipDataError(`unreadable video ${path} (no frames decoded)`);
  return { fps, count };
}

/** `decodeVideo` with decoding and colour conversion on the libuv pool (the event loop stays free). */
export async function decodeVideoAsync(path: string): Promise<DecodedVideo> {
  const frames: PixelFrame[] = [];
  const { fps } = await decodeAsyncInto(path, (px, width, height) => frames.push({ data: new Uint8Array(px.buffer, px.byteOffset, px.byteLength), width, height }));
  return { frames, fps };
}
