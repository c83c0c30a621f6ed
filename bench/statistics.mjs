#!/usr/bin/env node
/**
 * The statistics commands side by side with the reference's scripts, whole processes, alternating
 * in one run on one machine, and `validate` on 1,000 clips:
 *   bootstrap    egogeo grade FILE --bootstrap 1000 --seed 42   vs  scripts/bootstrap_confidence.py
 *                (the published VO baseline's predictions, 6,000 answers over 1,000 clips)
 *   per-question egogeo sensitivity ROOT --per-question           vs  scripts/per_threshold_sensitivity.py
 *                (the published stand-in's 45 clips, the 4 prediction files of test/fixtures/sensitivity)
 *   validate     egogeo validate on 1,000 clips: egodyn_kitti's 64 windows repeated under new ids
 *                (their arrays, QA and frame paths), every frame header read
 * Each egogeo figure also checks the outputs equal the script's (intervals, flip rates).
 *
 * Usage: npm run build && node bench/statistics.mjs --ref REF_DIR [--runs 3] [--python /usr/bin/python3]
 *   REF_DIR: a working tree of TUM-AVS/EgoDyn-Bench (or EGODYN_REF); Debian's python3-numpy,
 *   python3-yaml, python3-matplotlib, python3-seaborn (the per-threshold script plots).
 * Writes bench/results/statistics.json.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measuredWith } from './lib/provenance.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({ options: { ref: { type: 'string', default: process.env.EGODYN_REF }, runs: { type: 'string', default: '3' }, python: { type: 'string', default: '/usr/bin/python3' } } });
const die = (m) => {
  console.error(`bench/statistics: ${m}`);
  process.exit(1);
};
const REF = args.ref;
const RUNS = Number(args.runs);
const PYTHON = args.python;
const SHARED = join(root, '..', 'shared');
if (!REF || !existsSync(join(REF, 'scripts/bootstrap_confidence.py'))) die('--ref DIR (or EGODYN_REF) must be a working tree of TUM-AVS/EgoDyn-Bench');
if (!existsSync(join(SHARED, 'golden/reference_results/vod.jsonl'))) die(`${SHARED} lacks golden/reference_results/vod.jsonl`);
if (!existsSync(join(root, 'dist/cli/main.js'))) die('build first: npm run build');

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-stats-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const BIN = join(root, 'bin/egogeo.js');

/** Wall seconds of a whole process (median of RUNS); fails loudly. */
function timed(cmd, cwd = root) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd[0], cmd.slice(1), { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0 && !(cmd.includes('validate') && r.status === 1)) die(`${cmd.join(' ')} failed (${r.status}): ${r.stderr.slice(-400)}`);
  return { s, out: r.stdout, err: r.stderr };
}
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];

/** Alternates egogeo and the reference RUNS times; returns medians and the last outputs. */
function sideBySide(egogeo, reference) {
  const e = [], p = [];
  let last;
  for (let k = 0; k < RUNS; k++) {
    const a = egogeo(), b = reference();
    e.push(a.s);
    p.push(b.s);
    last = { a, b };
  }
  return { egogeo_s: median(e), reference_s: median(p), speedup: median(p) / median(e), last };
}

const results = {};

// --- bootstrap -----------------------------------------------------------------------------
{
  const gen = join(tmp, 'gen');
  mkdirSync(gen);
  copyFileSync(join(SHARED, 'golden/reference_results/vod.jsonl'), join(gen, 'vod.jsonl'));
  const ej = join(tmp, 'vod.metrics.json'), pj = join(tmp, 'vod.boot.json');
  const r = sideBySide(
    () => timed([process.execPath, BIN, 'grade', join(gen, 'vod.jsonl'), '--bootstrap', '1000', '--seed', '42', '--json', ej]),
    () => timed([PYTHON, 'scripts/bootstrap_confidence.py', '--generated-dir', gen, '--n_bootstrap', '1000', '--seed', '42', '--output', pj], REF),
  );
  const e = JSON.parse(readFileSync(ej, 'utf8')).bootstrap, p = JSON.parse(readFileSync(pj, 'utf8'))[0];
  const fields = ['balanced_acc', 'balanced_acc_ci_lo', 'balanced_acc_ci_hi', 'wpcr', 'wpcr_ci_lo', 'wpcr_ci_hi'];
  const equal = fields.every((f) => e[f] === p[f]);
  results.bootstrap = { what: 'vod.jsonl, 1,000 clips, 1,000 draws', egogeo_s: r.egogeo_s, reference_s: r.reference_s, speedup: r.speedup, intervals_equal: equal, interval: [e.balanced_acc_ci_lo, e.balanced_acc_ci_hi] };
  console.log(`bootstrap: egogeo ${r.egogeo_s.toFixed(2)} s, reference ${r.reference_s.toFixed(2)} s (${r.speedup.toFixed(1)}x); intervals ${equal ? 'equal' : 'DIFFER'}`);
}

