// Side-by-side speed of the published VO proxy and egogeo, whole processes, on ONE core, in ONE run
// (machines here differ by 1.6x from day to day: the ratio is only meaningful measured together).
//
//   proxy:  python3 ../shared/tools/anchor_vo_proxy.py REF KITTI GOLD OUT SEQ
//           (the reference repository's VOProxyBaseline on 10 evenly spaced frames per window)
//   egogeo: node bin/egogeo.js baseline --kitti KITTI/SEQ --frames 10
//
// Both read JPEG frames from disk, answer every window of the sequence and write predictions; each
// is timed as a whole process (start-up included) pinned to the same core with taskset, runs
// alternating (proxy, egogeo, egogeo, proxy, …) so a slow patch of the machine hits both alike.
// Seconds per clip = process wall time / windows; the ratio is proxy / egogeo per run, median
// over runs. The same from CPU seconds (user + system, GNU time) comes beside it: on a core that
// other work shares, wall time counts the others' slices too, CPU time only the process's own.
// Pooled balanced accuracy of both (the reference grader's `global`) comes with it.
//
//   npm run build && node bench/vo-vs-proxy.mjs --ref DIR [--seq 00[,01+06,…]] [--runs 3] [--core 0] [--resolution auto[,half,full]]
//     --seq  sets of sequences; 01+06 runs one process per sequence (as a user would) and pools them:
//            seconds summed over the set's processes, divided by its windows
//     --ref  a working tree of TUM-AVS/EgoDyn-Bench (or EGODYN_REF); the proxy needs Debian's
//            python3-opencv, python3-scipy, python3-yaml (/usr/bin/python3)
// Writes bench/results/vo-vs-proxy.json.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measuredWith } from './lib/provenance.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SHARED = join(ROOT, '../shared');
const { values: args } = parseArgs({
  options: {
    ref: { type: 'string', default: process.env.EGODYN_REF },
    seq: { type: 'string', default: '00' },
    runs: { type: 'string', default: '3' },
    core: { type: 'string', default: '0' },
    resolution: { type: 'string', default: 'auto' },
    python: { type: 'string', default: '/usr/bin/python3' },
  },
});
const REF = args.ref;
const SEQS = args.seq.split(',');
const RUNS = Number(args.runs);
const CORE = args.core;
// egogeo's --resolution, one or more (each timed in the same alternating runs, so every ratio is side by side).
const RESOLUTIONS = args.resolution.split(',');
const PYTHON = args.python;
const KITTI = join(SHARED, 'data/kitti');
const GOLD = join(SHARED, 'golden/oracle_cases.jsonl');
const PROXY = join(SHARED, 'tools/anchor_vo_proxy.py');

const die = (line) => {
  console.error(`bench/vo-vs-proxy.mjs: ${line}`);
  process.exit(1);
};
if (!REF || !existsSync(join(REF, 'baselines/vo_proxy_baseline.py'))) die('--ref DIR (or EGODYN_REF) must be a working tree of TUM-AVS/EgoDyn-Bench (baselines/vo_proxy_baseline.py)');
for (const p of [PROXY, GOLD, ...SEQS.flatMap((s) => s.split('+')).map((s) => join(KITTI, s))]) if (!existsSync(p)) die(`${p} is missing (../shared)`);
if (!existsSync(join(ROOT, 'dist/cli/main.js'))) die('build first (npm run build)');
const probe = spawnSync(PYTHON, ['-c', 'import cv2, numpy, scipy, yaml'], { encoding: 'utf8' });
if (probe.status !== 0) die(`${PYTHON} cannot import cv2/numpy/scipy/yaml (apt-get install python3-opencv python3-scipy python3-yaml)`);
if (spawnSync('taskset', ['-c', CORE, 'true']).status !== 0) die(`taskset -c ${CORE} does not work here`);
if (spawnSync('/usr/bin/time', ['-f', '%U', 'true']).status !== 0) die('/usr/bin/time (GNU time) is missing (apt-get install time)');

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-vo-vs-proxy-'));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Runs argv pinned to CORE; returns wall seconds, CPU seconds (user + system, from GNU time) and
 * stdout. CPU seconds are the cost on the core whatever else runs on the machine; wall seconds
 * equal them only on an otherwise idle core.
 */
