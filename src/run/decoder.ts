/**
 * Video frames for pool workers without JSON and without loading opencv4nodejs in more than one
 * thread (see src/datasets/video.ts): a worker asks over a BroadcastChannel, the main thread
 * decodes asynchronously (libuv pool) into a SharedArrayBuffer and answers with it — the frames
 * are shared memory, never copied through a message.
 *
 * Each worker owns one such buffer and sends it with every request, so the main thread decodes
 * into it in place (a new, larger one only when a clip does not fit): memory stays at one clip of
 * frames per worker. (A fresh buffer per clip would pile up: V8 does not collect shared buffers
 * held by several isolates promptly.)
 */
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { ClipDataError } from '../datasets/benchmark.js';
import { type DecodedVideo, decodeVideoShared } from '../datasets/video.js';
import type { PixelFrame } from '../native/index.js';

interface Request {
  type: 'decode';
  id: string;
  path: string;
  /** The worker's buffer from its previous clip, to decode into. */
  buffer?: SharedArrayBuffer;
}
type Reply =
  | { type: 'frames'; id: string; buffer: SharedArrayBuffer; width: number; height: number; count: number; fps: number }
  | { type: 'error'; id: string; message: string; data: boolean };

/**
 * Main thread: answers decode requests on channel `name` until closed. A request brings back the
 * worker's buffer from its previous clip, which this clip is decoded into.
 *
 * (Decoding ahead of the requests was tried and dropped: the pool does not hand clips out in
 * submission order, so prefetched clips waited long and piled up — 2.5x the memory — and on two
 * cores two workers are CPU-bound anyway.)
 */
export function startDecoder(name: string): { close(): void } {
  const bc = new BroadcastChannel(name);
  let closed = false;
  bc.onmessage = (ev: unknown) => {
    const req = (ev as { data: Request | Reply }).data;
    if (req.type !== 'decode') return;
    decodeVideoShared(req.path, req.buffer).then(
      (v) => closed || bc.postMessage({ type: 'frames', id: req.id, ...v } satisfies Reply),
      (e: Error) => closed || bc.postMessage({ type: 'error', id: req.id, message: e.message, data: e instanceof ClipDataError } satisfies Reply),
    );
  };
  return {
    close: () => {
      closed = true;
      bc.close();
    },
  };
}

let seq = 0;
/** This worker's frame buffer, reused clip after clip. */
let scratch: SharedArrayBuffer | undefined;

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
      scratch = r.buffer;
      const size = r.width * r.height;
      const frames: PixelFrame[] = Array.from({ length: r.count }, (_, i) => ({
        data: new Uint8Array(r.buffer, i * size, size),
        width: r.width,
        height: r.height,
      }));
      resolve({ frames, fps: r.fps });
    };
    bc.postMessage({ type: 'decode', id, path, buffer: scratch } satisfies Request);
  });
}
