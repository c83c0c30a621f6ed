/**
 * `egogeo run --queue` + `egogeo worker` against a real redis-server (test/queue/redis.ts; skipped
 * with a message when the binary is missing): the output, manifest, trajectories and errors file
 * equal a local run's byte for byte; a bad clip ends in the errors file after its attempts with
 * exit status 1; a worker SIGKILLed mid-run and a coordinator stopped (SIGTERM) and killed
 * (SIGKILL) then restarted still give the local run's output, without duplicates; workers exit
 * cleanly on SIGTERM.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeTask, encodeTask, jobId, mapPath, mapTask } from '../../src/queue/index.js';
import { parsePathMap, parseQueueUrl } from '../../src/cli/options.js';
import type { ClipTask } from '../../src/run/task.js';
import { engineConfig } from '../../src/vo/config.js';
import { queueDevice } from '../../src/cli/options.js';
import { appendRecords, BIN, cli, ensureDist, HAS_EGODYN_KITTI, kittiSubset, NATIVE_BUILT, readJsonl, ROOT, syntheticDataset } from '../run/fixtures.js';
import { HAS_REDIS, type RedisServer, redisCommand, startRedis } from './redis.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-queue-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const read = (p: string) => readFileSync(p, 'utf8');
const lines = (p: string) => (existsSync(p) ? read(p).split('\n').filter(Boolean).length : 0);

interface Proc {
  child: ChildProcess;
  stderr: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Every process the tests start, killed after them (a failed test must not leave workers behind). */
const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function start(args: string[]): Proc {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } });
  started.push(child);
  let err = '';
  child.stderr!.on('data', (d) => (err += String(d)));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stderr: err }));
  });
  return { child, stderr: () => err, done };
}

/** Waits for a condition on what the processes wrote (no time bound: vitest's test timeout is the hang guard). */
async function until(what: string, ok: () => boolean): Promise<void> {
  while (!ok()) await new Promise((r) => setTimeout(r, 25));
}

/** Every file a run writes beside OUT (the lock and the run record's times aside) equals the reference's. */
function expectSameRun(out: string, ref: string): void {
  expect(read(out)).toBe(read(ref));
  expect(read(`${out}.errors.jsonl`)).toBe(read(`${ref}.errors.jsonl`));
  expect(read(`${out}.manifest.json`)).toBe(read(`${ref}.manifest.json`));
  const trajs = readdirSync(`${ref}.trajectories`).sort();
  expect(readdirSync(`${out}.trajectories`).sort()).toEqual(trajs);
  for (const f of trajs) expect(read(join(`${out}.trajectories`, f)), f).toBe(read(join(`${ref}.trajectories`, f)));
  const preds = readJsonl<{ clip_id: string; question_id: string }>(out);
  expect(new Set(preds.map((p) => `${p.clip_id}/${p.question_id}`)).size).toBe(preds.length);
}

