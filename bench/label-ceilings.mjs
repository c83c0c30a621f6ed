// Do the label audit's ceilings hold? On every ../shared set: `egogeo audit labels` at each source's
// jitter measured from its poses (the default) and at the published absolute accuracies
// (`--source-level SRC=literature`), with the 10-frame sampling ceiling; then `egogeo run` at all
// frames and at the published 10, and `egogeo report --label-audit` against each audit: the run's
// pooled balanced accuracy with its bootstrap interval beside the ceilings over the same clips, and
// every ceiling the run beats (a ceiling an estimator beats is no bound). The commands are the ones
// a user types; the audits' JSON/Markdown/plots are the README's and docs/labels.md's figures.
// Run: npm run build && node bench/label-ceilings.mjs [--shared DIR] [--draws 20] [--workers 2]
//      → bench/results/label-ceilings.json, bench/results/label-audit-{kitti,published}.{json,md,svg,png}
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { measuredWith } from './lib/provenance.mjs';

const { values: args } = parseArgs({
  options: {
    shared: { type: 'string', default: new URL('../../shared', import.meta.url).pathname },
    draws: { type: 'string', default: '20' },
    workers: { type: 'string', default: '2' },
    out: { type: 'string', default: new URL('./results/label-ceilings.json', import.meta.url).pathname },
  },
});
const BIN = new URL('../bin/egogeo.js', import.meta.url).pathname;
const RESULTS = new URL('./results/', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bench-ceilings-'));

function egogeo(...argv) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...argv], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`egogeo ${argv.join(' ')} failed (${r.status}):\n${r.stderr}`);
  return { stdout: r.stdout, seconds: (performance.now() - t0) / 1000 };
}
const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));

// The sets: the KITTI windows of 00, 01 and 06 (poses at the frames), and the published-layout
// stand-in (nuScenes- and CARLA-shaped clips from the same KITTI poses, npz on the oracle's grid).
const cameras = join(tmp, 'cameras.json');
writeFileSync(cameras, JSON.stringify({ carla: { hfov_deg: 90, height: 1.65 } }));
const SETS = [
  { name: 'kitti', dataset: join(args.shared, 'data/egodyn_kitti'), runArgs: [], literature: 'kitti=literature' },
  {
    name: 'published',
    dataset: join(args.shared, 'data/published/egodyn-bench'),
    runArgs: ['--nuscenes-root', join(args.shared, 'data/published/nuscenes'), '--carla-domain', 'simulation', '--cameras', cameras, '--questions', 'all'],
    literature: 'nuscenes=literature',
  },
];

const result = { date: new Date().toISOString(), ...measuredWith(), draws: Number(args.draws), sets: {} };
for (const set of SETS) {
  const audits = {};
  for (const [level, extra] of [['measured', []], ['literature', ['--source-level', set.literature]]]) {
    const json = level === 'measured' ? join(RESULTS, `label-audit-${set.name}.json`) : join(tmp, `${set.name}-${level}.json`);
    const files = level === 'measured' ? ['--md', join(RESULTS, `label-audit-${set.name}.md`), '--plot', join(RESULTS, `label-audit-${set.name}.svg`)] : [];
    const { seconds } = egogeo('audit', 'labels', '--dataset', set.dataset, '--draws', args.draws, '--frames', '10,all', ...extra, '--json', json, ...files);
    const a = readJson(json);
    audits[level] = json;
    result.sets[set.name] ??= { dataset: set.dataset, n_clips: a.n_clips, audit: {}, runs: {} };
    result.sets[set.name].audit[level] = {
      seconds,
      source_levels: a.source_level_basis,
      jitter: a.jitter,
      noise_ceiling: { all: a.ceiling.pooled.all, subset: a.ceiling.pooled.subset, per_question: a.ceiling.pooled.per_question },
      ...(level === 'measured'
        ? { sampling: Object.fromEntries(Object.entries(a.sampling).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).map(([how, c]) => [how, { all: c.pooled.all, subset: c.pooled.subset, per_question: c.pooled.per_question }]))])) }
        : {}),
    };
    console.log(`${set.name}, ${level}: levels ${Object.entries(a.source_levels).map(([s, k]) => `${s} ${k}`).join(', ')}; noise ceiling ${a.ceiling.pooled.all.toFixed(3)} / ${a.ceiling.pooled.subset.toFixed(3)} (14 / 6)${a.sampling['10'] ? `; 10-frame sampling: spline ${a.sampling['10'].spline.pooled.all.toFixed(3)}, densify ${a.sampling['10'].densify.pooled.all.toFixed(3)}` : ''}`);
  }
  for (const frames of ['all', '10']) {
    const preds = join(tmp, `${set.name}-${frames}.jsonl`);
    const run = egogeo('run', '--dataset', set.dataset, ...set.runArgs, '--frames', frames, '--workers', args.workers, '--no-progress', '-o', preds);
    const entry = { run_seconds: run.seconds, checks: {} };
    for (const [level, json] of Object.entries(audits)) {
      const out = join(tmp, `rep-${set.name}-${frames}-${level}`);
      egogeo('report', preds, '--label-audit', json, '--out', out);
      const rep = readJson(join(out, 'report.json'));
      entry.checks[level] = {
        class_shares: rep.class_shares,
        disagreements: rep.disagreements.length,
        runs: rep.ceiling_checks.map((c) => ({
          run: c.run,
          n_clips: c.n_clips,
          pooled: Object.fromEntries(c.rows.filter((r) => r.scope === 'all' || r.scope === 'subset').map((r) => [r.scope, { balanced_acc: r.balanced_acc, ci: r.ci, noise: r.noise, noise_hi: r.noise_hi, sampling: r.sampling }])),
          per_question: Object.fromEntries(c.rows.filter((r) => r.scope !== 'all' && r.scope !== 'subset').map((r) => [r.scope, { balanced_acc: r.balanced_acc, noise: r.noise, sampling: r.sampling?.spline ?? null }])),
          beaten: c.beaten,
        })),
      };
      for (const c of entry.checks[level].runs) {
        const p = c.pooled.all;
        console.log(`  ${set.name}, ${frames} frames vs ${level}: ${c.run} ${p.balanced_acc.toFixed(3)} [${p.ci[0].toFixed(3)}, ${p.ci[1].toFixed(3)}] noise ceiling ${p.noise.toFixed(3)}${p.sampling ? `, sampling ${p.sampling.spline.toFixed(3)}` : ''}; ${c.beaten.length} beaten; disagreements ${Object.entries(entry.checks[level].class_shares).map(([k, v]) => `${k} ${(100 * v).toFixed(0)}%`).join(', ')}`);
        for (const b of c.beaten) console.log(`    ${b}`);
      }
    }
    result.sets[set.name].runs[frames] = entry;
  }
}
rmSync(tmp, { recursive: true, force: true });
writeFileSync(args.out, `${JSON.stringify(result, null, 2)}\n`);
console.log(`→ ${args.out}`);
