/**
 * The async calls' own threads (native/work_pool.h): a caller that awaits each call runs them all
 * on one thread (its malloc arena keeps the clip's working set), concurrent calls start more, up
 * to UV_THREADPOOL_SIZE, and every call settles with the synchronous call's result. Each case runs
 * in a fresh process (a fresh load of the addon, and the pool size read from its environment).
 * Thread counts come from the pool's own bookkeeping, not from timing: a thread is marked free
 * before its call settles, so the next awaited call finds it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { drivingClip } from '../helpers/render.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const BUILT = existsSync(ADDON);
if (!BUILT) console.warn(`[egogeo tests] ${ADDON} is not built (npx cmake-js compile): work-pool tests are skipped.`);

/** Child body: `sequential` awaited calls, then `concurrent` at once, then a failing one; prints JSON. */
const BODY = `
const addon = require(process.argv[1]);
const [sequential, concurrent] = process.argv.slice(2).map(Number);
const c = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const clip = { ...c, frames: c.frames.map((f) => ({ ...f, data: Uint8Array.from(f.data) })), timestamps: Float64Array.from(c.timestamps) };
const slim = (r) => JSON.stringify([r.rotations, r.positions, r.pairs]);
(async () => {
  const want = slim(addon.processClip(clip, {}));
  const out = { before: addon.asyncThreads(), same: 0, calls: 0 };
  for (let i = 0; i < sequential; i++) { out.calls++; if (slim(await addon.processClipAsync(clip, {})) === want) out.same++; }
  out.afterSequential = addon.asyncThreads();
  const all = await Promise.all(Array.from({ length: concurrent }, () => addon.processClipAsync(clip, {})));
  out.calls += all.length;
  out.same += all.filter((r) => slim(r) === want).length;
  out.afterConcurrent = addon.asyncThreads();
  const bad = { ...clip, timestamps: clip.timestamps.map((t, i) => (i === 2 ? clip.timestamps[1] : t)) };
  out.rejected = await addon.processClipAsync(bad, {}).then(() => 'resolved', (e) => String(e.message));
  out.afterRejected = addon.asyncThreads();
  console.log(JSON.stringify(out));
})();
`;

function child(sequential: number, concurrent: number, env: Record<string, string> = {}) {
  const c = drivingClip({ frames: 4, speed: 10, yawRate: 0.05, seed: 9 });
  const input = JSON.stringify({ frames: c.frames.map((f) => ({ ...f, data: Array.from(f.data) })), timestamps: Array.from(c.timestamps), intrinsics: c.intrinsics });
  const { UV_THREADPOOL_SIZE: _drop, ...base } = process.env;
  const r = spawnSync(process.execPath, ['-e', BODY, ADDON, String(sequential), String(concurrent)], { input, encoding: 'utf8', env: { ...base, ...env }, timeout: 60_000, maxBuffer: 1 << 26 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string);
}

describe.skipIf(!BUILT)('the async calls run on the load\'s own threads', () => {
  it('awaited one after another, every call runs on one thread, with the synchronous result', () => {
    const r = child(5, 0);
    expect(r.before).toBe(0);
    expect(r.afterSequential).toBe(1);
    expect(r.same).toBe(5);
    // A failing call rejects with its message; the pool keeps its one thread.
    expect(r.rejected).toMatch(/strictly increasing/);
    expect(r.afterRejected).toBe(1);
  }, 90_000);

  it('calls in flight at once start more threads, at most UV_THREADPOOL_SIZE, and all settle with the same result', () => {
    const four = child(1, 8);
    expect(four.same).toBe(9);
    expect(four.afterConcurrent).toBeGreaterThan(1);
    expect(four.afterConcurrent).toBeLessThanOrEqual(4);
    // Two threads for eight calls: six wait in the queue and still settle.
    const two = child(0, 8, { UV_THREADPOOL_SIZE: '2' });
    expect(two.same).toBe(8);
    expect(two.afterConcurrent).toBeLessThanOrEqual(2);
    const one = child(0, 3, { UV_THREADPOOL_SIZE: '1' });
    expect(one.same).toBe(3);
    expect(one.afterConcurrent).toBe(1);
  }, 90_000);
});
