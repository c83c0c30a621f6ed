/**
 * `egogeo demo`: the whole pipeline on a fresh machine, no data needed — renders a small balanced
 * set of synthetic clips (both presets), runs the geometric baseline on them (VO with the
 * renderer's intrinsics and camera height → oracle → answers), grades the answers with the
 * reference-exact grader and prints the per-question table and a per-source summary.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { GEOMETRIC_SUBSET } from '../../baseline/baseline.js';
import { evaluate, type GradeMetrics } from '../../grade/index.js';
import { DEFAULT_QUESTIONS_PATH, type QuestionSet } from '../../oracle/index.js';
import { defaultWorkers } from '../../pool/index.js';
import { InputError } from '../../core/errors.js';
import { readDataset } from '../../datasets/benchmark.js';
import { answerClips } from '../../run/clips.js';
import { synthesize } from '../../synth/index.js';
import { writeFileAtomic } from '../../io/atomic.js';
import { guardOutputs } from '../../io/safety.js';
import { addEngineOptions, engineFromFlags, parseWorkers } from '../options.js';
import { formatDistribution } from '../format.js';
import { intIn, parsePreset } from '../options.js';

interface Opts {
  clips: string;
  out?: string;
  seed: string;
  preset: string;
  workers?: string;
  method: string;
  frames: string;
  scale: string;
  photometric: string;
  resolution: string;
  json?: string;
  force?: boolean;
  progress?: boolean;
}

const f3 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '  -  ' : x.toFixed(3));

/** The per-question table (question-file order) and the per-source summary. */
export function formatReport(all: GradeMetrics, subset: GradeMetrics, questions: QuestionSet): string {
  const sub = new Set<string>(GEOMETRIC_SUBSET);
  const lines = [`${'question'.padEnd(28)} ${'category'.padEnd(16)} subset     n  accuracy  bal.acc`];
  for (const q of questions.questions) {
    const m = all.per_question[q.id];
    if (!m) continue;
    lines.push(`${q.id.padEnd(28)} ${q.category.padEnd(16)} ${sub.has(q.id) ? '  *   ' : '      '} ${String(m.n).padStart(5)}  ${f3(m.accuracy).padStart(8)}  ${f3(m.balanced_acc).padStart(7)}`);
  }
  lines.push('');
  lines.push(`pooled, 6-question subset    n ${String(subset.global.n).padStart(5)}  accuracy ${f3(subset.global.accuracy)}  balanced accuracy ${f3(subset.global.balanced_acc)}`);
  lines.push(`pooled, all 14 questions     n ${String(all.global.n).padStart(5)}  accuracy ${f3(all.global.accuracy)}  balanced accuracy ${f3(all.global.balanced_acc)}`);
  lines.push('');
  lines.push(`${'source'.padEnd(28)}     n  accuracy  bal.acc  subset bal.acc`);
  for (const [name, m] of Object.entries(all.per_source)) {
    lines.push(`${name.padEnd(28)} ${String(m.n).padStart(5)}  ${f3(m.accuracy).padStart(8)}  ${f3(m.balanced_acc).padStart(7)}  ${f3(subset.per_source[name]?.balanced_acc).padStart(14)}`);
  }
  return lines.join('\n');
}

export function registerDemo(program: Command): void {
  const cmd = program
    .command('demo')
    .description('render a small balanced synthetic set, run the geometric baseline on it and grade it (no data needed)')
    .option('--clips <n>', 'clips to render', '24')
    .option('--out <dir>', 'keep the rendered dataset here (default: a temporary folder, removed afterwards)')
    .option('--seed <s>', 'seed', '1')
    .option('--preset <name>', 'carla, nuscenes or mixed (alternating: two sources in the summary)', 'mixed')
    .option('--workers <n>', `render workers and clips in flight for VO (default ${defaultWorkers()})`);
  // The engine's flags and defaults, as egogeo run's (cli/options.ts ENGINE_OPTIONS).
  addEngineOptions(cmd)
    .option('--json <path>', 'also write the grader metrics (all questions and subset) as JSON')
    .option('--force', 'replace a non-empty --out folder')
    .option('--no-progress', 'no progress bar')
    .action(async (o: Opts) => {
      const clips = intIn('--clips', o.clips, 1, 100_000);
      const seed = intIn('--seed', o.seed, 0, 2 ** 31 - 1);
      const preset = parsePreset(o.preset, true);
      guardOutputs([o.out !== undefined ? { path: o.out, flag: '--out', kind: 'dir' } : undefined, o.json !== undefined ? { path: o.json, flag: '--json' } : undefined], []);
      const workers = o.workers === undefined ? defaultWorkers() : parseWorkers(o.workers);
      const engine = engineFromFlags({ method: o.method, frames: o.frames, scale: o.scale, photometric: o.photometric, resolution: o.resolution });
      const tmp = o.out ? undefined : mkdtempSync(join(tmpdir(), 'egogeo-demo-'));
      const dir = o.out ?? join(tmp!, 'data');
      try {
        const t0 = Date.now();
        process.stderr.write(`egogeo demo: rendering ${clips} clips (${preset}) into ${dir}\n`);
        const s = await synthesize({
          out: dir, clips, seed, preset, workers, force: !!o.force, questionsPath: DEFAULT_QUESTIONS_PATH,
          progress: o.progress === false ? false : undefined,
        });
        process.stderr.write(`rendered ${s.frames} frames in ${s.seconds.toFixed(1)} s (${(s.frames / s.seconds).toFixed(1)} frames/s); running visual odometry\n`);
        // The rendered set is a dataset like any other: read it, answer it on the run's pool.
        const { clips: dataset } = readDataset(s.dir);
        const presetOf = new Map(s.clips.map((c) => [c.id, c.preset]));
        for (const c of dataset) c.source = `synthetic-${presetOf.get(c.id)}`;
        const run = await answerClips(dataset, {
          questions: 'all', engine, config: DEFAULT_QUESTIONS_PATH, questionSet: s.questions, workers, label: 'demo',
          progress: o.progress === false ? false : undefined,
        });
        if (run.failed.length > 0) throw new InputError(`clip ${run.failed[0].clip_id}: ${run.failed[0].reason}`);
        const all = evaluate(run.records, s.questions);
        const sub = new Set<string>(GEOMETRIC_SUBSET);
        const subset = evaluate(run.records.filter((p) => sub.has(p.question_id)), s.questions);
        process.stdout.write(`answer distribution of the rendered set:\n${formatDistribution(s)}\n\n`);
        process.stdout.write(`${formatReport(all, subset, s.questions)}\n\n`);
        process.stdout.write(
          `timing: render ${s.seconds.toFixed(1)} s, visual odometry ${run.seconds.toFixed(1)} s, total ${((Date.now() - t0) / 1000).toFixed(1)} s ` +
            `(${workers} worker${workers === 1 ? '' : 's'})\n`,
        );
        if (o.json) writeFileAtomic(o.json, `${JSON.stringify({ all, subset }, null, 2)}\n`);
      } finally {
        if (tmp) rmSync(tmp, { recursive: true, force: true });
      }
    });
}
