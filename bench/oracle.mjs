#!/usr/bin/env node
/**
 * Oracle throughput: trajectory → 10 Hz arrays → 12 features → 14 labels, on one core.
 *
 * 100,000 generated trajectories (deterministic PRNG): 31–40 samples with irregular timestamps
 * over ~3.3 s, speeds 0–25 m/s, piecewise-constant acceleration and yaw rate (including braking
 * to a stop and pulling away), centimetre position noise, yaw wrapped to (−π, π].
 * Median of 5 timed runs after a warm-up. Prints trajectories/s and writes bench/results/oracle.json.
 *
 * Needs the compiled library: `npx tsc -p tsconfig.json` (imports from dist/).
 * Options: --n N (trajectories, default 100000), --runs R (default 5).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measuredWith } from './lib/provenance.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { makeTrajectory } = await import(join(root, 'dist/core/trajectory.js'));
const { loadQuestions, runOracle } = await import(join(root, 'dist/oracle/index.js'));
const { mulberry32: prng } = await import(join(root, 'dist/core/random.js'));

const { values: args } = parseArgs({ options: { n: { type: 'string', default: '100000' }, runs: { type: 'string', default: '5' } } });
const N = Number(args.n);
const RUNS = Number(args.runs);


function generate(n, seed = 20260) {
  const rnd = prng(seed);
  const u = (lo, hi) => lo + (hi - lo) * rnd();
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const wrap = (a) => a - 2 * Math.PI * Math.floor((a + Math.PI) / (2 * Math.PI));
  const out = [];
  for (let k = 0; k < n; k++) {
    const m = 31 + Math.floor(rnd() * 10); // 31..40 samples
    const span = u(3.05, 3.6);
    const t = new Array(m);
    t[0] = u(0, 1000);
    const base = span / (m - 1);
    for (let i = 1; i < m; i++) t[i] = t[i - 1] + base * u(0.6, 1.4);
    // piecewise-constant accel / yaw rate with one switch
    const sw = u(0.5, 2.5);
    const a1 = u(-4.5, 3), a2 = rnd() < 0.2 ? -a1 : u(-4.5, 3);
    const w1 = rnd() < 0.4 ? 0 : u(-0.6, 0.6), w2 = rnd() < 0.5 ? w1 : u(-0.6, 0.6);
    let v = rnd() < 0.1 ? 0 : u(0, 25);
    let yaw = u(-Math.PI, Math.PI), x = u(-100, 100), y = u(-100, 100);
    const xs = new Array(m), ys = new Array(m), yaws = new Array(m);
    const sub = 8;
    for (let i = 0; i < m; i++) {
      if (i > 0) {
        const h = (t[i] - t[i - 1]) / sub;
        for (let s = 0; s < sub; s++) {
          const tm = t[i - 1] + (s + 0.5) * h - t[0];
          const a = tm < sw ? a1 : a2, w = tm < sw ? w1 : w2;
          v = Math.max(0, v + a * h);
          yaw += w * h;
          x += v * h * Math.cos(yaw);
          y += v * h * Math.sin(yaw);
        }
      }
      xs[i] = x + 0.003 * gauss();
      ys[i] = y + 0.003 * gauss();
      yaws[i] = wrap(yaw + 0.002 * gauss());
    }
    out.push(makeTrajectory(`gen${k}`, { t, x: xs, y: ys, yaw: yaws }));
  }
  return out;
}

const questions = loadQuestions();
const trajs = generate(N);

function runOnce() {
  let sink = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < trajs.length; i++) {
    const r = runOracle(trajs[i], questions);
    sink += r.labels.speed_regime.length;
  }
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (sink === 0) throw new Error('unreachable');
  return s;
}

// warm-up (JIT) on a slice
for (let i = 0; i < Math.min(trajs.length, 20_000); i++) runOracle(trajs[i], questions);

const seconds = [];
for (let r = 0; r < RUNS; r++) {
  seconds.push(runOnce());
  process.stderr.write(`run ${r + 1}/${RUNS}: ${(N / seconds[r]).toFixed(0)} trajectories/s\n`);
}
const sorted = [...seconds].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];
const rate = N / median;

// label histogram (shows the generated set is varied)
const hist = {};
for (const tr of trajs.slice(0, 10_000)) {
  for (const [q, l] of Object.entries(runOracle(tr, questions).labels)) {
    hist[q] ??= {};
    hist[q][l] = (hist[q][l] ?? 0) + 1;
  }
}

const result = {
  ...measuredWith(),
  benchmark: 'oracle: trajectory -> arrays -> 12 features -> 14 labels, one core',
  trajectories: N,
  samples_per_trajectory: '31-40, irregular',
  runs: RUNS,
  seconds,
  median_seconds: median,
  trajectories_per_second: Math.round(rate),
  target_trajectories_per_second: 50_000,
  node: process.version,
  cpu: cpus()[0]?.model ?? 'unknown',
  date: new Date().toISOString(),
  label_histogram_first_10000: hist,
};
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(join(root, 'bench/results/oracle.json'), `${JSON.stringify(result, null, 2)}\n`);
console.log(`oracle: ${Math.round(rate)} trajectories/s (median of ${RUNS} runs over ${N} trajectories; target 50000)`);
