/**
 * Video frames for pool workers without JSON and without loading opencv4nodejs in more than one
 * thread (see src/datasets/video.ts): a worker asks over a BroadcastChannel, the main thread
 * decodes asynchronously (libuv pool) into one SharedArrayBuffer and answers with it — the frames
 * are shared memory, never copied through a message. At most one request per worker is in
 * flight, so memory stays at about `workers` clips of frames.
 */
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { ClipDataError } from '../datasets/benchmark.js';
import { type DecodedVideo, decodeVideoAsync } from '../datasets/video.js';
import type { PixelFrame } from '../native/index.js';

interface Request {
  type: 'decode';
  id: string;
  path: string;
}
type Reply =
  | { type: 'frames'; id: string; buffer: SharedArrayBuffer; width: number; height: number; count: number; fps: number }
  | { type: 'error'; id: string; message: string; data: boolean };

/** Main thread: answers decode requests on channel `name` until closed. */
export function startDecoder(name: string): { close(): void } {
  const bc = new BroadcastChannel(name);
  bc.onmessage = (ev: unknown) => {
    const req = (ev as { data: Request | Reply }).data;
    if (req.type !== 'decode') return;
    decodeVideoAsync(req.path)
      .then((v) => pack(req.id, v))
      .then(
      (r) => bc.postMessage(r),
      (e: Error) => bc.postMessage({ type: 'error', id: req.id, message: e.message, data: e instanceof ClipDataError } satisfies Reply),
    );
  };
  return { close: () => bc.close() };
}

function pack(id: string, v: DecodedVideo): Reply {
  const { width, height } = v.frames[0];
  for (const f of v.frames) {
    if (f.width !== width || f.height !== height) throw new ClipDataError(`video frames change size (${width}×${height} to ${f.width}×${f.height})`);
  }
  const size = width * height;
  const buffer = new SharedArrayBuffer(size * v.frames.length);
  const all = new Uint8Array(buffer);
  v.frames.forEach((f, i) => all.set(f.data, i * size));
  return { type: 'frames', id, buffer, width, height, count: v.frames.length, fps: v.fps };
}

let seq = 0;

/** Worker: the frames of `path`, decoded by the main thread's decoder on channel `name`. */
export function requestFrames(name: string, path: string): Promise<DecodedVideo> {
  const bc = new BroadcastChannel(name);
  const id = `${threadId}:${process.pid}:${seq++}`;
  return new Promise<DecodedVideo>((resolve, reject) => {
    bc.onmessage = (ev: unknown) => {
      const r = (ev as { data: Request | Reply }).data;
      if (r.type === 'decode' || r.id !== id) return;
      bc.close();
      if (r.type === 'error') {
        reject(r.data ? new ClipDataError(r.message) : new Error(r.message));
        return;
      }
      const size = r.width * r.height;
      const frames: PixelFrame[] = Array.from({ length: r.count }, (_, i) => ({
        data: new Uint8Array(r.buffer, i * size, size),
        width: r.width,
        height: r.height,
      }));
      resolve({ frames, fps: r.fps });
    };
    bc.postMessage({ type: 'decode', id, path } satisfies Request);
  });
}