// --- per-question sensitivity --------------------------------------------------------------
{
  const pub = join(SHARED, 'data/published/egodyn-bench');
  const preds = join(root, 'test/fixtures/sensitivity/predictions');
  const refTree = join(tmp, 'ref');
  // The script reads arrays from <its root>/output/{nuscenes,carla}_clips (its root resolved through
  // links): a private copy of its code, with output/ linking the dataset.
  mkdirSync(refTree);
  for (const d of ['scripts', 'evaluation', 'dataset']) cpSync(join(REF, d), join(refTree, d), { recursive: true });
  symlinkSync(pub, join(refTree, 'output'));
  const ej = join(tmp, 'pq.json'), pout = join(tmp, 'pts');
  const files = ['model_a', 'model_b', 'model_c', 'model_d'].map((m) => join(preds, `${m}.jsonl`)).join(',');
  const r = sideBySide(
    () => timed([process.execPath, BIN, 'sensitivity', pub, '--per-question', '--from', '0.5', '--to', '1.5', '--step', '0.1', '--predictions', files, '--json', ej]),
    () => timed([PYTHON, 'scripts/per_threshold_sensitivity.py', '--selected_clips', join(pub, 'selected_clips.json'), '--generated_dir', preds, '--output_dir', pout], refTree),
  );
  const e = JSON.parse(readFileSync(ej, 'utf8')), p = JSON.parse(readFileSync(join(pout, 'per_threshold_sensitivity.json'), 'utf8'));
  const key = (a) => (Number.isInteger(a) ? a.toFixed(1) : String(a));
  const equal = e.perQuestion.every((q) => e.alphas.every((a, k) => q.flipRate[k] === p.per_question[q.question].label_flip_rates[key(a)] && q.tau[k] === p.per_question[q.question].global_rank_tau[key(a)]));
  results.per_question = { what: '45 clips, 4 prediction files, 11 alphas, 14 questions (the script also draws its figures)', egogeo_s: r.egogeo_s, reference_s: r.reference_s, speedup: r.speedup, flip_rates_and_tau_equal: equal };
  console.log(`per-question sensitivity: egogeo ${r.egogeo_s.toFixed(2)} s, reference ${r.reference_s.toFixed(2)} s (${r.speedup.toFixed(1)}x); flip rates and tau ${equal ? 'equal' : 'DIFFER'}`);
}

// --- validate on 1,000 clips ---------------------------------------------------------------
{
  const src = join(SHARED, 'data/egodyn_kitti');
  const ds = join(tmp, 'kitti1000');
  mkdirSync(join(ds, 'arrays'), { recursive: true });
  const index = readFileSync(join(src, 'clips_index.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const qa = readFileSync(join(src, 'qa.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const idx = [], qas = [];
  for (let k = 0; idx.length < 1000; k++) {
    for (const c of index) {
      if (idx.length >= 1000) break;
      const id = `${c.clip_id}_r${k}`;
      copyFileSync(join(src, c.array_ref), join(ds, 'arrays', `${id}.npz`));
      idx.push({ ...c, clip_id: id, array_ref: `arrays/${id}.npz`, frame_paths: c.frame_paths.map((p) => join(src, p)) });
      for (const q of qa) if (q.clip_id === c.clip_id) qas.push({ ...q, qa_id: `${q.qa_id}_r${k}`, clip_id: id });
    }
  }
  writeFileSync(join(ds, 'clips_index.jsonl'), idx.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeFileSync(join(ds, 'qa.jsonl'), qas.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const ru = join(tmp, 'ru.json');
  const times = [];
  let last;
  for (let k = 0; k < RUNS; k++) {
    const t0 = process.hrtime.bigint();
    last = spawnSync(process.execPath, ['--import', join(root, 'bench/lib/rusage.mjs'), BIN, 'validate', ds, '--no-progress'], { encoding: 'utf8', env: { ...process.env, EGOGEO_RUSAGE_OUT: ru } });
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  const usage = JSON.parse(readFileSync(ru, 'utf8'));
  results.validate = { what: '1,000 clips (egodyn_kitti repeated), 14,000 QA items, 31,000 frame headers', seconds: median(times), clips_per_s: 1000 / median(times), max_rss_mb: usage.maxRssMB, findings: last.stdout.split('\n').filter(Boolean).length, summary: last.stderr.trim() };
  console.log(`validate: 1,000 clips in ${median(times).toFixed(2)} s (${(1000 / median(times)).toFixed(0)} clips/s), peak RSS ${usage.maxRssMB.toFixed(0)} MB; ${last.stderr.trim()}`);
}

const machine = `${cpus().length} × ${cpus()[0].model}, node ${process.version}`;
mkdirSync(join(root, 'bench/results'), { recursive: true });
const file = join(root, 'bench/results/statistics.json');
writeFileSync(file, `${JSON.stringify({ command: `node bench/statistics.mjs --ref REF --runs ${RUNS}`, date: new Date().toISOString().slice(0, 10), ...measuredWith(), machine, results }, null, 2)}\n`);
console.log(`→ ${file}`);
