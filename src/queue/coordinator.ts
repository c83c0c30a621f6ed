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
  await probe(qo.target);
  const run = new QueueRun(tasks, ctx, qo);
  try {
    await run.connect();
    run.listen();
    await run.removeLeftovers();
    run.started(await run.reconcile());
    await run.collect();
    if (run.pending.size > 0) await run.reportLeft();
  } finally {
    await run.close();
  }
}

/**
 * One coordinator's run on the queue, in stages: connect, listen for finished jobs, remove the
 * leftovers of clips already written, reconcile (collect what finished, enqueue what is missing),
 * collect until every clip is in (sweeping for missed events, riding out a Redis that goes away),
 * say what is left.
 */
class QueueRun {
  readonly pending: Map<string, ClipTask>;
  private readonly target: QueueTarget;
  private readonly attempts: number;
  private readonly queue: Queue<ClipJobData>;
  private readonly events: QueueEvents;
  private readonly bar: SingleBar | null;
  private readonly busy = new Set<string>();
  private t0 = Date.now();
  private readonly total: number;
  private lastError: string | null = null;
  private questions = { sha256: '', text: '' };
  /** What every answer must come from: this run's engine, and each clip's input files as read here (checks.ts). */
  private readonly runEngine: ReturnType<typeof queueEngine>;
  private readonly digests = new Map<string, string | null>();
  private collected = 0;
  private failed = 0;
  private workers = 0;
  private isStarted = false;

  constructor(
    private readonly tasks: ClipTask[],
    private readonly ctx: ClipExecutorContext,
    private readonly qo: QueueExecutorOptions,
  ) {
    this.target = qo.target;
    this.attempts = qo.attempts ?? 3;
    this.queue = new Queue<ClipJobData>(this.target.name, { connection: this.target.connection });
    this.events = new QueueEvents(this.target.name, { connection: this.target.connection });
    this.queue.on('error', this.noteError);
    this.events.on('error', this.noteError);
    this.bar = (ctx.progress ?? Boolean(process.stderr.isTTY))
      ? new SingleBar({ format: `${ctx.label} (queue) {bar} {value}/{total} | {rate}/s | ETA {eta_formatted} | {workers}`, hideCursor: true, stream: process.stderr })
      : null;
    this.pending = new Map<string, ClipTask>(tasks.map((t) => [jobId(ctx.runId, t.clip.id), t]));
    this.total = tasks.length;
    this.runEngine = queueEngine(tasks[0]?.engine.device ?? 'cpu');
  }

  private readonly noteError = (e: Error) => {
    this.lastError = e.message.split('\n')[0];
  };

  private rate(): number {
    return this.collected / Math.max((Date.now() - this.t0) / 1000, 1e-3);
  }

  private tick(): void {
    if (this.isStarted) this.bar?.update(this.collected + this.failed, { rate: this.rate().toFixed(2), workers: `${this.workers} worker${this.workers === 1 ? '' : 's'}` });
  }

  /** Redis reachable (one line naming it otherwise); the question file every job carries. */
  async connect(): Promise<void> {
    await reachable(this.target, Promise.all([this.queue.waitUntilReady(), this.events.waitUntilReady()]), () => this.lastError);
    const questionsText = readFileSync(this.tasks[0]?.config ?? '/dev/null', 'utf8');
    this.questions = { sha256: createHash('sha256').update(questionsText).digest('hex'), text: questionsText };
    this.t0 = Date.now(); // rates and the idle warning count from here
  }

  /** Events first, so nothing that finishes while the jobs are looked at and enqueued is missed. */
  listen(): void {
    this.events.on('completed', ({ jobId: id }) => void this.check(id));
    this.events.on('failed', ({ jobId: id }) => void this.check(id));
  }

  /** Looks at one of this run's jobs and, when it has finished, hands it to the run and removes it. */
  private async check(id: string, job?: Job<ClipJobData>): Promise<void> {
    const { ctx, pending, busy } = this;
    const t = pending.get(id);
    if (!t || busy.has(id)) return;
    busy.add(id);
    try {
      const j = job ?? (await this.queue.getJob(id));
      if (!j) return;
      const state = await j.getState();
      if (state === 'completed') {
        if (!pending.has(id)) return;
        pending.delete(id);
        const refused = isClipOutput(j.returnvalue, t) ? answerRefusal(j.returnvalue, j.data ?? { engine: this.runEngine }) : null;
        if (refused) {
          // Another engine or another copy of the dataset: not written; the clip fails for good (checks.ts).
          ctx.log(`${t.clip.id}: ${refused}`);
          ctx.onError(new Error(refused), t);
          this.failed++;
        } else if (isClipOutput(j.returnvalue, t)) {
          ctx.onResult(j.returnvalue, t);
          this.collected++;
        } else {
          ctx.onError(new Error(`the worker returned no usable answer for ${t.clip.id} (another egogeo version?)`), t);
          this.failed++;
        }
        await j.remove().catch(() => undefined);
        this.tick();
      } else if (state === 'failed') {
        if (!pending.has(id)) return;
        pending.delete(id);
        ctx.onError(new Error((j.failedReason || 'failed without a reason').split('\n')[0]), t);
        this.failed++;
        await j.remove().catch(() => undefined);
        this.tick();
      }
    } catch (e) {
      this.noteError(e as Error);
    } finally {
      busy.delete(id);
    }
  }

  /** Leftovers of clips already written (a coordinator that died after writing, before removing). */
  async removeLeftovers(): Promise<void> {
    for (const clip of this.ctx.done) {
      const id = jobId(this.ctx.runId, clip);
      const st = await this.queue.getJobState(id);
      if (st === 'completed' || st === 'failed') await this.queue.remove(id).catch(() => undefined);
    }
  }

