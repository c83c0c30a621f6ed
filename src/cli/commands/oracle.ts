/** `egogeo oracle FILE`: trajectories → the benchmark oracle's features and 14 labels, one JSONL record per trajectory. */
import type { Command } from 'commander';
import { writeFileAtomic } from '../../io/atomic.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../../oracle/index.js';
import { addDeprecated, parseDuration, parsePositive, type Renamed, takeRenamed } from '../options.js';
import { addInputOptions, guardInputOutputs, INPUT_ARG_HELP, INPUT_HELP, type InputOpts, inputPath, labelInput, oracleRecord } from '../inputs.js';

interface OracleOpts extends InputOpts {
  output?: string;
  thresholdScale?: string;
  /** Deprecated name of --threshold-scale. */
  scale?: string;
  arrays?: boolean;
}

/** oracle's threshold multiplier, once `--scale` (issue 53: one meaning per flag name). */
const THRESHOLD_SCALE: Renamed = { old: '--scale <alpha>', now: '--threshold-scale' };

export function registerOracle(program: Command): void {
  const cmd = program
    .command('oracle')
    .description("label trajectories with the benchmark's physics oracle: JSONL {id, features, labels} per trajectory")
    .argument('[FILE]', `${INPUT_ARG_HELP}: its clips' ground truth`);
  addInputOptions(cmd)
    .option('--threshold-scale <alpha>', 'multiply every classification threshold by alpha (the reference\'s perturb_params)')
    .option('--arrays', 'include the 10 Hz dynamics arrays in each record')
    .option('-o, --output <path>', 'write JSONL here (atomically) instead of stdout')
    .addHelpText('after', INPUT_HELP);
  addDeprecated(cmd, THRESHOLD_SCALE) // `--scale` is run's metric-scale mode
    .action((arg: string | undefined, o: OracleOpts) => {
      const file = inputPath(arg, o);
      guardInputOutputs(file, o, [o.output !== undefined ? { path: o.output, flag: '-o' } : undefined]);
      const scale = parsePositive('--threshold-scale', takeRenamed(o as unknown as Record<string, unknown>, THRESHOLD_SCALE), 1);
      const duration = parseDuration(o.duration);
      const questions = loadQuestions(o.config ?? DEFAULT_QUESTIONS_PATH, scale);
      const { ids, results } = labelInput(file, o, questions, duration);
      const lines = results.map((r, i) => JSON.stringify(oracleRecord(ids[i], r, !!o.arrays)));
      const text = `${lines.join('\n')}\n`;
      if (o.output) writeFileAtomic(o.output, text);
      else process.stdout.write(text);
    });
}
