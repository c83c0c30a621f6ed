/**
 * `egogeo baseline --kitti SEQ_DIR`: the geometric baseline over a KITTI sequence's benchmark
 * windows — native VO → planar trajectory → the oracle → answers, as benchmark prediction JSONL
 * (with the ground-truth oracle label) that `egogeo grade` scores.
 */
import type { Command } from 'commander';
import { readDataset } from '../../datasets/benchmark.js';
import { readKittiSequence } from '../../datasets/kitti.js';
import { InputError } from '../../core/errors.js';
import { loadQuestions, DEFAULT_QUESTIONS_PATH } from '../../oracle/index.js';
import { answerClips } from '../../run/clips.js';
import { engineFromFlags } from '../../vo/config.js';
import { join } from 'node:path';
import { writeFileAtomic } from '../../io/atomic.js';
import { guardOutputs } from '../../io/safety.js';

interface Opts {
  kitti: string;
  output?: string;
  frames: string;
  questions: string;
  config?: string;
  scale: string;
}

export function registerBaseline(program: Command): void {
  program
    .command('baseline')
    .description('answer the benchmark questions from visual odometry over KITTI windows (31 frames every 5)')
    .requiredOption('--kitti <dir>', 'KITTI odometry sequence directory (image_0/, times.txt, calib.txt, poses.txt)')
    .option('-o, --output <path>', 'write prediction JSONL here (atomically) instead of stdout')
    .option('--frames <n>', "frames per clip the estimator sees: 'all' or a count spread evenly (published baselines: 10)", 'all')
    .option('--questions <set>', "'subset' (the 6 geometric questions) or 'all' (14)", 'all')
    .option('--config <yaml>', 'question file', DEFAULT_QUESTIONS_PATH)
    .option('--scale <mode>', "metric scale: 'road' (camera height), 'gt' (ground-truth speed, diagnosis) or 'none'", 'road')
    .action(async (o: Opts) => {
      guardOutputs([o.output !== undefined ? { path: o.output, flag: '-o' } : undefined], [o.config, ...['poses.txt', 'times.txt', 'calib.txt'].map((f) => join(o.kitti, f))]);
      const questions = loadQuestions(o.config);
      if (o.questions !== 'subset' && o.questions !== 'all') throw new InputError(`--questions must be 'subset' or 'all', got '${o.questions}'`);
      const engine = engineFromFlags({ frames: o.frames, scale: o.scale });
      readKittiSequence(o.kitti); // a KITTI sequence, or one line saying what is missing
      const { clips } = readDataset(o.kitti);
      if (engine.scale === 'gt' && clips.some((c) => !c.groundTruth)) throw new InputError(`${o.kitti}: --scale gt needs poses.txt`);
      // The same per-clip path as `egogeo run` (src/run/clips.ts), records kept in memory.
      const r = await answerClips(clips, {
        questions: o.questions,
        engine,
        config: o.config ?? DEFAULT_QUESTIONS_PATH,
        questionSet: questions,
        label: 'baseline',
      });
      if (r.failed.length > 0) throw new InputError(`clip ${r.failed[0].clip_id}: ${r.failed[0].reason}`);
      const text = r.records.map((x) => JSON.stringify(x)).join('\n') + '\n';
      if (o.output) writeFileAtomic(o.output, text);
      else process.stdout.write(text);
    });
}
