/**
 * `egogeo worker --queue URL`: answers clip jobs from the queue on this machine, with the same
 * per-clip code as a local run — runClipTask inside the piscina pool of src/run/worker.ts, one
 * thread per concurrent job — and returns each clip's records and trajectory to Redis for the
 * coordinator. A failed clip's reason (the error's first line, as a local run writes it) goes
 * back with the job; BullMQ retries it up to the attempts the coordinator set, then it is failed
 * for good and the coordinator writes it to the errors file.
 *
 * A worker that dies mid-clip (SIGKILL, power cut) loses nothing: its job's lock expires
 * (`lockSeconds`) and another worker's stalled-job check puts the job back on the queue. SIGINT or
 * SIGTERM: no new jobs, the clips in flight finish and are returned, then the worker exits 0; a
 * second signal exits at once (the clips in flight are retried elsewhere once their locks expire).
 * A job that asks for the GPU is answered only after this machine's GPU passed the self-check
 * (src/native/device.ts, run once per worker); otherwise the attempt fails with the check's line.
 * Each clip's start is logged ("CLIP: started"), so what a killed worker held is known.
 */
import { hostname } from 'node:os';
import { Piscina } from 'piscina';
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { decideDevice } from '../native/device.js';
import { unwrapResult } from '../pool/transport.js';
import { workerUrl } from '../run/clips.js';
import type { ClipOutput } from '../run/task.js';
import { type ClipJobData, decodeTask, JOB_VERSION, mapTask, type PathMap, questionFile } from './codec.js';
import { engineRefusal, inputDigest, inputsRefusal, type QueueAnswer, queueEngine } from './checks.js';
import { probe, type QueueTarget, reachable } from './connection.js';

export interface QueueWorkerOptions {
  target: QueueTarget;
  /** Clips answered at once (piscina threads), default 1. */
  concurrency?: number;
  pathMap?: PathMap[];
  /** Job lock: a dead worker's clip is retried elsewhere this long after it stopped renewing (default 30). */
  lockSeconds?: number;
  /** Exit (status 0) once the queue has had nothing waiting or running for this long. */
  idleExitSeconds?: number;
  /** Handle SIGINT/SIGTERM (default true). */
  signals?: boolean;
  log?: (line: string) => void;
}

export interface QueueWorkerSummary {
  done: number;
  failed: number;
  signal: NodeJS.Signals | null;
}

