/**
 * queue/ — `egogeo run --queue URL` and `egogeo worker`: a run's clips as BullMQ jobs on a Redis
 * queue, answered by workers on any machine (src/queue/worker.ts) with the same per-clip code as a
 * local run (src/run/task.ts in the src/run/worker.ts pool), collected by the coordinator
 * (src/queue/coordinator.ts) into the same files a local run writes (src/run/run.ts).
 * May import: core/, io/, run/, pool/.
 *
 * This file: the Redis URL and the connection options BullMQ gets.
 */
import type { ConnectionOptions } from 'bullmq';
import { InputError } from '../core/errors.js';

/** The BullMQ queue every coordinator and worker uses unless told otherwise. */
export const DEFAULT_QUEUE_NAME = 'egogeo';

export interface QueueTarget {
  /** The URL with any password replaced by `***` (for messages). */
  shown: string;
  connection: ConnectionOptions & { host: string; port: number; db: number };
  name: string;
}


/** Resolves when `ready` does, else InputError after `ms` naming the URL and the last connection error. */
export async function reachable(t: QueueTarget, ready: Promise<unknown>, lastError: () => string | null, ms = 10_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new InputError(`cannot reach Redis at ${t.shown} within ${ms / 1000} s${lastError() ? ` (${lastError()})` : ''}; start one (redis-server) or check --queue`)), ms);
  });
  try {
    await Promise.race([ready, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One connection attempt (no retries) and a PING before any BullMQ object exists: an unreachable
 * host, a refused port or a wrong password is one line naming the URL instead of endless retries.
 */
export async function probe(t: QueueTarget, ms = 5000): Promise<void> {
  const { Redis } = await import('ioredis'); // loaded on use: every egogeo command imports this file
  // db 0 here and SELECT below: a database the server does not have (/99 of 16) is an error, not db 0.
  const r = new Redis({ ...(t.connection as object), db: 0, lazyConnect: true, connectTimeout: ms, retryStrategy: () => null, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  let last: string | null = null;
  r.on('error', (e: Error) => {
    last = e.message.split('\n')[0];
  });
  try {
    await r.connect();
    await r.ping();
    if (t.connection.db !== 0) {
      try {
        await r.select(t.connection.db);
      } catch (e) {
        throw new InputError(`--queue ${t.shown}: Redis has no database ${t.connection.db} (${(e as Error).message.split('\n')[0]})`);
      }
    }
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(`cannot reach Redis at ${t.shown} (${last ?? (e as Error).message.split('\n')[0]}); start one (redis-server) or check --queue`);
  } finally {
    r.disconnect();
  }
}
