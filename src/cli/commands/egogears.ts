/**
 * `egogeo egogears score` — EgoGears' published scoring (exact set, overlap, well-formed rate,
 * failed/missing counted as wrong, groups overall / multi_video_531 / per unit, chance; Jaccard
 * labelled). `egogeo egogears options` — the option order a model sees, one JSON line per
 * question. Thin: src/egogears/ computes.
 */
import type { Command } from 'commander';
import { InputError } from '../../core/errors.js';
import { loadPredictions, loadQuestionFile } from '../../egogears/load.js';
import { DATASETS, formatScore, questionId, type ResultRow, resultRow, scoreGears, shuffledView } from '../../egogears/score.js';
import { writeFileAtomic } from '../../io/atomic.js';
import { guardOutputs } from '../../io/safety.js';
import { parseChoice } from '../options.js';

const BY = ['unit', 'question_type', 'category'] as const;

export function registerEgogears(program: Command): void {
  const eg = program.command('egogears').description("EgoGears (RunningBench): the published scoring and option shuffle");
  eg.command('score')
    .description('exact set, overlap (|P∩G|/|G|), well-formed rate, chance; failed and missing questions count as wrong')
    .requiredOption('--questions <file>', 'question file (JSONL): the single-video 567 or the mixed 1,487 set')
    .requiredOption('--predictions <file>', 'JSONL keyed by question_id: published result rows, or {pred: original letters} / {shown: displayed letters} / {raw: model text}')
    .option('--by <key>', 'extra groups: unit (published), question_type or category', 'unit')
    .option('--dataset <name>', 'single_698 | single_567_human | mixed_1487 (default: mixed_1487 when questions carry review_id)')
    .option('--json <out>', 'also write every group as JSON (atomically)')
    .action((o: { questions: string; predictions: string; by: string; dataset?: string; json?: string }) => {
      if (!(BY as readonly string[]).includes(o.by)) throw new InputError(`--by: expected one of ${BY.join(', ')}, got '${o.by}'`);
      guardOutputs([o.json !== undefined ? { path: o.json, flag: '--json' } : undefined], [o.questions, o.predictions]);
      const qf = loadQuestionFile(o.questions, parseChoice('--dataset', DATASETS, o.dataset));
      const preds = loadPredictions(o.predictions);
      const results = new Map<string, ResultRow>();
      for (const q of qf.questions) {
        const id = questionId(q, qf.dataset);
        const rec = preds.get(id);
        if (rec !== undefined) results.set(id, resultRow(q, id, rec));
      }
      const s = scoreGears(qf.questions, results, qf.dataset, o.by as (typeof BY)[number]);
      const unknown = [...preds.keys()].filter((k) => !results.has(k)).length;
      if (o.json) writeFileAtomic(o.json, `${JSON.stringify({ ...s, predictions_not_in_questions: unknown }, null, 2)}\n`);
      process.stdout.write(`${formatScore(s)}\n`);
      if (unknown) process.stderr.write(`egogeo: note: ${unknown} prediction(s) in ${o.predictions} name no question of ${o.questions} (ignored, as the published code ignores them)\n`);
    });
  eg.command('options')
    .description('the option order a model sees: {"id", "shown": {shown letter: original letter}} per question (random.Random(question_id).shuffle)')
    .option('--questions <file>', 'question file (JSONL)')
    .option('--id <qid>', 'only this question (or, without --questions, any id with --n-options)')
    .option('--n-options <n>', 'without --questions: shuffle this many letters A, B, … for --id')
    .option('--dataset <name>', 'single_698 | single_567_human | mixed_1487 (default: from the file)')
    .action((o: { questions?: string; id?: string; nOptions?: string; dataset?: string }) => {
      const line = (id: string, options: Record<string, string>) => `${JSON.stringify({ id, shown: shuffledView(options, id).back })}\n`;
      if (!o.questions) {
        if (o.id === undefined || o.nOptions === undefined) throw new InputError('egogears options: give --questions FILE, or --id QID with --n-options N');
        const n = Number(o.nOptions);
        if (!Number.isInteger(n) || n < 1 || n > 26) throw new InputError(`--n-options: expected an integer 1..26, got '${o.nOptions}'`);
        const opts = Object.fromEntries(Array.from({ length: n }, (_, i) => [String.fromCharCode(65 + i), '']));
        process.stdout.write(line(o.id, opts));
        return;
      }
      const qf = loadQuestionFile(o.questions, parseChoice('--dataset', DATASETS, o.dataset));
      let qs = qf.questions;
      if (o.id !== undefined) {
        qs = qs.filter((q) => questionId(q, qf.dataset) === o.id);
        if (qs.length === 0) throw new InputError(`${o.questions}: no question with id ${o.id}`);
      }
      process.stdout.write(qs.map((q) => line(questionId(q, qf.dataset), q.options as Record<string, string>)).join(''));
    });
}
