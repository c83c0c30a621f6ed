/**
 * Video frames for pool workers without JSON and without loading opencv4nodejs in more than one
 * thread (see src/datasets/video.ts): a worker asks over a BroadcastChannel, the main thread
 * decodes asynchronously (libuv pool) into a SharedArrayBuffer and answers with it — the frames
 * are shared memory, never copied through a message.
 *
 * The decoder knows the order in which the pool hands out clips and decodes `lookahead` clips
 * ahead of the requests, so a worker finds its next clip decoded instead of idling through the
 * decode. Buffers circulate instead of piling up (V8 does not collect shared buffers held by
 * several isolates promptly): each worker owns the buffer of its current clip and gives it back
 * with its next request; the decoder decodes into returned buffers. Memory: about
 * `workers + lookahead` clips of frames.
 */
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { ClipDataError } from '../datasets/benchmark.js';
import { type DecodedVideo, decodeVideoShared, type SharedVideo } from '../datasets/video.js';
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

type Decoded = { ok: true; v: SharedVideo } | { ok: false; e: Error };

export interface DecoderOptions {
  /** Video paths in the order the pool hands their clips out (the prefetch order). */
  order?: readonly string[];
  /** Clips decoded ahead of the requests (default 1 per worker: pass the worker count). */
  lookahead?: number;
}

/** Main thread: answers decode requests on channel `name` until closed. */
export function startDecoder(name: string, opts: DecoderOptions = {}): { close(): void } {
  const bc = new BroadcastChannel(name);
  const order = opts.order ?? [];
  const lookahead = Math.max(0, opts.lookahead ?? 1);
  const position = new Map<string, number>();
  order.forEach((p, i) => {
    if (!position.has(p)) position.set(p, i);
  });
  const ready = new Map<string, Promise<Decoded>>();
  const free: SharedArrayBuffer[] = [];
  let next = 0; // first position not started yet
  let closed = false;
  const start = (path: string): Promise<Decoded> =>
    decodeVideoShared(path, free.pop()).then(
      (v) => ({ ok: true, v }),
      (e: Error) => ({ ok: false, e }),
    );
  const prefetch = (upTo: number) => {
    for (; next < order.length && next <= upTo; next++) {
      const p = order[next];
      if (!ready.has(p)) ready.set(p, start(p));
    }
  };
  bc.onmessage = (ev: unknown) => {
    const req = (ev as { data: Request | Reply }).data;
    if (req.type !== 'decode') return;
    if (req.buffer) free.push(req.buffer);
    const job = ready.get(req.path) ?? start(req.path);
    ready.delete(req.path);
    const at = position.get(req.path);
    if (at !== undefined) {
      next = Math.max(next, at + 1);
      prefetch(at + lookahead);
    }
    void job.then((d) => {
      if (closed) return;
      if (d.ok) bc.postMessage({ type: 'frames', id: req.id, ...d.v } satisfies Reply);
      else bc.postMessage({ type: 'error', id: req.id, message: d.e.message, data: d.e instanceof ClipDataError } satisfies Reply);
    });
  };
  prefetch(lookahead - 1);
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