/** `p`, or nothing after `ms`. */
async function bounded(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

export async function runQueueWorker(o: QueueWorkerOptions): Promise<QueueWorkerSummary> {
  const log = o.log ?? ((l: string) => process.stderr.write(`egogeo worker: ${l}\n`));
  const concurrency = Math.max(1, Math.floor(o.concurrency ?? 1));
  const lockMs = Math.max(1, o.lockSeconds ?? 30) * 1000;
  const maps = o.pathMap ?? [];
  const me = `${hostname()}:${process.pid}`;
  let lastError: string | null = null;
  // Redis unreachable: one line at the first error, then a count every 30 s, one line when jobs flow again.
  let troubleSince: number | null = null;
  let troubles = 0;
  let lastTroubleLog = 0;
  let quiet = false; // stopping: the errors of closing connections are expected
  const noteError = (e: Error) => {
    lastError = e.message.split('\n')[0];
    if (quiet || !ready) return;
    const now = Date.now();
    troubles++;
    if (troubleSince === null) {
      troubleSince = lastTroubleLog = now;
      log(`Redis at ${o.target.shown}: ${lastError}; retrying (clips in flight finish, new ones wait)`);
    } else if (now - lastTroubleLog >= 30_000) {
      lastTroubleLog = now;
      log(`Redis at ${o.target.shown}: ${troubles} connection errors in ${Math.round((now - troubleSince) / 1000)} s (${lastError}); still retrying`);
    }
  };
  const noteBack = () => {
    if (troubleSince === null) return;
    log(`Redis at ${o.target.shown} answers again after ${Math.round((Date.now() - troubleSince) / 1000)} s`);
    troubleSince = null;
    troubles = 0;
  };
  let ready = false;

  await probe(o.target);
  const pool = new Piscina({ filename: workerUrl().href, minThreads: concurrency, maxThreads: concurrency, idleTimeout: 60_000 });
  const summary: QueueWorkerSummary = { done: 0, failed: 0, signal: null };

  // The GPU self-check, once, on the first job that asks for the GPU: null = passed, else why not.
  let gpuRefusal: string | null | undefined;
  const gpuReady = (): string | null => {
    if (gpuRefusal === undefined) {
      try {
        decideDevice('gpu');
        gpuRefusal = null;
      } catch (e) {
        gpuRefusal = (e as Error).message.split('\n')[0];
        log(`the jobs that ask for the GPU fail here: ${gpuRefusal}`);
      }
    }
    return gpuRefusal;
  };

  let inflight = 0;
  const processor = async (job: Job<ClipJobData>): Promise<ClipOutput> => {
    inflight++;
    try {
      return await answer(job);
    } finally {
      inflight--;
    }
  };
  const answer = async (job: Job<ClipJobData>): Promise<QueueAnswer> => {
    const d = job.data;
    if (d?.v !== JOB_VERSION) throw new UnrecoverableError(`job format ${String(d?.v)} but this egogeo worker reads ${JOB_VERSION} (run the same egogeo version on the coordinator and the workers)`);
    noteBack();
    const task = mapTask({ ...decodeTask(d.task), config: questionFile(d.questions) }, maps);
    // Another engine, or other input files than the coordinator's: refused for good (checks.ts).
    const engine = queueEngine(task.engine.device);
    const inputs = inputDigest(task.clip);
    const refused = engineRefusal(d.engine, engine) ?? (d.inputs ? inputsRefusal(d.inputs, inputs) : null);
    if (refused) {
      summary.failed++;
      log(`${task.clip.id}: refused: ${refused}`);
      throw new UnrecoverableError(`${task.clip.id}: refused by worker ${me}: ${refused}`);
    }
    try {
      const refused = task.engine.device === 'gpu' ? gpuReady() : null;
      if (refused) throw new Error(refused);
      log(`${task.clip.id}: started (attempt ${job.attemptsMade + 1})`);
      const r = unwrapResult((await pool.run(task)) as ClipOutput);
      summary.done++;
      log(`${task.clip.id}: ${r.records.length} records in ${(r.ms.total / 1000).toFixed(3)} s (attempt ${job.attemptsMade + 1})`);
      return { ...r, engine, inputs } satisfies QueueAnswer;
    } catch (e) {
      summary.failed++;
      const reason = ((e as Error)?.message ?? String(e)).split('\n')[0];
      log(`${task.clip.id}: failed (attempt ${job.attemptsMade + 1}/${job.opts.attempts ?? 1}): ${reason}`);
      throw new Error(reason);
    }
  };

  const worker = new Worker<ClipJobData, ClipOutput>(o.target.name, processor, {
    connection: o.target.connection,
    concurrency,
    lockDuration: lockMs,
    stalledInterval: Math.max(1000, Math.floor(lockMs / 2)),
    maxStalledCount: 2,
    name: me,
    autorun: false,
  });
  worker.on('error', noteError);
  const queue = new Queue(o.target.name, { connection: o.target.connection });
  queue.on('error', noteError);

  let stopping: Promise<void> | null = null;
  let markStopped = () => {};
  const stopped = new Promise<void>((r) => (markStopped = r));
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      quiet = true;
      // No new jobs; the clips in flight finish and their answers go back to Redis. Closing the
      // connections is bounded, so a worker whose Redis is gone still exits.
      const closing = worker.close().catch(noteError);
      while (inflight > 0) await new Promise((r) => setTimeout(r, 100));
      await bounded(closing, 5000);
      await bounded(queue.close().catch(() => undefined), 2000);
      await pool.destroy();
      markStopped();
    })());

  const listener = (sig: NodeJS.Signals) => {
    if (summary.signal) {
      log(`${sig} again: stopping now; the clips in flight are retried elsewhere once their locks expire (${lockMs / 1000} s)`);
      process.off('SIGINT', listener);
      process.off('SIGTERM', listener);
      process.kill(process.pid, sig);
      return;
    }
    summary.signal = sig;
    log(`${sig}: taking no new clips, finishing the ones in flight (${sig} again to stop now)`);
    void stop();
  };
  if (o.signals ?? true) {
    process.on('SIGINT', listener);
    process.on('SIGTERM', listener);
  }
  try {
    try {
      await reachable(o.target, Promise.all([worker.waitUntilReady(), queue.waitUntilReady()]), () => lastError);
    } catch (e) {
      await Promise.race([stop(), new Promise((r) => setTimeout(r, 2000))]);
      throw e;
    }
    ready = true;
    log(`${me} on ${o.target.shown} (${o.target.name}): ${concurrency} clip${concurrency === 1 ? '' : 's'} at a time${maps.length ? `, paths ${maps.map((m) => `${m.from} → ${m.to}`).join(', ')}` : ''}`);
    const running = worker.run();
    let idleTimer: NodeJS.Timeout | undefined;
    if (o.idleExitSeconds !== undefined) {
      let idleSince = Date.now();
      idleTimer = setInterval(() => {
        void (async () => {
          try {
            const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
            const busy = Object.values(c).reduce((a, b) => a + b, 0);
            if (busy > 0) idleSince = Date.now();
            else if (Date.now() - idleSince >= o.idleExitSeconds! * 1000 && !stopping) {
              log(`the queue has been empty for ${o.idleExitSeconds} s: stopping`);
              void stop();
            }
          } catch (e) {
            noteError(e as Error);
          }
        })();
      }, 1000);
    }
    // Either the worker's loop ends, or a stop finishes (bounded even when Redis is gone).
    await Promise.race([running.catch(noteError), stopped]);
    await stop();
    clearInterval(idleTimer);
    log(`stopped: ${summary.done} clip${summary.done === 1 ? '' : 's'} answered, ${summary.failed} failed attempt${summary.failed === 1 ? '' : 's'}`);
    return summary;
  } finally {
    process.off('SIGINT', listener);
    process.off('SIGTERM', listener);
  }
}
