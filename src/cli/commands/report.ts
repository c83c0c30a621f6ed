/**
 * `egogeo report PREDS.jsonl [more.jsonl…] [--leaderboard FILE]`: one run per predictions file
 * (e.g. the CARLA simulation and transferred runs of the published layout), compared per domain
 * (nuScenes, CARLA simulation, CARLA transferred) and, with --leaderboard, placed among the
 * published leaderboard's rows; the oracle-vs-estimate cross-check with near-threshold analysis
 * and trajectory errors per domain; as Markdown + JSON + SVG plots (src/report/).
 */
import type { Command } from 'commander';
import { DEFAULT_SEED } from '../../grade/bootstrap.js';
import { NEAR_THRESHOLD } from '../../report/margins.js';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { InputError } from '../../core/errors.js';
import { writeDirAtomic } from '../../io/atomic.js';
import { guardOutputs } from '../../io/safety.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../../oracle/index.js';
import { loadReportInputs, readLeaderboard } from '../../report/load.js';
import { readLabelAudit } from '../../report/labelaudit.js';
import { domainLines, placementLines, writeReport } from '../../report/render.js';
import { buildReport, type Report } from '../../report/report.js';
import { intIn } from '../options.js';

interface Opts {
  dataset?: string;
  trajectories?: string;
  out?: string;
  near: string;
  worst: string;
  config: string;
  leaderboard?: string;
  leaderboardRows: string;
  bootstrap?: string;
  seed: string;
  labelAudit?: string;
}

/** The default output folder: `<preds>.report` for one file; for several, named for all of them, beside the first. */
function defaultOut(preds: readonly string[]): string {
  if (preds.length === 1) return `${preds[0]}.report`;
  const stem = (p: string) => basename(p).replace(/\.jsonl$/i, '');
  return join(dirname(preds[0]), `${preds.map(stem).join('+')}.report`);
}

