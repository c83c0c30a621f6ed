/**
 * `egogeo worker --queue redis://HOST:PORT[/db]`: answers the clips `egogeo run --queue` puts on
 * the queue, on this machine (src/queue/worker.ts). Any number of workers on any machines that see
 * the dataset at the coordinator's paths (or mapped with --path-map).
 */
import type { Command } from 'commander';
import { InputError } from '../../core/errors.js';
import { DEFAULT_QUEUE_NAME } from '../../queue/connection.js';
import { parsePathMap, parseQueueUrl, parseWorkers } from '../options.js';

interface Opts {
  queue: string;
  queueName: string;
  concurrency?: string;
  pathMap: string[];
  lockSeconds: string;
  idleExit?: string;
}

const positive = (name: string, s: string): number => {
  const v = Number(s);
  if (!Number.isFinite(v) || v <= 0 || v > 86_400) throw new InputError(`${name} must be a number of seconds in (0, 86400], got '${s}'`);
  return v;
};

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('answer clips from a Redis queue filled by `egogeo run --queue` (run as many as you like, on any machine that sees the dataset)')
    .requiredOption('--queue <url>', 'the Redis the coordinator uses: redis://HOST:PORT[/db] (rediss:// for TLS, redis://:password@HOST:PORT)')
    .option('--queue-name <name>', 'the BullMQ queue (the same as the coordinator\'s)', DEFAULT_QUEUE_NAME)
    .option('--concurrency <n>', 'clips answered at once (worker threads; default 1 — run one worker per machine with n = its cores)')
    .option('--path-map <from=to>', 'read the dataset\'s paths under FROM at TO on this machine (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--lock-seconds <s>', 'a clip whose worker died is retried elsewhere after this long', '30')
    .option('--idle-exit <s>', 'exit once the queue has been empty this long (batch jobs: Slurm, Kubernetes Jobs)')
    .action(async (o: Opts) => {
      const target = parseQueueUrl(o.queue, o.queueName);
      const { runQueueWorker } = await import('../../queue/worker.js'); // BullMQ only when this command runs
      await runQueueWorker({
        target,
        concurrency: o.concurrency === undefined ? 1 : parseWorkers(o.concurrency, '--concurrency'),
        pathMap: o.pathMap.map(parsePathMap),
        lockSeconds: positive('--lock-seconds', o.lockSeconds),
        idleExitSeconds: o.idleExit === undefined ? undefined : positive('--idle-exit', o.idleExit),
      });
      // The worker has stopped; a Redis client still retrying a lost server must not keep the process,
      // and a signal arriving meanwhile (its own handlers are gone) ends it as the stop did: status 0.
      for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(0));
      setTimeout(() => process.exit(), 2000).unref();
    });
}
