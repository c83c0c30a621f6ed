// The published geometric baselines, reference Python against egogeo's native methods, side by side
// in one run on the same KITTI windows (10 frames each): whole processes, alternating, the Python
// and egogeo's one-worker run pinned to the same core, egogeo's two-worker run on two cores.
// Seconds per clip = process wall time / windows (start-up included); parity = the share of answers
// (clip × question) egogeo gives exactly as the reference does.
//
//   python: /usr/bin/python3 ../shared/tools/anchor_baseline.py METHOD REF KITTI GOLD OUT SEQ
//   egogeo: node bin/egogeo.js baseline --kitti KITTI/SEQ --method METHOD --workers 1|2 -o OUT
//
//   npm run build && node bench/reference-baselines.mjs --ref DIR [--seq 00] [--methods vo-proxy,flow-heuristic] [--runs 3] [--core 0]
//     --ref  a working tree of TUM-AVS/EgoDyn-Bench (or EGODYN_REF); Debian's python3-opencv, python3-scipy, python3-yaml
// Writes bench/results/reference-baselines.json.
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
    methods: { type: 'string', default: 'vo-proxy,flow-heuristic' },
    runs: { type: 'string', default: '3' },
    core: { type: 'string', default: '0' },
    python: { type: 'string', default: '/usr/bin/python3' },
  },
});
const REF = args.ref;
const SEQ = args.seq;
const METHODS = args.methods.split(',');
const RUNS = Number(args.runs);
const CORE = args.core;
const PYTHON = args.python;
const KITTI = join(SHARED, 'data/kitti');
const GOLD = join(SHARED, 'golden/oracle_cases.jsonl');
const ANCHOR = join(SHARED, 'tools/anchor_baseline.py');

const die = (line) => {
  console.error(`bench/reference-baselines.mjs: ${line}`);
  process.exit(1);
};
if (!REF || !existsSync(join(REF, 'baselines/vo_proxy_baseline.py'))) die('--ref DIR (or EGODYN_REF) must be a working tree of TUM-AVS/EgoDyn-Bench');
for (const p of [ANCHOR, GOLD, join(KITTI, SEQ)]) if (!existsSync(p)) die(`${p} is missing (../shared)`);
if (!existsSync(join(ROOT, 'dist/cli/main.js'))) die('build first (npm run build)');
if (spawnSync(PYTHON, ['-c', 'import cv2, numpy, scipy, yaml']).status !== 0) die(`${PYTHON} cannot import cv2/numpy/scipy/yaml (apt-get install python3-opencv python3-scipy python3-yaml)`);
if (spawnSync('taskset', ['-c', CORE, 'true']).status !== 0) die(`taskset -c ${CORE} does not work here`);

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-reference-baselines-'));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
function timed(argv, what, pin) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(pin ? 'taskset' : argv[0], pin ? ['-c', CORE, ...argv] : argv.slice(1), { encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, OMP_NUM_THREADS: '1' } });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) die(`${what} failed (exit ${r.status ?? r.signal}): ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ')}`);
  return seconds;
}
const answers = (file) => new Map(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).map((r) => [`${r.clip_id} ${r.question_id}`, r.model_answer]));

const machine = { cpus: cpus().length, model: cpus()[0]?.model?.trim(), node: process.version, core: Number(CORE) };
const results = [];
console.log(`published baselines, reference Python vs egogeo, KITTI ${SEQ} windows, 10 frames, ${RUNS} run(s) alternating`);
for (const method of METHODS) {
  const runs = [];
  for (let k = 0; k < RUNS; k++) {
    const py = join(tmp, `py-${method}-${k}.jsonl`), e1 = join(tmp, `e1-${method}-${k}.jsonl`), e2 = join(tmp, `e2-${method}-${k}.jsonl`);
    const jobs = {
      python: () => timed([PYTHON, ANCHOR, method, REF, KITTI, GOLD, py, SEQ], `the reference ${method}`, true),
      egogeo1: () => timed([process.execPath, join(ROOT, 'bin/egogeo.js'), 'baseline', '--kitti', join(KITTI, SEQ), '--method', method, '--workers', '1', '--no-progress', '-o', e1], `egogeo ${method}, 1 worker`, true),
      egogeo2: () => timed([process.execPath, join(ROOT, 'bin/egogeo.js'), 'baseline', '--kitti', join(KITTI, SEQ), '--method', method, '--workers', '2', '--no-progress', '-o', e2], `egogeo ${method}, 2 workers`, false),
    };
    const order = k % 2 ? ['egogeo2', 'egogeo1', 'python'] : ['python', 'egogeo1', 'egogeo2'];
    const t = {};
    for (const who of order) t[who] = jobs[who]();
    const ref = answers(py), ours = answers(e1);
    const same = [...ref].filter(([key, a]) => ours.get(key) === a).length;
    const clips = new Set([...ref.keys()].map((key) => key.split(' ')[0])).size;
    runs.push({ clips, answers: ref.size, same, python: t.python / clips, egogeo1: t.egogeo1 / clips, egogeo2: t.egogeo2 / clips });
    console.log(`  ${method} run ${k + 1}: python ${(t.python / clips).toFixed(3)} s/clip, egogeo 1 worker ${(t.egogeo1 / clips).toFixed(3)}, 2 workers ${(t.egogeo2 / clips).toFixed(3)}; ${same}/${ref.size} answers equal`);
  }
  const row = {
    method,
    sequence: SEQ,
    clips: runs[0].clips,
    parity: runs[0].same / runs[0].answers,
    answers: runs[0].answers,
    pythonSecPerClip: median(runs.map((r) => r.python)),
    egogeo1SecPerClip: median(runs.map((r) => r.egogeo1)),
    egogeo2SecPerClip: median(runs.map((r) => r.egogeo2)),
    speedup1: median(runs.map((r) => r.python / r.egogeo1)),
    speedup2: median(runs.map((r) => r.python / r.egogeo2)),
    runs,
  };
  results.push(row);
  console.log(`${method}: ${row.clips} windows, parity ${(100 * row.parity).toFixed(1)}% of ${row.answers} answers; python ${row.pythonSecPerClip.toFixed(3)} s/clip, egogeo ${row.egogeo1SecPerClip.toFixed(3)} (1 worker, ${row.speedup1.toFixed(2)}x) / ${row.egogeo2SecPerClip.toFixed(3)} (2 workers, ${row.speedup2.toFixed(2)}x)`);
}
rmSync(tmp, { recursive: true, force: true });
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
const file = join(ROOT, 'bench/results/reference-baselines.json');
writeFileSync(file, `${JSON.stringify({ command: ['node bench/reference-baselines.mjs', ...process.argv.slice(2).map((a) => (a === REF ? 'REF' : a))].join(' '), date: new Date().toISOString().slice(0, 10), ...measuredWith(), machine, results }, null, 2)}\n`);
console.log(`wrote ${file}`);