/** With a label audit: one line per run checked against its ceilings, and every ceiling beaten (report/ceilings.ts). */
function ceilingLines(r: Report): string[] {
  return r.ceiling_checks.flatMap((c) => {
    const all = c.rows.find((x) => x.scope === 'all');
    const head = all ? `ceiling check ${c.run} (${c.n_clips} clips): all questions ${all.balanced_acc.toFixed(3)} [${all.ci[0].toFixed(3)}, ${all.ci[1].toFixed(3)}], noise ceiling ${all.noise.toFixed(3)}${all.sampling ? `, ${c.frames === null ? 'all' : c.frames}-frame sampling ceiling ${all.sampling.spline?.toFixed(3) ?? '–'}` : ''}; ${c.beaten.length ? `${c.beaten.length} ceiling${c.beaten.length === 1 ? '' : 's'} beaten` : 'no ceiling beaten'}\n` : '';
    return [head, ...c.beaten.map((b) => `${b}\n`)];
  });
}

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('per-domain metrics (nuScenes, CARLA simulation / transferred) and their gaps, placement on the published leaderboard, oracle-vs-estimate cross-check (near-threshold cases vs errors) and trajectory errors, as Markdown + JSON + SVG')
    .argument('<preds...>', 'predictions JSONL (egogeo run, merge or baseline), one run per file (e.g. one run per CARLA domain); reported together')
    .option('--dataset <dir>', "ground truth: a benchmark dataset (arrays/*.npz, KITTI poses), a published root or a KITTI sequence (default: the run record's dataset)")
    .option('--trajectories <dir>', 'estimated trajectories <clip_id>.tum, one predictions file only (default: <preds>.trajectories)')
    .option('--leaderboard <json>', "the published leaderboard (the dataset's leaderboard.json): place each run's row among its rows")
    .option('--leaderboard-rows <n>', "published rows shown either side of each run's row, or 'all'", '3')
    .option('--out <dir>', 'output directory (default: <preds>.report for one file; for several, <a>+<b>….report beside the first, named for all of them)')
    .option('--near <fraction>', 'a disagreement within this relative distance of the threshold is near-threshold', String(NEAR_THRESHOLD))
    .option('--worst <n>', 'clips with the largest ATE to plot', '6')
    .option('--config <yaml>', 'question file', DEFAULT_QUESTIONS_PATH)
    .option('--bootstrap <N>', 'clip-level bootstrap (N draws, e.g. 1000): intervals for each domain\'s balanced accuracy, and for each gap between domains or methods its interval and p-value')
    .option('--seed <S>', "the bootstrap's random.Random seed", String(DEFAULT_SEED))
    .option('--label-audit <json>', "egogeo audit labels --json of the ground truth: disagreements on labels that flip under the ground truth's own noise are 'noise-decided', and each question's noise ceiling stands beside its balanced accuracy")
    .addHelpText(
      'after',
      `
Each file is one run, named by <preds>.manifest.json's model, else egogeo_<domain> from
<preds>.run.json's key.carla_domain, else the file name; its CARLA clips belong to that domain.
Runs of the same clips keep their records apart: CARLA clips per domain; clips of one domain in
several runs (the nuScenes clips of both runs) are reported once when the answers agree, else once
per run. Leaderboard rows are made as the reference's build_leaderboard.py makes them (per source
by clip id: clip_* nuScenes, else CARLA); ranks: 1 = best, ties share a rank.`,
    )
    .action(async (preds: string[], o: Opts) => {
      const out = o.out ?? defaultOut(preds);
      guardOutputs([{ path: out, flag: '--out', kind: 'dir' }], [...preds, o.dataset, o.trajectories, o.leaderboard, o.config, o.labelAudit]);
      const near = Number(o.near);
      if (!(near >= 0) || !Number.isFinite(near)) throw new InputError(`--near must be a non-negative fraction, got '${o.near}'`);
      const worst = Number(o.worst);
      if (!Number.isInteger(worst) || worst < 0) throw new InputError(`--worst must be a non-negative integer, got '${o.worst}'`);
      const context = o.leaderboardRows === 'all' ? Infinity : Number(o.leaderboardRows);
      if (!(context === Infinity || (Number.isInteger(context) && context >= 0))) throw new InputError(`--leaderboard-rows must be a non-negative integer or 'all', got '${o.leaderboardRows}'`);
      const bootstrap = o.bootstrap === undefined ? undefined : { n: intIn('--bootstrap', o.bootstrap, 1, 1_000_000), seed: intIn('--seed', o.seed, 0, Number.MAX_SAFE_INTEGER) };
      const questions = loadQuestions(o.config);
      const leaderboard = o.leaderboard ? { file: o.leaderboard, rows: readLeaderboard(o.leaderboard) } : undefined;
      const labelAudit = o.labelAudit ? readLabelAudit(o.labelAudit) : undefined;
      const inp = loadReportInputs({ preds, dataset: o.dataset, trajectories: o.trajectories });
      const name = inp.runs.map((r) => r.name).join(' + ');
      const r = buildReport({
        name,
        records: inp.combined.records,
        questions,
        clips: inp.clips,
        near,
        worst,
        runs: inp.runs,
        domains: inp.combined.domains,
        leaderboard,
        notes: inp.combined.notes,
        bootstrap,
        labelAudit,
      });
      // Written whole into a staging folder, then renamed into place: a failed write leaves no partial report.
      const files = await writeDirAtomic(out, (stage) => writeReport(r, stage, { leaderboardRows: context }), {
        replaceable: (d) => existsSync(join(d, 'report.json')) || existsSync(join(d, 'report.md')),
        what: 'an egogeo report folder',
      });
      const gap = r.gaps.find((g) => g.metric === 'balanced_acc');
      // What was written goes to stderr; the tables (the result) to stdout, so `egogeo report … > r.txt` keeps them.
      process.stderr.write(
        `egogeo: ${r.runs.length} run${r.runs.length === 1 ? '' : 's'} (${r.runs.map((x) => x.name).join(', ')}), ${r.n_clips} clips${r.runs.length > 1 ? ' (a clip of several runs counted once per domain)' : ''}, ${r.methods.length > 1 ? `balanced accuracy per method ${r.methods.map((m) => `${m.method} ${m.overall.balanced_acc.toFixed(3)}`).join(', ')}` : `balanced accuracy ${r.overall.balanced_acc.toFixed(3)}${r.runs.length > 1 || r.domains.rows.length > 1 ? ' pooled over every domain' : ''}`}${r.runs.length > 1 || r.domains.rows.length > 1 ? ' (per domain: the table below)' : ''}${gap ? `, largest gap ${gap.gap.toFixed(3)} (${gap.best} vs ${gap.worst})` : ''}; ` +
          `${r.trajectory_errors.n_clips} clips with trajectory errors → ${out}/ (${files.join(', ')})\n`,
      );
      process.stdout.write(`${domainLines(r).join('\n')}\n${r.leaderboard ? `${placementLines(r.leaderboard, context).join('\n')}\n` : ''}${ceilingLines(r).join('')}`);
    });
}