describe('queue codec and URLs (no Redis)', () => {
  it('round-trips a task with typed arrays exactly; job ids are per run and clip; paths map by whole components', () => {
    const groundTruth = { id: 'x', t: Float64Array.of(0.1, 1 / 3), x: Float64Array.of(-0, 1e-300), y: Float64Array.of(2), yaw: Float64Array.of(Math.PI) };
    const t: ClipTask = { clip: { index: 3, id: 'a:b c', source: 's', camera: { height: 1.5 }, timestamps: Float64Array.of(0, 0.1), qa: [], groundTruth }, qa: [], engine: engineConfig({ frames: 10 }), config: '/q.yaml', questionIds: ['a'], qaBase: 0, cancel: new Int32Array(1) };
    const back = decodeTask(encodeTask(t));
    expect(back.cancel).toBeUndefined();
    expect(back.clip.groundTruth!.t).toEqual(groundTruth.t);
    expect(back.clip.groundTruth!.yaw[0]).toBe(Math.PI);
    expect(back.clip.timestamps).toEqual(Float64Array.of(0, 0.1));
    expect(back.engine).toEqual(t.engine);
    const mapped = mapTask({ ...t, clip: { ...t.clip, frames: [{ video: '/data/egodyn/v.mp4', index: 2 }, '/data/egodyn/1.jpg'] } }, [parsePathMap('/data/egodyn=/mnt/e')]);
    expect(mapped.clip.frames).toEqual([{ video: '/mnt/e/v.mp4', index: 2 }, '/mnt/e/1.jpg']);
    expect(jobId('r1', 'a:b c')).toBe('r1.a%3Ab%20c');
    const maps = [parsePathMap('/data/egodyn/=/mnt/e')];
    expect(mapPath('/data/egodyn/frames/1.jpg', maps)).toBe('/mnt/e/frames/1.jpg');
    expect(mapPath('/data/egodynX/1.jpg', maps)).toBe('/data/egodynX/1.jpg');
    expect(() => parsePathMap('data=/x')).toThrow(/absolute/);
    expect(parseQueueUrl('redis://:pw@h:7000/2').connection).toMatchObject({ host: 'h', port: 7000, db: 2, password: 'pw' });
    expect(parseQueueUrl('redis://:pw@h:7000/2').shown).toBe('redis://:***@h:7000/2');
    expect(() => parseQueueUrl('http://h')).toThrow(/redis:\/\//);
  });

  it('--device with --queue: none is the CPU, gpu ships as asked, auto is refused with one line (the GPUs are the workers\')', () => {
    expect(queueDevice(undefined)).toBe('cpu');
    expect(queueDevice('cpu')).toBe('cpu');
    expect(queueDevice('gpu')).toBe('gpu');
    expect(() => queueDevice('auto')).toThrow(/^--device auto cannot be decided for --queue: .*pass --device gpu .* or --device cpu/);
    expect(() => queueDevice('tpu')).toThrow("--device must be one of auto, cpu, gpu, got 'tpu'");
  });

  it.skipIf(!NATIVE_BUILT)('run --queue --device auto: one line, exit 1, before Redis is asked', async () => {
    ensureDist();
    const ds = syntheticDataset(join(tmp, 'auto'), [{ id: 'c', speed: 8, yawRate: 0, frames: 4 }]);
    const r = cli(['run', '--dataset', ds, '--queue', 'redis://127.0.0.1:1', '--device', 'auto', '-o', join(tmp, 'auto.jsonl')]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^egogeo: --device auto cannot be decided for --queue/);
    expect(existsSync(join(tmp, 'auto.jsonl'))).toBe(false);
  });

  it.skipIf(!NATIVE_BUILT)('a coordinator without a reachable Redis stops with one line naming the URL', async () => {
    ensureDist();
    const ds = syntheticDataset(join(tmp, 'unreachable'), [{ id: 'c', speed: 8, yawRate: 0, frames: 4 }]);
    const r = cli(['run', '--dataset', ds, '--queue', 'redis://127.0.0.1:1', '-o', join(tmp, 'unreachable.jsonl')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
  });
});

describe.skipIf(!NATIVE_BUILT || !HAS_REDIS)('egogeo run --queue + egogeo worker on a rendered dataset (real redis-server)', () => {
  let redis: RedisServer;
  let ds = '';
  let ref = '';
  beforeAll(async () => {
    ensureDist();
    redis = await startRedis();
    ds = syntheticDataset(join(tmp, 'synth'), [
      { id: 'straight', speed: 8, yawRate: 0 },
      { id: 'left', speed: 8, yawRate: 0.3, seed: 2 },
      { id: 'right', speed: 8, yawRate: -0.3, seed: 3 },
      { id: 'slow', speed: 3, yawRate: 0, seed: 4 },
    ]);
    const index = readJsonl<{ frame_paths: string[]; frame_timestamps: number[] }>(join(ds, 'clips_index.jsonl'));
    const bad = { clip_id: 'bad_frame', source: 'synthetic', frame_paths: [...index[0].frame_paths.slice(0, 5), 'frames/nowhere/0005.pgm'], frame_timestamps: index[0].frame_timestamps.slice(0, 6) };
    writeFileSync(join(ds, 'clips_index.jsonl'), '');
    appendRecords(ds, [index[0], bad, index[1], index[2], index[3]]);
    ref = join(tmp, 'synth-local.jsonl');
    const r = cli(['run', '--dataset', ds, '-o', ref, '--workers', '2']);
    expect(r.code, r.stderr).toBe(1);
  });
  afterAll(async () => redis?.stop());

  it('two workers: the same files as a local run, the bad clip in the errors file after its attempts, exit 1; workers stop cleanly on SIGTERM', async () => {
    const workers = [start(['worker', '--queue', redis.url, '--lock-seconds', '3']), start(['worker', '--queue', `${redis.url}/0`, '--lock-seconds', '3'])];
    const out = join(tmp, 'synth-queue.jsonl');
    const c = await start(['run', '--dataset', ds, '--queue', redis.url, '--attempts', '2', '-o', out]).done;
    expect(c.code, c.stderr).toBe(1);
    expect(c.stderr).toMatch(/5 clips enqueued/);
    expect(c.stderr).toMatch(/1 clip failed .*bad_frame: missing frame .*nowhere/);
    expectSameRun(out, ref);
    const attempts = workers.map((w) => w.stderr()).join('').match(/bad_frame: failed \(attempt \d\/2\)/g) ?? [];
    expect(attempts.length).toBe(2);
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) {
      const r = await w.done;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/SIGTERM: taking no new clips/);
    }
    // A worker whose Redis has gone away still stops on SIGTERM.
    const other = await startRedis();
    const lonely = start(['worker', '--queue', other.url]);
    await until('the lonely worker', () => /clip at a time/.test(lonely.stderr()));
    await other.stop();
    lonely.child.kill('SIGTERM');
    const lr = await lonely.done;
    expect(lr.signal, lr.stderr).toBeNull();
    expect(lr.code, lr.stderr).toBe(0);
    // Collected jobs are removed: only the queue's bookkeeping keys remain.
    const keys = await redisCommand(redis.port, 'KEYS', 'bull:egogeo:*');
    expect(keys).not.toMatch(/bull:egogeo:[0-9a-f]{16}\./);
  });

  it("a worker whose --path-map leads to an edited copy of the dataset: the edited clip refused naming the file, in the errors file; the others as a local run's", async () => {
    const copy = join(tmp, 'synth-copy');
    execFileSync('cp', ['-r', ds, copy]);
    const frame = readJsonl<{ clip_id: string; frame_paths: string[] }>(join(copy, 'clips_index.jsonl')).find((r) => r.clip_id === 'left')!.frame_paths[2];
    const f = join(copy, frame);
    const bytes = readFileSync(f);
    bytes[bytes.length - 1] ^= 0xff; // one pixel of one frame
    writeFileSync(f, bytes);
    const w = start(['worker', '--queue', redis.url, '--lock-seconds', '3', '--path-map', `${ds}=${copy}`]);
    const out = join(tmp, 'synth-copy.jsonl');
    const c = await start(['run', '--dataset', ds, '--queue', redis.url, '--attempts', '1', '-o', out]).done;
    expect(c.code, c.stderr).toBe(1);
    const errors = readJsonl<{ clip_id: string; reason: string }>(`${out}.errors.jsonl`);
    expect(errors.map((e) => e.clip_id).sort()).toEqual(['bad_frame', 'left']);
    expect(errors.find((e) => e.clip_id === 'left')!.reason).toContain(`its frame 2 ${f} differs from the coordinator's ${join(ds, frame)}`);
    const others = (p: string) => read(p).split('\n').filter((l) => l && !l.includes('"clip_id":"left"')).join('\n');
    expect(others(out)).toBe(others(ref));
    w.child.kill('SIGTERM');
    expect((await w.done).code).toBe(0);
  });

  it('--method vo-proxy through the queue: the same files as a local run (predictions, per-clip signals, manifest)', async () => {
    const local = join(tmp, 'vo-local.jsonl'), queued = join(tmp, 'vo-queue.jsonl');
    expect(cli(['run', '--dataset', ds, '--method', 'vo-proxy', '-o', local, '--workers', '1']).code).toBe(1); // the bad clip
    const w = start(['worker', '--queue', redis.url, '--lock-seconds', '3']);
    const c = await start(['run', '--dataset', ds, '--method', 'vo-proxy', '--queue', redis.url, '--attempts', '1', '-o', queued]).done;
    expect(c.code, c.stderr).toBe(1);
    expectSameRun(queued, local);
    expect(readdirSync(`${queued}.trajectories`).every((f) => f.endsWith('.signals.json'))).toBe(true);
    w.child.kill('SIGTERM');
    expect((await w.done).code).toBe(0);
  });
});

describe.skipIf(!NATIVE_BUILT || !HAS_REDIS)('a Redis lost mid-run (killed, restarted empty)', () => {
  it('the coordinator and the worker say so, the coordinator enqueues again what Redis lost, the run finishes as a local run', async () => {
    ensureDist();
    const ds = syntheticDataset(join(tmp, 'lost'), Array.from({ length: 10 }, (_, i) => ({ id: `c${i}`, speed: 5 + i, yawRate: (i % 3) * 0.15 - 0.15, seed: 20 + i, frames: 20 })));
    const ref = join(tmp, 'lost-local.jsonl');
    expect(cli(['run', '--dataset', ds, '-o', ref, '--workers', '2']).code).toBe(0);
    let redis = await startRedis();
    const out = join(tmp, 'lost-queue.jsonl');
    const w = start(['worker', '--queue', redis.url, '--lock-seconds', '2']);
    const c = start(['run', '--dataset', ds, '--queue', redis.url, '--no-progress', '-o', out]);
    await until('the first clip written', () => lines(out) >= 2);
    await redis.kill();
    await until('the coordinator noticing', () => /is not answering/.test(c.stderr()));
    await until('the worker noticing', () => /retrying/.test(w.stderr()));
    redis = await startRedis(redis.port);
    await until('the coordinator re-enqueuing', () => /is back after \d+ s; \d+ clips? it had lost enqueued again/.test(c.stderr()));
    const r = await c.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/10\/10 clips/);
    expectSameRun(out, ref);
    w.child.kill('SIGTERM');
    expect((await w.done).code).toBe(0);
    expect(w.stderr()).toMatch(/answers again after \d+ s/);
    // A database the server does not have is an error, not database 0 under another name.
    const r99 = cli(['worker', '--queue', `${redis.url}/99`]);
    expect(r99.code).toBe(1);
    expect(r99.stderr.trim()).toMatch(/^egogeo: --queue redis:\/\/127\.0\.0\.1:\d+\/99: Redis has no database 99 \(ERR DB index is out of range\)$/);
    await redis.stop();
  });
});

