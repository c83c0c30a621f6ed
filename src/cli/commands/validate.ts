/**
 * `egogeo validate --dataset DIR [--nuscenes-root DIR]`: a maintainer's checks of a dataset before
 * it is published (src/datasets/validate.ts): one line per finding with the file and record, a
 * summary with counts, exit 1 when any check fails.
 */
import type { Command } from 'commander';
import { InputError } from '../../core/errors.js';
import { CHECKS, type Finding, validateDataset } from '../../datasets/validate.js';
import { writeFileAtomic } from '../../io/atomic.js';
import { guardOutputs } from '../../io/safety.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../../oracle/questions.js';
import { parseCarlaDomains, parseLimit } from '../options.js';

interface Opts {
  dataset?: string;
  nuscenesRoot?: string;
  carlaDomain?: string;
  limit?: string;
  config: string;
  json?: string;
  progress?: boolean;
}

export const findingLine = (f: Finding): string => `${f.where}: [${f.check}] ${f.message}`;

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('check a dataset before publishing it: records, ids, QA answers against the oracle over the arrays, frames, timestamps, arrays, features, sign conventions')
    .argument('[DIR]', 'the dataset folder (same as --dataset)')
    .option('--dataset <dir>', 'EgoDyn-Bench as published (selected_clips.json, nuscenes_clips/, carla_clips/, carla_videos_*/) or the benchmark layout (clips_index.jsonl, qa.jsonl, arrays/)')
    .option('--nuscenes-root <dir>', "published layout: the nuScenes data root, to check the nuScenes clips' frames")
    .option('--carla-domain <domains>', "published layout: the CARLA videos checked, 'simulation', 'transferred' or both comma-separated (default: every carla_videos_*/ present)")
    .option('--limit <n>', 'clip-by-clip checks on the first n clips only (indexes and QA are read whole)')
    .option('--config <yaml>', 'question file the answers are checked against', DEFAULT_QUESTIONS_PATH)
    .option('--json <path>', 'also write every finding and the counts as JSON (atomically)')
    .option('--no-progress', 'no progress bar (default: shown on a terminal)')
    .addHelpText(
      'after',
      `
Checks: ${CHECKS.join(', ')} (src/datasets/validate.ts describes each). A QA answer is compared with
the oracle run over the clip's own arrays; arrays that fail a structural or sign check are not used
for that, so one fault gives one line. Findings go to stdout as FILE[:LINE]: [check] message; the
summary to stderr. Exit 0 when nothing is found, 1 otherwise.`,
    )
    .action(async (arg: string | undefined, o: Opts) => {
      const dir = o.dataset ?? arg;
      if (!dir) throw new InputError('give the dataset folder: egogeo validate --dataset DIR');
      if (o.dataset && arg && o.dataset !== arg) throw new InputError(`two dataset folders given: ${arg} and --dataset ${o.dataset}`);
      guardOutputs([o.json !== undefined ? { path: o.json, flag: '--json' } : undefined], [dir, o.config, o.nuscenesRoot]);
      const questions = loadQuestions(o.config);
      const bar = o.progress !== false && process.stderr.isTTY
        ? new (await import('cli-progress')).SingleBar({ format: 'validate {bar} {value}/{total} clips | ETA {eta_formatted}', hideCursor: true, stream: process.stderr })
        : null;
      let started = false;
      const r = validateDataset(dir, {
        questions,
        nuscenesRoot: o.nuscenesRoot,
        carlaDomains: o.carlaDomain === undefined ? undefined : parseCarlaDomains(o.carlaDomain),
        limit: parseLimit(o.limit),
        onFinding: (f) => {
          bar?.stop();
          process.stdout.write(`${findingLine(f)}\n`);
          if (bar && started) bar.start(bar.getTotal(), bar.getProgress() * bar.getTotal());
        },
        onClip: (done, total) => {
          if (!bar) return;
          if (!started) {
            bar.start(total, 0);
            started = true;
          }
          bar.update(done);
        },
      });
      bar?.stop();
      if (o.json) writeFileAtomic(o.json, `${JSON.stringify(r, null, 2)}\n`);
      const n = r.findings.length;
      const what = [`${r.clips} clips`, `${r.qa_items} QA items`, ...(r.frames ? [`${r.frames} frames`] : []), ...(r.videos ? [`${r.videos} videos`] : [])].join(', ');
      const byCheck = CHECKS.filter((c) => r.counts[c] > 0).map((c) => `${c} ${r.counts[c]}`);
      process.stderr.write(`egogeo: validated ${dir} (${r.layout} layout): ${what}; ${n === 0 ? 'no findings' : `${n} finding${n === 1 ? '' : 's'} (${byCheck.join(', ')})`}\n`);
      for (const note of r.notes) process.stderr.write(`egogeo: note: ${note}\n`);
      if (n > 0) process.exitCode = 1;
    });
}
