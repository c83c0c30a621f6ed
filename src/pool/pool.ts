/**
 * pool/ — runs one task per clip on a piscina worker pool (workers = cores by default) with a
 * progress bar (clips/s, ETA) on stderr. Results reach `onResult` on the main thread in completion
 * order; callers that need a canonical order sort at the end. Each of the `workers` lanes takes
 * runs of neighbouring tasks (pool/blocks.ts: neighbouring clips share frames a worker decoded). May import: nothing from src/ but
 * core/ — the worker module decides what a task does.
 *
 * A worker module default-exports `transportErrors(async (task) => result)` (pool/transport.ts: a
 * failure keeps its class across the thread boundary); each task uses one core (the native
 * addon pins OpenCV to one thread when it loads, on any thread), the pool provides the rest.
 * It may also export `inProcess(task)`, the same work without blocking the event loop for long
 * (native calls on libuv's thread pool): with one worker the pool then runs every task on the
 * calling thread and starts no worker thread (whose start-up — a thread, a second copy of the
 * modules — costs ~0.1–0.2 s a run, as much as a few clips).
 */
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { Piscina } from 'piscina';
import { BlockQueue } from './blocks.js';
import { unwrapResult } from './transport.js';

export interface PoolOptions<T, R> {
  /** Worker module (file URL or path) whose default export runs one task. */
  worker: string | URL;
  tasks: readonly T[];
  /** Worker threads; default: the machine's available parallelism. */
  workers?: number;
  /** Shown in front of the progress bar. */
  label: string;
  /** Called for every finished task, in completion order. */
  onResult: (result: R, task: T, index: number) => void | Promise<void>;
  /** Called for a failed task; without it the first failure rejects the run. */
  onError?: (error: Error, task: T, index: number) => void | Promise<void>;
  /** Force the progress bar on or off (default: when stderr is a terminal). */
  progress?: boolean;
}

export interface PoolSummary {
  done: number;
  failed: number;
  seconds: number;
}

export function defaultWorkers(): number {
  return Math.max(1, availableParallelism());
}

export async function runPool<T, R>(o: PoolOptions<T, R>): Promise<PoolSummary> {
  const workers = Math.max(1, Math.floor(o.workers ?? defaultWorkers()));
  const filename = (o.worker instanceof URL ? o.worker : pathToFileURL(o.worker)).href;
  let direct: ((task: T) => Promise<R>) | null = null;
  if (workers === 1) {
    const mod = (await import(filename)) as { inProcess?: (task: T) => Promise<R> };
    direct = typeof mod.inProcess === 'function' ? mod.inProcess : null;
  }
  // piscina and cli-progress are loaded only when used (~40 ms each of a short run's start-up).
  const pool: Piscina | null = direct ? null : new (await import('piscina')).Piscina({ filename, minThreads: workers, maxThreads: workers, idleTimeout: 1000 });
  const showBar = o.progress ?? Boolean(process.stderr.isTTY);
  const bar = showBar
    ? new (await import('cli-progress')).SingleBar({ format: `${o.label} {bar} {value}/{total} | {rate}/s | ETA {eta_formatted}`, hideCursor: true, stream: process.stderr })
    : null;
  const t0 = Date.now();
  let done = 0;
  let failed = 0;
  bar?.start(o.tasks.length, 0, { rate: '0.0' });
  const tick = () => {
    const s = (Date.now() - t0) / 1000;
    bar?.update(done + failed, { rate: ((done + failed) / Math.max(s, 1e-3)).toFixed(2) });
  };
  // At most `workers` tasks are handed to the pool at a time, and after a failure nothing new is
  // started and the tasks in flight are let finish: the pool is destroyed only when its workers are
  // idle (terminating a worker inside a native call aborts the process).
  const lanes = Math.min(workers, o.tasks.length);
  const queue = new BlockQueue(o.tasks.length, lanes);
  let firstError = null as { e: unknown } | null;
  const lane = async (_: unknown, l: number) => {
    for (let i = queue.take(l); !firstError && i !== undefined; i = queue.take(l)) {
      const task = o.tasks[i];
      try {
        let result: R;
        try {
          result = direct ? await direct(task) : unwrapResult((await pool!.run(task)) as R);
        } catch (e) {
          failed++;
          tick();
          if (!o.onError) throw e;
          await o.onError(e as Error, task, i);
          continue;
        }
        if (firstError) return;
        await o.onResult(result, task, i);
        done++;
        tick();
      } catch (e) {
        firstError ??= { e };
        return;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: lanes }, lane));
  } finally {
    bar?.stop();
    await pool?.destroy();
  }
  if (firstError) throw (firstError as { e: unknown }).e;
  return { done, failed, seconds: (Date.now() - t0) / 1000 };
}
