/**
 * `egogeo baseline --kitti SEQ_DIR`: the geometric baseline over a KITTI sequence's benchmark
 * windows — native VO → planar trajectory → the oracle → answers, as benchmark prediction JSONL
 * (with the ground-truth oracle label) that `egogeo grade` scores.
 */
import type { Command } from 'commander';
import { SingleBar } from 'cli-progress';
import { evenFrames, GEOMETRIC_SUBSET, predictClip, selectFrames, type Prediction } from '../../baseline/baseline.js';
import { kittiClips, readKittiSequence } from '../../datasets/kitti.js';
import { InputError } from '../../core/trajectory.js';
import { loadQuestions, DEFAULT_QUESTIONS_PATH } from '../../oracle/index.js';
import { estimateClipAsync } from '../../vo/estimate.js';
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
      if (!['road', 'gt', 'none'].includes(o.scale)) throw new InputError(`--scale must be road, gt or none, got '${o.scale}'`);
      const count = o.frames === 'all' ? Infinity : Number(o.frames);
      if (!(count >= 2) || (o.frames !== 'all' && !Number.isInteger(count))) {
        throw new InputError(`--frames must be 'all' or an integer >= 2, got '${o.frames}'`);
      }
      const answer = o.questions === 'subset' ? new Set<string>(GEOMETRIC_SUBSET) : null;
      const seq = readKittiSequence(o.kitti);
      const clips = kittiClips(seq);
      if (clips.length === 0) throw new InputError(`${o.kitti}: fewer than 31 frames, no benchmark window`);
      if (o.scale === 'gt' && !seq.groundTruth) throw new InputError(`${o.kitti}: --scale gt needs poses.txt`);

      const bar = process.stderr.isTTY ? new SingleBar({ format: 'baseline {bar} {value}/{total} clips | {rate} clips/s | ETA {eta}s', hideCursor: true }) : null;
      bar?.start(clips.length, 0, { rate: '0.0' });
      const t0 = Date.now();
      const records: Prediction[][] = new Array(clips.length);
      let done = 0;
      // Two clips in flight keep both cores busy; each runs whole inside C++ on the libuv pool.
      const run = async (i: number) => {
        const clip = selectFrames(clips[i], evenFrames(clips[i].frames.length, count));
        const est = await estimateClipAsync(clip, {
          scale: o.scale as 'road' | 'gt' | 'none',
          gtSpeeds: o.scale === 'gt' ? gtSpeeds(clip) : undefined,
        }).catch((e: Error) => {
          throw new InputError(`clip ${clip.id}: ${e.message}`);
        });
        records[i] = predictClip(clip, est.trajectory, questions, answer, i * questions.questions.length);
        done++;
        bar?.update(done, { rate: (done / ((Date.now() - t0) / 1000)).toFixed(1) });
      };
      let next = 0;
      await Promise.all(Array.from({ length: 2 }, async () => {
        while (next < clips.length) await run(next++);
      }));
      bar?.stop();
      const text = records.flat().map((r) => JSON.stringify(r)).join('\n') + '\n';
      if (o.output) writeFileAtomic(o.output, text);
      else process.stdout.write(text);
    });
}

/** Ground-truth speed per frame pair, for `--scale gt`. */
function gtSpeeds(clip: { timestamps: Float64Array; groundTruth?: { t: Float64Array; x: Float64Array; y: Float64Array } }): number[] {
  const g = clip.groundTruth!;
  const at = (t: number) => {
    let i = 0;
    while (i < g.t.length - 2 && g.t[i + 1] < t) i++;
    const f = (t - g.t[i]) / (g.t[i + 1] - g.t[i]);
    return [g.x[i] + f * (g.x[i + 1] - g.x[i]), g.y[i] + f * (g.y[i + 1] - g.y[i])];
  };
  const ts = clip.timestamps;
  return Array.from({ length: ts.length - 1 }, (_, k) => {
    const a = at(ts[k]), b = at(ts[k + 1]);
    return Math.hypot(b[0] - a[0], b[1] - a[1]) / (ts[k + 1] - ts[k]);
  });
}
