/**
 * src/pool: one worker runs tasks on the calling thread through the worker module's `inProcess`
 * (no worker thread to start); more workers, or a module without it, use piscina's threads. Each
 * lane takes runs of neighbouring tasks, and takes over half of another's when its own run out.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { BlockQueue, runPool } from '../../src/pool/index.js';

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

describe('runPool: failures keep their kind across the worker thread (pool/transport.ts)', () => {
  it('a worker thread throwing ClipDataError, CancelledError, a file-system error or a plain Error: the same kinds arrive', async () => {
    const { ensureDist, ROOT } = await import('./fixtures.js');
    ensureDist();
    const { pathToFileURL } = await import('node:url');
    const dist = (p: string) => pathToFileURL(join(ROOT, 'dist', p)).href;
    const failing = join(dir, 'failing.mjs');
    writeFileSync(
      failing,
      `import { readFileSync } from 'node:fs';
import { transportErrors } from '${dist('pool/transport.js')}';
import { CancelledError, ClipDataError } from '${dist('core/errors.js')}';
export default transportErrors(async (n) => {
  if (n === 1) throw new ClipDataError('missing frame /x/1.jpg');
  if (n === 2) throw new CancelledError();
  if (n === 3) readFileSync('${join(dir, 'nowhere.txt')}');
  if (n === 4) throw new Error('plain');
  return { n };
});
`,
    );
    const { CancelledError, ClipDataError } = await import('../../src/core/errors.js');
    const errors = new Map<number, Error>();
    const ok: number[] = [];
    await runPool<number, { n: number }>({ worker: failing, tasks: [1, 2, 3, 4, 5], workers: 2, label: 'test', progress: false, onResult: (r) => void ok.push(r.n), onError: (e, n) => void errors.set(n, e) });
    expect(ok).toEqual([5]);
    expect(errors.get(1)).toBeInstanceOf(ClipDataError);
    expect(errors.get(1)!.message).toBe('missing frame /x/1.jpg');
    expect(errors.get(2)).toBeInstanceOf(CancelledError);
    expect(errors.get(3)).toMatchObject({ code: 'ENOENT', syscall: 'open', path: join(dir, 'nowhere.txt') });
    expect(errors.get(4)).toMatchObject({ name: 'Error', message: 'plain' });
    expect(errors.get(4)).not.toBeInstanceOf(ClipDataError);
  });
});

describe('BlockQueue: which task a lane takes next', () => {
  const drain = (q: BlockQueue, lane: number) => {
    const out: number[] = [];
    for (let i = q.take(lane); i !== undefined; i = q.take(lane)) out.push(i);
    return out;
  };

  it('one lane takes every task in order', () => {
    expect(drain(new BlockQueue(7, 1), 0)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(new BlockQueue(0, 3).take(2)).toBeUndefined();
  });

  it('lanes start on contiguous blocks and take neighbours', () => {
    const q = new BlockQueue(10, 3);
    const got = [0, 1, 2, 0, 1, 2].map((l) => q.take(l));
    expect(got).toEqual([0, 3, 6, 1, 4, 7]);
  });

  it('a lane out of work takes the back half of the largest block left, and every task is taken once', () => {
    const q = new BlockQueue(10, 2);
    expect(q.take(0)).toBe(0);
    // Lane 1 finishes its own block (5-9) while lane 0 is still on task 0 ...
    expect([1, 1, 1, 1, 1].map(() => q.take(1))).toEqual([5, 6, 7, 8, 9]);
    // ... then takes 3-4 from lane 0's 1-4, which keeps 1-2.
    expect(q.take(1)).toBe(3);
    expect(q.take(0)).toBe(1);
    expect(drain(q, 1)).toEqual([4, 2]);
    expect(q.take(0)).toBeUndefined();
  });

  it('hands out each of many tasks exactly once, whatever order lanes ask in', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (const [n, k] of [[54, 2], [53, 4], [5, 8], [100, 16]]) {
      const q = new BlockQueue(n, k);
      const seen: number[] = [];
      const live = new Set(Array.from({ length: k }, (_, i) => i));
      while (live.size > 0) {
        const l = [...live][Math.floor(rand() * live.size)];
        const i = q.take(l);
        if (i === undefined) live.delete(l);
        else seen.push(i);
      }
      expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
    }
  });
});
