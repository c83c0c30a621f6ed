/**
 * `egogeo baseline --kitti SEQ_DIR`: `egogeo run --dataset SEQ_DIR` under the name the KITTI
 * experiments have always used — the same worker pool, progress, files (predictions, errors,
 * manifest, run record, trajectories with their ground truth) and speed. Without `-o` the
 * predictions go to stdout; the run's files then live in a temporary folder, removed when the run
 * completes with every clip answered. When a clip failed or the run was interrupted or stopped by
 * an error, the folder stays (the errors file and the resumable state are there) and stderr names
 * it with the `-o` that resumes it.
 */
import type { Command } from 'commander';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../core/errors.js';
import { readKittiSequence } from '../../datasets/kitti.js';
import { guardOutputs } from '../../io/safety.js';
import { DEFAULT_QUESTIONS_PATH } from '../../oracle/index.js';
import { defaultWorkers } from '../../pool/index.js';
import { DEFAULT_QUEUE_NAME } from '../../queue/connection.js';
import { addEngineOptions, DEVICE_HELP, engineFromFlags, PROTOCOL_HELP } from '../options.js';
import { runCommand } from '../running.js';

interface Opts {
  kitti: string;
  method: string;
  protocol?: string;
  output?: string;
  frames: string;
  questions: string;
  config: string;
  scale: string;
  photometric: string;
  resolution: string;
  device?: string;
  workers?: string;
  progress?: boolean;
}

export function registerBaseline(program: Command): void {
  const cmd = program
    .command('baseline')
    .description('egogeo run over a KITTI sequence (its 31-frame benchmark windows every 5 frames); predictions to stdout without -o')
    .requiredOption('--kitti <dir>', 'KITTI odometry sequence directory (image_0/, times.txt, calib.txt, poses.txt)')
    .option('-o, --output <path>', 'predictions JSONL and the run\'s side files, as egogeo run -o writes them (default: predictions to stdout)');
  // The engine's flags and defaults, as egogeo run's (cli/options.ts ENGINE_OPTIONS).
  addEngineOptions(cmd)
    .option('--protocol <p>', PROTOCOL_HELP)
    .option('--questions <set>', "'subset' (the 6 geometric questions) or 'all' (14)", 'all')
    .option('--config <yaml>', 'question file', DEFAULT_QUESTIONS_PATH)
    .option('--device <mode>', DEVICE_HELP)
    .option('--workers <n>', `worker threads (default: the machine's cores, here ${defaultWorkers()})`)
    .option('--no-progress', 'no progress bar (default: shown on a terminal)')
    .action(async (o: Opts) => {
      // Bad flags and an output over an input are one line before anything is read.
      guardOutputs([o.output !== undefined ? { path: o.output, flag: '-o' } : undefined], [o.config, ...['poses.txt', 'times.txt', 'calib.txt'].map((f) => join(o.kitti, f))]);
      if (o.questions !== 'subset' && o.questions !== 'all') throw new InputError(`--questions must be 'subset' or 'all', got '${o.questions}'`);
      engineFromFlags({ method: o.method, frames: o.frames, scale: o.scale, photometric: o.photometric, resolution: o.resolution });
      readKittiSequence(o.kitti); // a KITTI sequence, or one line saying what is missing
      const tmp = o.output === undefined ? mkdtempSync(join(tmpdir(), 'egogeo-baseline-')) : null;
      const output = o.output ?? join(tmp!, 'predictions.jsonl');
      // Without -o: the temporary folder is removed only when there is nothing in it to go back to.
      let keep = false;
      const kept = (why: string) => {
        keep = true;
        process.stderr.write(`egogeo: ${why}; the run's files are kept in ${tmp} (rerun with -o ${output} to resume, or remove the folder)\n`);
      };
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
          photometric: o.photometric,
          resolution: o.resolution,
          workers: o.workers,
          device: o.device,
          progress: o.progress,
          queueName: DEFAULT_QUEUE_NAME,
          attempts: '3',
          resumeHint: tmp ? `rerun with -o ${output} to resume (the run's files are kept in ${tmp})` : undefined,
        });
        if (tmp && process.exitCode === undefined) process.stdout.write(readFileSync(output, 'utf8'));
        else if (tmp && process.exitCode === 1) kept('predictions not printed: a clip failed');
        else if (tmp) keep = true; // interrupted: runCommand's line names the folder
      } catch (e) {
        if (tmp && existsSync(output)) kept('the run stopped on the error below');
        throw e;
      } finally {
        if (tmp && !keep) rmSync(tmp, { recursive: true, force: true });
      }
    });
}
