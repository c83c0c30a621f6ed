// `egogeo run --queue` against a local run on this machine: clips/s with 1, 2 and 3 `egogeo worker`
// processes (one clip at a time each) against `egogeo run --workers N` with the same total threads,
// and the queue's overhead per clip: (queued run − local run, one process each) / clips — enqueue,
// fetch, lock, result to Redis, event, collect, connect. Best of two runs each (the machine is shared).
// Workers are started (and warm) before the coordinator is timed, as long-lived workers are; the
// local run's time includes its pool's start. Checks every queue output equals the local one.
// Needs redis-server (Debian: apt-get install redis-server) and a built tree (npm run build).
// Run: node bench/queue.mjs [--dataset DIR] [--limit N] [--max-workers 3]  → bench/results/queue.json
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({
  options: {
    dataset: { type: 'string', default: new URL('../../shared/data/egodyn_kitti', import.meta.url).pathname },
    limit: { type: 'string', default: '24' },
    'max-workers': { type: 'string', default: '3' },
  },
});
const BIN = new URL('../bin/egogeo.js', import.meta.url).pathname;
if (spawnSync('redis-server', ['--version']).status !== 0) {
  console.error('bench/queue.mjs: redis-server is not installed (apt-get install redis-server)');
  process.exit(1);
}
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-queue-'));
const port = await new Promise((res) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => res(p));
  });
});
const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
const url = `redis://127.0.0.1:${port}`;
await new Promise((r) => setTimeout(r, 500));

const common = ['--dataset', args.dataset, '--limit', args.limit, '--no-progress'];
const time = (argv) => {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [BIN, ...argv], { encoding: 'utf8' });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`egogeo ${argv.join(' ')}: exit ${r.status}\n${r.stderr}`);
  return s;
};
function startWorker() {
  const child = spawn(process.execPath, [BIN, 'worker', '--queue', url, '--concurrency', '1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  const ready = new Promise((res) => {
    const t = setInterval(() => {
      if (/clip at a time/.test(err)) {
        clearInterval(t);
        res();
      }
    }, 20);
  });
  const done = new Promise((res) => child.on('exit', () => res()));
  return { child, ready, done, err: () => err };
}

const clips = Number(args.limit);
const rows = [];
try {
  for (let n = 1; n <= Number(args['max-workers']); n++) {
    // Best of two, local and queue alternating (the machine is shared: the minimum is the least disturbed).
    let tLocal = Infinity;
    let tQueue = Infinity;
    let local = '';
    let q = '';
    let workers = [];
    for (let rep = 0; rep < 2; rep++) {
      local = join(tmp, `local-${n}-${rep}`, 'preds.jsonl');
      mkdirSync(join(tmp, `local-${n}-${rep}`));
      tLocal = Math.min(tLocal, time(['run', ...common, '--workers', String(n), '-o', local]));
      workers = Array.from({ length: n }, startWorker);
      await Promise.all(workers.map((w) => w.ready));
      q = join(tmp, `queue-${n}-${rep}`, 'preds.jsonl');
      mkdirSync(join(tmp, `queue-${n}-${rep}`));
      tQueue = Math.min(tQueue, time(['run', ...common, '--queue', url, '-o', q]));
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.done));
    }
    const same = readFileSync(q, 'utf8') === readFileSync(local, 'utf8');
    const compute = workers.flatMap((w) => [...w.err().matchAll(/records in ([\d.]+) s/g)].map((m) => Number(m[1])));
    const row = {
      processes: n,
      clips,
      local_s: +tLocal.toFixed(2),
      local_clips_per_s: +(clips / tLocal).toFixed(2),
      queue_s: +tQueue.toFixed(2),
      queue_clips_per_s: +(clips / tQueue).toFixed(2),
      compute_s: +compute.reduce((a, b) => a + b, 0).toFixed(2),
      same_output: same,
    };
    // The queue's cost per clip beyond a local run with the same threads (one process each):
    // enqueue, fetch, lock, result to Redis, event, collect, and the coordinator's connect.
    if (n === 1) row.overhead_ms_per_clip = +(((tQueue - tLocal) / clips) * 1000).toFixed(1);
    rows.push(row);
    console.log(JSON.stringify(row));
  }
} finally {
  redis.kill('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
}
const result = { date: new Date().toISOString().slice(0, 10), ...measuredWith(), machine: `${cpus().length} cores, ${cpus()[0]?.model ?? '?'} (shared with other jobs)`, dataset: args.dataset, rows };
mkdirSync(new URL('./results', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/queue.json', import.meta.url), `${JSON.stringify(result, null, 1)}\n`);
console.log(JSON.stringify(result, null, 1));
