/**
 * `egogeo baseline --kitti SEQ_DIR`: `egogeo run --dataset SEQ_DIR` under the name the KITTI
 * experiments have always used — the same worker pool, progress, files (predictions, errors,
 * manifest, run record, trajectories with their ground truth) and speed. Without `-o` the
 * predictions go to stdout (the run's files then live in a temporary folder, removed at the end).
 */
import type { Command } from 'commander';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../core/errors.js';
import { readKittiSequence } from '../../datasets/kitti.js';
import { guardOutputs } from '../../io/safety.js';
import { DEFAULT_QUESTIONS_PATH } from '../../oracle/index.js';
import { defaultWorkers } from '../../pool/index.js';
import { DEFAULT_QUEUE_NAME } from '../../queue/connection.js';
import { engineFromFlags } from '../../vo/config.js';
import { METHOD_HELP, PROTOCOL_HELP, RESOLUTION_HELP, runCommand } from './run.js';

interface Opts {
  kitti: string;
  method: string;
  protocol?: string;
  output?: string;
  frames: string;
  questions: string;
  config: string;
  scale: string;
  resolution?: string;
  workers?: string;
  progress?: boolean;
}

export function registerBaseline(program: Command): void {
  program
    .command('baseline')
    .description('egogeo run over a KITTI sequence (its 31-frame benchmark windows every 5 frames); predictions to stdout without -o')
    .requiredOption('--kitti <dir>', 'KITTI odometry sequence directory (image_0/, times.txt, calib.txt, poses.txt)')
    .option('-o, --output <path>', 'predictions JSONL and the run\'s side files, as egogeo run -o writes them (default: predictions to stdout)')
    .option('--method <m>', METHOD_HELP, 'egogeo')
    .option('--protocol <p>', PROTOCOL_HELP)
    .option('--frames <n>', "frames per clip the estimator sees: 'all' or a count spread evenly (published baselines: 10)", 'all')
    .option('--questions <set>', "'subset' (the 6 geometric questions) or 'all' (14)", 'all')
    .option('--config <yaml>', 'question file', DEFAULT_QUESTIONS_PATH)
    .option('--scale <mode>', "metric scale: 'road' (camera height), 'gt' (ground-truth speed, diagnosis) or 'none'", 'road')
    .option('--resolution <r>', RESOLUTION_HELP)
    .option('--workers <n>', `worker threads (default: the machine's cores, here ${defaultWorkers()})`)
    .option('--no-progress', 'no progress bar (default: shown on a terminal)')
    .action(async (o: Opts) => {
      // Bad flags and an output over an input are one line before anything is read.
      guardOutputs([o.output !== undefined ? { path: o.output, flag: '-o' } : undefined], [o.config, ...['poses.txt', 'times.txt', 'calib.txt'].map((f) => join(o.kitti, f))]);
      if (o.questions !== 'subset' && o.questions !== 'all') throw new InputError(`--questions must be 'subset' or 'all', got '${o.questions}'`);
      engineFromFlags({ method: o.method, frames: o.frames, scale: o.scale, resolution: o.resolution });
      readKittiSequence(o.kitti); // a KITTI sequence, or one line saying what is missing
      const tmp = o.output === undefined ? mkdtempSync(join(tmpdir(), 'egogeo-baseline-')) : null;
      const output = o.output ?? join(tmp!, 'predictions.jsonl');
      try {
        await runCommand({
          dataset: o.kitti,
          method: o.method,
          protocol: o.protocol,
          output,
          questions: o.questions,
          frames: o.frames,
          config: o.config,
          scale: o.scale,
          resolution: o.resolution,
          workers: o.workers,
          device: 'auto',
          progress: o.progress,
          queueName: DEFAULT_QUEUE_NAME,
          attempts: '3',
        });
        if (tmp && process.exitCode === undefined) process.stdout.write(readFileSync(output, 'utf8'));
      } finally {
        if (tmp) rmSync(tmp, { recursive: true, force: true });
      }
    });
}