describe.skipIf(!NATIVE_BUILT || !HAS_REDIS || !HAS_EGODYN_KITTI)('egogeo run --queue on egodyn_kitti (../shared, real redis-server)', () => {
  const IDS = ['kitti00_000000', 'kitti00_000005', 'kitti00_000010', 'kitti00_000015', 'kitti00_000020', 'kitti00_000025', 'kitti00_000030', 'kitti00_000035'];
  let redis: RedisServer;
  let ds = '';
  let ref = '';
  beforeAll(async () => {
    ensureDist();
    redis = await startRedis();
    ds = kittiSubset(join(tmp, 'kitti'), IDS);
    ref = join(tmp, 'kitti-local.jsonl');
    const r = cli(['run', '--dataset', ds, '-o', ref, '--workers', '2']);
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(async () => redis?.stop());

  it('a worker SIGKILLed while it holds a clip, the coordinator stopped (SIGTERM) and killed (SIGKILL) and restarted: the local run\'s output, no duplicates', async () => {
    const out = join(tmp, 'kitti-queue.jsonl');
    const args = ['run', '--dataset', ds, '--queue', redis.url, '-o', out];
    const w1 = start(['worker', '--queue', redis.url, '--lock-seconds', '2']);
    // Coordinator 1: SIGTERM once the first clip is written; it exits 143 and leaves its jobs queued.
    const c1 = start(args);
    await until('the first clip', () => lines(out) >= 14);
    c1.child.kill('SIGTERM');
    // Worker 1 keeps answering without a coordinator; SIGKILL it while it holds a clip: right after
    // it logs the start of its next one (the job is locked to it then, whatever the timing).
    const starts = () => [...w1.stderr().matchAll(/(kitti00_\d+): started/g)].map((m) => m[1]);
    const before = starts().length;
    await until('worker 1 starting another clip', () => starts().length > before);
    const held = starts().at(-1)!;
    w1.child.kill('SIGKILL');
    expect((await w1.done).signal).toBe('SIGKILL');
    expect(w1.stderr()).not.toMatch(new RegExp(`${held}: \\d+ records`));
    const r1 = await c1.done;
    expect(r1.code, r1.stderr).toBe(143);
    expect(r1.stderr).toMatch(/left on the queue for the next coordinator/);
    expect(lines(out)).toBeLessThan(IDS.length * 14);
    // Coordinator 2 (collects what finished meanwhile), killed outright; worker 2 takes over the
    // dead worker's clip once its lock expires.
    const w2 = start(['worker', '--queue', redis.url, '--lock-seconds', '2']);
    const c2 = start(args);
    await until('coordinator 2 collecting', () => /enqueued/.test(c2.stderr()));
    c2.child.kill('SIGKILL');
    await c2.done;
    // Coordinator 3 finishes the run.
    const r3 = await start(args).done;
    expect(r3.code, r3.stderr).toBe(0);
    expect(r3.stderr).toMatch(/8\/8 clips/);
    expectSameRun(out, ref);
    w2.child.kill('SIGTERM');
    expect((await w2.done).code).toBe(0);
    // Every clip was answered at least once by a worker; the clip the killed worker held, by worker 2
    // once that clip's lock expired.
    const all = (w1.stderr() + w2.stderr()).match(/kitti00_\d+: \d+ records/g) ?? [];
    expect(new Set(all.map((l) => l.split(':')[0])).size).toBe(IDS.length);
    expect(w2.stderr()).toMatch(new RegExp(`${held}: \\d+ records`));
  });
});