  /**
   * Collect what finished while no coordinator listened; enqueue again what failed for good;
   * enqueue what is not on the queue (at start, and again after Redis comes back: a restarted
   * Redis may have lost every job).
   */
  async reconcile(): Promise<{ added: number; kept: number }> {
    const { ctx, queue } = this;
    const add: { id: string; t: ClipTask }[] = [];
    let kept = 0;
    for (const [id, t] of [...this.pending]) {
      const st = await queue.getJobState(id);
      if (st === 'completed') await this.check(id);
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
          data: { v: JOB_VERSION, run: ctx.runId, task: encodeTask(t), questions: this.questions, engine: this.runEngine, inputs: inputDigest(t.clip, this.digests) },
          opts: { jobId: id, attempts: this.attempts, backoff: { type: 'fixed', delay: this.qo.backoffMs ?? 1000 }, removeOnComplete: false, removeOnFail: false },
        })),
      );
    }
    return { added: add.length, kept };
  }

  /** The line that starts the run, and the progress bar. */
  started({ added, kept }: { added: number; kept: number }): void {
    const { collected, failed, target, ctx } = this;
    const resumedNote = collected + failed > 0 || kept > 0 ? `; ${collected + failed} finished while no coordinator listened, ${kept} already on the queue` : '';
    ctx.log(`queue ${target.shown} (${target.name}): run ${ctx.runId}, ${added} clip${added === 1 ? '' : 's'} enqueued${resumedNote}`);
    this.bar?.start(this.total, collected + failed, { rate: '0.00', workers: '? workers' });
    this.isStarted = true;
  }

  /**
   * Until every clip is in or the run is cancelled: every 2 s a sweep (the worker count, jobs whose
   * event was missed, Redis's return), and without a bar a progress line every logEvery. Redis
   * unreachable: one line when it goes, a count every logEvery, one line when it is back.
   */
  async collect(): Promise<void> {
    const { ctx, pending } = this;
    let lastSweep = Date.now();
    let lastLog = Date.now();
    const logEvery = (this.qo.logEvery ?? 30) * 1000;
    const down = { since: null as number | null, lastLog: 0, warnedIdle: false };
    while (pending.size > 0 && Atomics.load(ctx.cancel, 0) === 0) {
      await sleep(200);
      if (Date.now() - lastSweep >= 2000) {
        lastSweep = Date.now();
        await this.sweep(down, logEvery);
      }
      if (!this.bar && down.since === null && logEvery > 0 && Date.now() - lastLog >= logEvery) {
        lastLog = Date.now();
        const left = pending.size;
        const r = this.rate();
        ctx.log(`${ctx.label} (queue): ${this.collected + this.failed}/${this.total} clips, ${r.toFixed(2)} clips/s, ETA ${r > 0 ? `${Math.round(left / r)} s` : '?'}, ${this.workers} worker${this.workers === 1 ? '' : 's'}`);
      }
    }
  }

  /** One sweep of collect(): see there. */
  private async sweep(down: { since: number | null; lastLog: number; warnedIdle: boolean }, logEvery: number): Promise<void> {
    const { ctx, target, queue, pending } = this;
    try {
      this.workers = await within(queue.getWorkersCount(), 3000, 'a worker count');
      if (down.since !== null) {
        const away = Math.round((Date.now() - down.since) / 1000);
        const r = await within(this.reconcile(), 30_000, 'the re-check of the queue');
        ctx.log(`Redis at ${target.shown} is back after ${away} s; ${r.added} clip${r.added === 1 ? '' : 's'} it had lost enqueued again, ${r.kept} still on the queue`);
        down.since = null;
      }
      this.tick();
      if (!down.warnedIdle && this.workers === 0 && Date.now() - this.t0 > 5000) {
        down.warnedIdle = true;
        ctx.log(`no worker is connected to ${target.shown} yet; start one: egogeo worker --queue ${target.shown}`);
      }
      // A sweep for anything whose event was missed (a reconnect, a dropped stream entry).
      for (const j of await queue.getJobs(['completed', 'failed'], 0, -1)) {
        if (j?.id && pending.has(j.id)) await this.check(j.id, j);
      }
    } catch (e) {
      this.noteError(e as Error);
      if (down.since === null) {
        down.since = down.lastLog = Date.now();
        ctx.log(`Redis at ${target.shown} is not answering (${this.lastError}); waiting for it — ${pending.size} clip${pending.size === 1 ? '' : 's'} not collected yet`);
      } else if (Date.now() - down.lastLog >= Math.max(logEvery, 10_000)) {
        down.lastLog = Date.now();
        ctx.log(`Redis at ${target.shown} still not answering after ${Math.round((Date.now() - down.since) / 1000)} s (${this.lastError})`);
      }
    }
  }

  /** What is left when the run stops before every clip is in: on the queue for the next coordinator, or lost with Redis. */
  async reportLeft(): Promise<void> {
    const { ctx, target, pending } = this;
    // Count what is really on the queue: after a Redis restart it may hold none of them.
    let onQueue: number | null = null;
    try {
      onQueue = 0;
      for (const id of pending.keys()) if ((await within(this.queue.getJobState(id), 3000, 'a job state')) !== 'unknown') onQueue++;
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

  /** The bar stopped, the connections closed (at most 5 s). */
  async close(): Promise<void> {
    this.bar?.stop();
    const closing = Promise.all([this.events.close().catch(() => undefined), this.queue.close().catch(() => undefined)]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closing, new Promise((r) => (timer = setTimeout(r, 5000)))]);
    clearTimeout(timer);
  }
}
