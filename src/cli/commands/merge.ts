/** `egogeo merge SHARD… -o preds.jsonl`: the outputs of `egogeo run --shard i/n` → one run's output. */
import type { Command } from 'commander';
import { mergeShards } from '../../run/merge.js';

export function registerMerge(program: Command): void {
  program
    .command('merge')
    .description('merge the outputs of egogeo run --shard i/n into one predictions file (canonical order; checks duplicates and missing clips)')
    .argument('<shards...>', 'the -o files of the shard runs')
    .requiredOption('-o, --output <path>', 'merged predictions JSONL (with .errors.jsonl, .trajectories/, .run.json, .manifest.json)')
    .option('--allow-missing', 'write the merge even when clips are missing (listed in the errors file; exit status 1)')
    .action(async (inputs: string[], o: { output: string; allowMissing?: boolean }) => {
      const s = await mergeShards({ inputs, output: o.output, allowMissing: o.allowMissing });
      process.stderr.write(`egogeo: merged ${inputs.length} shard${inputs.length > 1 ? 's' : ''}: ${s.clips} clips → ${o.output}\n`);
      if (s.missing.length > 0) {
        process.stderr.write(`egogeo: ${s.missing.length} clips missing (see the errors file)\n`);
        process.exitCode = 1;
      }
    });
}
