/**
 * src/pool: one worker runs tasks on the calling thread through the worker module's `inProcess`
 * (no worker thread to start); more workers, or a module without it, use piscina's threads.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { runPool } from '../../src/pool/index.js';

const dir = mkdtempSync(join(tmpdir(), 'egogeo-pool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const both = join(dir, 'both.mjs');
writeFileSync(
  both,
  `import { threadId } from 'node:worker_threads';
export default async (n) => ({ n, thread: threadId, via: 'worker' });
export async function inProcess(n) { await new Promise((r) => setImmediate(r)); return { n, thread: threadId, via: 'inProcess' }; }
`,
);
const workerOnly = join(dir, 'worker-only.mjs');
writeFileSync(workerOnly, `import { threadId } from 'node:worker_threads';\nexport default async (n) => ({ n, thread: threadId, via: 'worker' });\n`);

type Out = { n: number; thread: number; via: string };
async function collect(worker: string, workers: number): Promise<Out[]> {
  const out: Out[] = [];
  await runPool<number, Out>({ worker, tasks: [1, 2, 3], workers, label: 'test', progress: false, onResult: (r) => void out.push(r) });
  return out.sort((a, b) => a.n - b.n);
}

describe('runPool', () => {
  it('one worker and inProcess: every task on this thread, in order', async () => {
    const out = await collect(both, 1);
    expect(out.map((o) => [o.n, o.via, o.thread])).toEqual([
      [1, 'inProcess', threadId],
      [2, 'inProcess', threadId],
      [3, 'inProcess', threadId],
    ]);
  });

  it('two workers: worker threads, not this one', async () => {
    const out = await collect(both, 2);
    expect(out.map((o) => o.n)).toEqual([1, 2, 3]);
    for (const o of out) expect([o.via, o.thread === threadId]).toEqual(['worker', false]);
  });

  it('one worker without inProcess: a worker thread', async () => {
    const out = await collect(workerOnly, 1);
    for (const o of out) expect([o.via, o.thread === threadId]).toEqual(['worker', false]);
  });
});
