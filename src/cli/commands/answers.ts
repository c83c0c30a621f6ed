/**
 * `egogeo answers --dataset DIR --results RESULTS.jsonl -o preds.jsonl`: a VLM's batch results back
 * into the benchmark's prediction records (src/prompts/answers.ts), graded by the published grader's
 * parse for coverage; the pipeline's last step after `egogeo prompts` and any VLM runner.
 */
import type { Command } from 'commander';
import { InputError } from '../../core/errors.js';
import { readDataset } from '../../datasets/benchmark.js';
import { parseCarlaDomain } from '../options.js';
import { readJsonlRecords } from '../../datasets/records.js';
import { evaluate } from '../../grade/index.js';
import { writeFileAtomic } from '../../io/atomic.js';
import { guardOutputs } from '../../io/safety.js';
import { loadQuestions } from '../../oracle/index.js';
import { answersFromResults } from '../../prompts/answers.js';

interface Opts {
  dataset: string;
  nuscenesRoot?: string;
  carlaDomain: string;
  results: string;
  groupByClip?: boolean;
  output: string;
}

export function registerAnswers(program: Command): void {
  program
    .command('answers')
    .description("a VLM's batch results (OpenAI Batch API lines, e.g. vllm run-batch) back into prediction records that egogeo grade scores")
    .requiredOption('--dataset <dir>', 'the dataset the prompts were built from (egogeo prompts --dataset)')
    .option('--nuscenes-root <dir>', 'published layout: the nuScenes data root')
    .option('--carla-domain <domain>', "published layout: 'simulation' or 'transferred'", 'simulation')
    .requiredOption('--results <file>', 'the batch results (JSONL: {custom_id, response: {status_code, body: {choices: [{message: {content}}]}}})')
    .option('--group-by-clip', 'the prompts were grouped by clip (egogeo prompts --group-by-clip): numbered answers split per question')
    .requiredOption('-o, --output <path>', 'prediction records (JSONL), written atomically')
    .action((o: Opts) => {
      guardOutputs([{ path: o.output, flag: '-o' }], [o.results]);
      const { clips } = readDataset(o.dataset, { nuscenesRoot: o.nuscenesRoot, carlaDomain: parseCarlaDomain(o.carlaDomain), needFrames: false });
      const results = readJsonlRecords(o.results).map((x) => x.rec);
      const r = answersFromResults(clips, results, !!o.groupByClip);
      if (r.records.length === 0) throw new InputError(`${o.results}: no result matches a QA item of ${o.dataset}${r.unknown.length ? ` (e.g. custom_id '${r.unknown[0]}'${o.groupByClip ? '' : '; grouped prompts need --group-by-clip'})` : ''}`);
      writeFileAtomic(o.output, r.records.map((x) => JSON.stringify(x)).join('\n') + '\n');
      const m = evaluate(r.records, loadQuestions());
      process.stderr.write(
        `egogeo: ${r.records.length} predictions → ${o.output} (${r.ok} requests answered, ${r.failed} failed${r.unknown.length ? `, ${r.unknown.length} unknown custom_id${r.unknown.length === 1 ? '' : 's'}` : ''}); parsable coverage ${m.parsable_coverage.toFixed(4)}, balanced accuracy ${m.global.balanced_acc.toFixed(4)}\n`,
      );
    });
}
