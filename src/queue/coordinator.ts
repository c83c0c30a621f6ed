/**
 * The coordinator's side of `egogeo run --queue URL` (a ClipExecutor for src/run/run.ts): one
 * BullMQ job per clip task (job id = run id + clip id, so enqueuing twice adds nothing), progress
 * from the queue's events, each answered clip handed to the run (which writes it exactly as a
 * local run does) and only then removed from Redis.
 *
 * Restarts: a job that completed while no coordinator listened is still in Redis and is collected
 * at start; a job still waiting or running is left alone; a job that failed for good is enqueued
 * again (as a local rerun retries its bad clips); a clip already in the output is not enqueued, and
 * a job left over for it (the coordinator died between writing and removing) is removed.
 * Interrupting the coordinator leaves its jobs on the queue: workers keep answering them and the
 * next coordinator collects them.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Queue, QueueEvents, type Job } from 'bullmq';
import { SingleBar } from 'cli-progress';
import type { ClipExecutor, ClipExecutorContext } from '../run/run.js';
import type { ClipOutput, ClipTask } from '../run/task.js';
import { type ClipJobData, encodeTask, JOB_VERSION, jobId } from './codec.js';
import { probe, type QueueTarget, reachable } from './connection.js';
import { answerRefusal, inputDigest, queueEngine } from './checks.js';

export interface QueueExecutorOptions {
  target: QueueTarget;
  /** Attempts per clip before it goes to the errors file (default 3). */
  attempts?: number;
  /** Milliseconds before a failed clip is retried (default 1000). */
  backoffMs?: number;
  /** Seconds between plain progress lines when there is no progress bar (0: none; default 30). */
  logEvery?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `p`, or a rejection after `ms` (BullMQ queues commands while Redis is away: a bare await would wait for it silently). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer to ${what} within ${ms / 1000} s`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether a worker's answer has the shape the run writes. */
function isClipOutput(r: unknown, t: ClipTask): r is ClipOutput {
  const o = r as ClipOutput;
  return !!o && typeof o === 'object' && o.id === t.clip.id && Array.isArray(o.records) && (typeof o.tum === 'string' || typeof o.signals === 'string');
}

export function queueExecutor(qo: QueueExecutorOptions): ClipExecutor {
  return (tasks, ctx) => runOnQueue(tasks, ctx, qo);
}

async function runOnQueue(tasks: ClipTask[], ctx: ClipExecutorContext, qo: QueueExecutorOptions): Promise<void> {
  const { target } = qo;
  const attempts = qo.attempts ?? 3;
  await probe(target);
  let lastError: string | null = null;
  const queue = new Queue<ClipJobData>(target.name, { connection: target.connection });
  const events = new QueueEvents(target.name, { connection: target.connection });
  const noteError = (e: Error) => {
    lastError = e.message.split('\n')[0];
  };
  queue.on('error', noteError);
  events.on('error', noteError);
  const bar = (ctx.progress ?? Boolean(process.stderr.isTTY))
    ? new SingleBar({ format: `${ctx.label} (queue) {bar} {value}/{total} | {rate}/s | ETA {eta_formatted} | {workers}`, hideCursor: true, stream: process.stderr })
    : null;
  try {
    await reachable(target, Promise.all([queue.waitUntilReady(), events.waitUntilReady()]), () => lastError);

    const questionsText = readFileSync(tasks[0]?.config ?? '/dev/null', 'utf8');
    const questions = { sha256: createHash('sha256').update(questionsText).digest('hex'), text: questionsText };
    // What every answer must come from: this run's engine, and each clip's input files as read here.
    const runEngine = queueEngine(tasks[0]?.engine.device ?? 'cpu');
    const digests = new Map<string, string | null>();
    const pending = new Map<string, ClipTask>(tasks.map((t) => [jobId(ctx.runId, t.clip.id), t]));
    const busy = new Set<string>();
    const t0 = Date.now();
    let collected = 0;
    let failed = 0;
    const total = tasks.length;
    let workers = 0;
    const rate = () => collected / Math.max((Date.now() - t0) / 1000, 1e-3);
    let started = false;
    const tick = () => started && bar?.update(collected + failed, { rate: rate().toFixed(2), workers: `${workers} worker${workers === 1 ? '' : 's'}` });

    /** Looks at one of this run's jobs and, when it has finished, hands it to the run and removes it. */
    const check = async (id: string, job?: Job<ClipJobData>): Promise<void> => {
      const t = pending.get(id);
      if (!t || busy.has(id)) return;
      busy.add(id);
      try {
        const j = job ?? (await queue.getJob(id));
        if (!j) return;
        const state = await j.getState();
        if (state === 'completed') {
          if (!pending.has(id)) return;
          pending.delete(id);
          const refused = isClipOutput(j.returnvalue, t) ? answerRefusal(j.returnvalue, j.data ?? { engine: runEngine }) : null;
          if (refused) {
            // Another engine or another copy of the dataset: not written; the clip fails for good (checks.ts).
            ctx.log(`${t.clip.id}: ${refused}`);
            ctx.onError(new Error(refused), t);
            failed++;
          } else if (isClipOutput(j.returnvalue, t)) {
            ctx.onResult(j.returnvalue, t);
            collected++;
          } else {
            ctx.onError(new Error(`the worker returned no usable answer for ${t.clip.id} (another egogeo version?)`), t);
            failed++;
          }
          await j.remove().catch(() => undefined);
          tick();
        } else if (state === 'failed') {
          if (!pending.has(id)) return;
          pending.delete(id);
          ctx.onError(new Error((j.failedReason || 'failed without a reason').split('\n')[0]), t);
          failed++;
          await j.remove().catch(() => undefined);
          tick();
        }
      } catch (e) {
        noteError(e as Error);
      } finally {
        busy.delete(id);
      }
    };

    // Events first, so nothing that finishes while the jobs are looked at and enqueued is missed.
    events.on('completed', ({ jobId: id }) => void check(id));
    events.on('failed', ({ jobId: id }) => void check(id));

    // Leftovers of clips already written (a coordinator that died after writing, before removing).
    for (const clip of ctx.done) {
      const id = jobId(ctx.runId, clip);
      const st = await queue.getJobState(id);
      if (st === 'completed' || st === 'failed') await queue.remove(id).catch(() => undefined);
    }
    // Collect what finished while no coordinator listened; enqueue again what failed for good;
    // enqueue what is not on the queue (at start, and again after Redis comes back: a restarted
    // Redis may have lost every job).
    const reconcile = async (): Promise<{ added: number; kept: number }> => {
      const add: { id: string; t: ClipTask }[] = [];
      let kept = 0;
      for (const [id, t] of [...pending]) {
        const st = await queue.getJobState(id);
        if (st === 'completed') await check(id);
        else if (st === 'failed') {
          await queue.remove(id);
          add.push({ id, t });
        } else if (st === 'unknown') add.push({ id, t });
        else kept++;
      }
      for (let i = 0; i < add.length; i += 500) {
        await queue.addBulk(
          add.slice(i, i + 500).map(({ id, t }) => ({
            name: 'clip',
            data: { v: JOB_VERSION, run: ctx.runId, task: encodeTask(t), questions, engine: runEngine, inputs: inputDigest(t.clip, digests) },
            opts: { jobId: id, attempts, backoff: { type: 'fixed', delay: qo.backoffMs ?? 1000 }, removeOnComplete: false, removeOnFail: false },
          })),
        );
      }
      return { added: add.length, kept };
    };
    const { added, kept } = await reconcile();
    const resumedNote = collected + failed > 0 || kept > 0 ? `; ${collected + failed} finished while no coordinator listened, ${kept} already on the queue` : '';
    ctx.log(`queue ${target.shown} (${target.name}): run ${ctx.runId}, ${added} clip${added === 1 ? '' : 's'} enqueued${resumedNote}`);

    bar?.start(total, collected + failed, { rate: '0.00', workers: '? workers' });
    started = true;
    let lastSweep = Date.now();
    let lastLog = Date.now();
    let warnedIdle = false;
    const logEvery = (qo.logEvery ?? 30) * 1000;
    // Redis unreachable: one line when it goes, a count every logEvery, one line when it is back.
    let downSince: number | null = null;
    let lastDownLog = 0;
    while (pending.size > 0 && Atomics.load(ctx.cancel, 0) === 0) {
      await sleep(200);
      if (Date.now() - lastSweep >= 2000) {
        lastSweep = Date.now();
        try {
          workers = await within(queue.getWorkersCount(), 3000, 'a worker count');
          if (downSince !== null) {
            const away = Math.round((Date.now() - downSince) / 1000);
            const r = await within(reconcile(), 30_000, 'the re-check of the queue');
            ctx.log(`Redis at ${target.shown} is back after ${away} s; ${r.added} clip${r.added === 1 ? '' : 's'} it had lost enqueued again, ${r.kept} still on the queue`);
            downSince = null;
          }
          tick();
          if (!warnedIdle && workers === 0 && Date.now() - t0 > 5000) {
            warnedIdle = true;
            ctx.log(`no worker is connected to ${target.shown} yet; start one: egogeo worker --queue ${target.shown}`);
          }
          // A sweep for anything whose event was missed (a reconnect, a dropped stream entry).
          for (const j of await queue.getJobs(['completed', 'failed'], 0, -1)) {
            if (j?.id && pending.has(j.id)) await check(j.id, j);
          }
        } catch (e) {
          noteError(e as Error);
          if (downSince === null) {
            downSince = lastDownLog = Date.now();
            ctx.log(`Redis at ${target.shown} is not answering (${lastError}); waiting for it — ${pending.size} clip${pending.size === 1 ? '' : 's'} not collected yet`);
          } else if (Date.now() - lastDownLog >= Math.max(logEvery, 10_000)) {
            lastDownLog = Date.now();
            ctx.log(`Redis at ${target.shown} still not answering after ${Math.round((Date.now() - downSince) / 1000)} s (${lastError})`);
          }
        }
      }
      if (!bar && downSince === null && logEvery > 0 && Date.now() - lastLog >= logEvery) {
        lastLog = Date.now();
        const left = pending.size;
        const r = rate();
        ctx.log(`${ctx.label} (queue): ${collected + failed}/${total} clips, ${r.toFixed(2)} clips/s, ETA ${r > 0 ? `${Math.round(left / r)} s` : '?'}, ${workers} worker${workers === 1 ? '' : 's'}`);
      }
    }
    if (pending.size > 0) {
      // Count what is really on the queue: after a Redis restart it may hold none of them.
      let onQueue: number | null = null;
      try {
        onQueue = 0;
        for (const id of pending.keys()) if ((await within(queue.getJobState(id), 3000, 'a job state')) !== 'unknown') onQueue++;
      } catch {
        onQueue = null;
      }
      const n = (k: number) => `${k} clip${k === 1 ? '' : 's'}`;
      if (onQueue === null) ctx.log(`${n(pending.size)} not collected; Redis at ${target.shown} is not answering, so what is left on the queue is unknown (rerun to finish)`);
      else {
        if (onQueue > 0) ctx.log(`${n(onQueue)} left on the queue for the next coordinator (workers keep answering them)`);
        if (pending.size > onQueue) ctx.log(`${n(pending.size - onQueue)} not on the queue (the next run enqueues them)`);
      }
    }
  } finally {
    bar?.stop();
    const closing = Promise.all([events.close().catch(() => undefined), queue.close().catch(() => undefined)]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closing, new Promise((r) => (timer = setTimeout(r, 5000)))]);
    clearTimeout(timer);
  }
}
