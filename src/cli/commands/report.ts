/**
 * `egogeo report PREDS.jsonl`: per-domain comparison, the oracle-vs-estimate cross-check with
 * near-threshold analysis, and trajectory errors per source, as Markdown + JSON + SVG plots
 * (src/report/).
 */
import type { Command } from 'commander';
import { InputError } from '../../core/trajectory.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../../oracle/index.js';
import { loadReportInputs } from '../../report/load.js';
import { writeReport } from '../../report/render.js';
import { buildReport } from '../../report/report.js';

interface Opts {
  dataset?: string;
  trajectories?: string;
  out?: string;
  near: string;
  worst: string;
  config: string;
}

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('per-source metrics, oracle-vs-estimate cross-check (near-threshold cases vs errors) and trajectory errors, as Markdown + JSON + SVG')
    .argument('<preds...>', 'predictions JSONL (egogeo run, merge or baseline); several files (e.g. one run per domain) are reported together')
    .option('--dataset <dir>', "ground truth: a benchmark dataset (arrays/*.npz, KITTI poses) or a KITTI sequence (default: the run record's dataset)")
    .option('--trajectories <dir>', 'estimated trajectories <clip_id>.tum, one predictions file only (default: <preds>.trajectories)')
    .option('--out <dir>', 'output directory (default: <first preds>.report)')
    .option('--near <fraction>', 'a disagreement within this relative distance of the threshold is near-threshold', '0.15')
    .option('--worst <n>', 'clips with the largest ATE to plot', '6')
    .option('--config <yaml>', 'question file', DEFAULT_QUESTIONS_PATH)
    .action(async (preds: string[], o: Opts) => {
      const near = Number(o.near);
      if (!(near >= 0) || !Number.isFinite(near)) throw new InputError(`--near must be a non-negative fraction, got '${o.near}'`);
      const worst = Number(o.worst);
      if (!Number.isInteger(worst) || worst < 0) throw new InputError(`--worst must be a non-negative integer, got '${o.worst}'`);
      const questions = loadQuestions(o.config);
      const inp = loadReportInputs({ preds, dataset: o.dataset, trajectories: o.trajectories });
      const name = preds.map((p) => p.split('/').pop()!).join(' + ');
      const r = buildReport({ name, records: inp.records, questions, clips: inp.clips, near, worst });
      const out = o.out ?? `${preds[0]}.report`;
      const files = await writeReport(r, out);
      const gap = r.gaps.find((g) => g.metric === 'balanced_acc');
      process.stderr.write(
        `egogeo: ${r.n_clips} clips, balanced accuracy ${r.overall.balanced_acc.toFixed(3)}${gap ? `, largest gap ${gap.gap.toFixed(3)} (${gap.best} vs ${gap.worst})` : ''}; ` +
          `${r.trajectory_errors.n_clips} clips with trajectory errors → ${out}/ (${files.join(', ')})\n`,
      );
    });
}