function timed(argv, what) {
  const cpuFile = join(tmp, 'cpu.txt');
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', '-o', cpuFile, 'taskset', '-c', CORE, ...argv], { encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, OMP_NUM_THREADS: '1' } });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) die(`${what} failed (exit ${r.status ?? r.signal}): ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ')}`);
  const [user, sys] = readFileSync(cpuFile, 'utf8').trim().split('\n').pop().split(/\s+/).map(Number);
  return { seconds, cpuSeconds: user + sys, stdout: r.stdout };
}

/** A set of sequences ("01+06": one process per sequence, as a user runs them) timed as the sum of its processes. */
function pooled(set, one) {
  const parts = set.split('+').map(one);
  const sum = (k) => parts.reduce((s, p) => s + p[k], 0);
  const clips = sum('clips');
  // Per-clip figures and the proxy's balanced accuracy: the sequences' clip-weighted mean (the proxy grades each of its runs alone).
  const weighted = (k) => (parts.every((p) => typeof p[k] === 'number') ? parts.reduce((s, p) => s + p[k] * p.clips, 0) / clips : null);
  return { seconds: sum('seconds'), cpuSeconds: sum('cpuSeconds'), clips, secPerClipInsidePredict: weighted('secPerClipInsidePredict'), bacc: parts.length === 1 ? parts[0].bacc : weighted('bacc') };
}

function proxy(set, k) {
  return pooled(set, (seq) => {
    const out = join(tmp, `proxy-${seq}-${k}.jsonl`);
    const { seconds, cpuSeconds, stdout } = timed([PYTHON, PROXY, REF, KITTI, GOLD, out, seq], `the VO proxy on ${seq}`);
    const j = JSON.parse(stdout.slice(stdout.indexOf('{')));
    return { seconds, cpuSeconds, clips: j.clips, secPerClipInsidePredict: j.sec_per_clip, bacc: j.bacc };
  });
}

function egogeo(set, k, resolution) {
  const outs = [];
  const timing = pooled(set, (seq) => {
    const out = join(tmp, `egogeo-${seq}-${k}-${resolution}.jsonl`);
    outs.push(out);
    const { seconds, cpuSeconds } = timed([process.execPath, join(ROOT, 'bin/egogeo.js'), 'baseline', '--kitti', join(KITTI, seq), '--frames', '10', '--resolution', resolution, '--questions', 'all', '-o', out], `egogeo baseline on ${seq}`);
    const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    return { seconds, cpuSeconds, clips: new Set(lines.map((l) => JSON.parse(l).clip_id)).size };
  });
  // The set's predictions graded together (pooled balanced accuracy over its windows).
  const all = join(tmp, `egogeo-${set}-${k}-${resolution}.all.jsonl`);
  writeFileSync(all, outs.map((o) => readFileSync(o, 'utf8')).join(''));
  const g = spawnSync(process.execPath, [join(ROOT, 'bin/egogeo.js'), 'grade', all, '--json', `${all}.grade.json`], { encoding: 'utf8' });
  const bacc = g.status === 0 ? JSON.parse(readFileSync(`${all}.grade.json`, 'utf8')).global?.balanced_acc : null;
  return { ...timing, bacc };
}

const machine = { cpus: cpus().length, model: cpus()[0]?.model?.trim(), node: process.version, core: Number(CORE) };
const results = [];
console.log(`VO proxy vs egogeo, whole processes on core ${CORE}, 10 frames per window, ${RUNS} run(s) alternating`);
for (const seq of SEQS) {
  const runs = [];
  for (let k = 0; k < RUNS; k++) {
    const who = ['proxy', ...RESOLUTIONS];
    const order = k % 2 ? who.reverse() : who;
    const r = {};
    for (const w of order) r[w] = w === 'proxy' ? proxy(seq, k) : egogeo(seq, k, w);
    const p = r.proxy.seconds / r.proxy.clips, pc = r.proxy.cpuSeconds / r.proxy.clips;
    const run = { clips: r.proxy.clips, proxySecPerClip: p, proxyCpuSecPerClip: pc, proxySecPerClipInsidePredict: r.proxy.secPerClipInsidePredict, proxyBacc: r.proxy.bacc, egogeo: {} };
    for (const res of RESOLUTIONS) {
      if (r.proxy.clips !== r[res].clips) die(`${seq}: the proxy answered ${r.proxy.clips} windows, egogeo (--resolution ${res}) ${r[res].clips}`);
      const e = r[res].seconds / r[res].clips, ec = r[res].cpuSeconds / r[res].clips;
      run.egogeo[res] = { secPerClip: e, ratio: p / e, cpuSecPerClip: ec, cpuRatio: pc / ec, bacc: r[res].bacc };
    }
    runs.push(run);
    console.log(`  ${seq} run ${k + 1}: proxy ${p.toFixed(3)} s/clip (CPU ${pc.toFixed(3)}), ${RESOLUTIONS.map((res) => `egogeo --resolution ${res} ${run.egogeo[res].secPerClip.toFixed(3)} s/clip (CPU ${run.egogeo[res].cpuSecPerClip.toFixed(3)}) -> ${run.egogeo[res].ratio.toFixed(2)}x (CPU ${run.egogeo[res].cpuRatio.toFixed(2)}x)`).join(', ')}`);
  }
  const row = { sequence: seq, clips: runs[0].clips, proxySecPerClip: median(runs.map((r) => r.proxySecPerClip)), proxyCpuSecPerClip: median(runs.map((r) => r.proxyCpuSecPerClip)), proxyBacc: runs[0].proxyBacc, egogeo: {}, runs };
  for (const res of RESOLUTIONS) {
    const ratios = runs.map((r) => r.egogeo[res].ratio), cpuRatios = runs.map((r) => r.egogeo[res].cpuRatio);
    row.egogeo[res] = {
      secPerClip: median(runs.map((r) => r.egogeo[res].secPerClip)),
      cpuSecPerClip: median(runs.map((r) => r.egogeo[res].cpuSecPerClip)),
      ratioMedian: median(ratios),
      ratios: ratios.map((x) => +x.toFixed(3)),
      cpuRatioMedian: median(cpuRatios),
      cpuRatios: cpuRatios.map((x) => +x.toFixed(3)),
      bacc14: runs[0].egogeo[res].bacc,
    };
    const e = row.egogeo[res];
    console.log(`${seq}: ${row.clips} windows  proxy ${row.proxySecPerClip.toFixed(3)} s/clip  egogeo --resolution ${res} ${e.secPerClip.toFixed(3)} s/clip: ${e.ratioMedian.toFixed(2)}x faster (runs ${e.ratios.join(', ')}); CPU seconds ${e.cpuRatioMedian.toFixed(2)}x (runs ${e.cpuRatios.join(', ')})  pooled BAcc: proxy ${row.proxyBacc?.toFixed(3)} (its questions), egogeo ${e.bacc14?.toFixed(3)} (all 14)`);
  }
  results.push(row);
}
rmSync(tmp, { recursive: true, force: true });
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
const file = join(ROOT, 'bench/results/vo-vs-proxy.json');
writeFileSync(file, `${JSON.stringify({ command: ['node bench/vo-vs-proxy.mjs', ...process.argv.slice(2).map((a) => (a === REF ? 'REF' : a))].join(' '), date: new Date().toISOString().slice(0, 10), ...measuredWith(), machine, target: 'the default (--resolution auto) >= 4.5x faster per clip than the published VO proxy on KITTI 00 and 01+06 (issue 67; one core, whole processes, same run)', results }, null, 2)}\n`);
console.log(`wrote ${file}`);
