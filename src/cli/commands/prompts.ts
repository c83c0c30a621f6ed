/**
 * `egogeo prompts --dataset DIR --embedding MODE -o OUT`: the benchmark's VLM prompts for every QA
 * item (or clip, --group-by-clip) of a dataset, exactly as the reference builds them, with the
 * ground-truth trajectory (src/prompts/), as JSONL request records a VLM runner takes.
 */
import type { Command } from 'commander';
import { InputError } from '../../core/errors.js';
import { readDataset } from '../../datasets/benchmark.js';
import { parseCarlaDomain } from '../../datasets/published.js';
import { writeFileAtomic } from '../../io/atomic.js';
import { guardOutputs } from '../../io/safety.js';
import { EMBEDDINGS, type Embedding } from '../../prompts/prompt.js';
import { promptRequests } from '../../prompts/requests.js';

interface Opts {
  dataset: string;
  nuscenesRoot?: string;
  carlaDomain: string;
  embedding: string;
  trajectory: string;
  groupByClip?: boolean;
  numFrames: string;
  output: string;
}

export function registerPrompts(program: Command): void {
  program
    .command('prompts')
    .description("the benchmark's VLM prompts for a dataset's QA items, as the reference builds them (evaluation/evaluator_common.py), as JSONL requests")
    .requiredOption('--dataset <dir>', 'EgoDyn-Bench as published or a benchmark folder (qa.jsonl with the question texts)')
    .option('--nuscenes-root <dir>', 'published layout: the nuScenes data root (frames of the nuScenes clips)')
    .option('--carla-domain <domain>', "published layout: 'simulation' or 'transferred' (the CARLA videos named)", 'simulation')
    .requiredOption('--embedding <mode>', `trajectory text in the prompt: ${EMBEDDINGS.join(', ')} (the reference's trajectory modes)`)
    .option('--trajectory <which>', "the trajectory embedded: 'gt' (the clip's ground-truth arrays and features, as the reference embeds them)", 'gt')
    .option('--group-by-clip', 'one request per clip with every question numbered (build_grouped_prompt)')
    .option('--num-frames <n>', 'frames per request, evenly spaced (select_frames); 0 for text only', '10')
    .requiredOption('-o, --output <path>', 'request records (JSONL), written atomically')
    .action((o: Opts) => {
      if (!(EMBEDDINGS as readonly string[]).includes(o.embedding)) throw new InputError(`--embedding must be one of ${EMBEDDINGS.join(', ')}, got '${o.embedding}'`);
      if (o.trajectory !== 'gt') throw new InputError(`--trajectory must be 'gt' (estimated trajectories are not built yet), got '${o.trajectory}'`);
      const n = Number(o.numFrames);
      if (!Number.isInteger(n) || n < 0) throw new InputError(`--num-frames must be a non-negative integer, got '${o.numFrames}'`);
      guardOutputs([{ path: o.output, flag: '-o' }], []);
      const { clips } = readDataset(o.dataset, { nuscenesRoot: o.nuscenesRoot, carlaDomain: parseCarlaDomain(o.carlaDomain), needFrames: n > 0 });
      const reqs = promptRequests(clips, { embedding: o.embedding as Embedding, groupByClip: !!o.groupByClip, numFrames: n });
      if (reqs.length === 0) throw new InputError(`${o.dataset}: no QA items to build prompts for`);
      writeFileAtomic(o.output, reqs.map((r) => JSON.stringify(r)).join('\n') + '\n');
      process.stderr.write(`egogeo: ${reqs.length} request${reqs.length === 1 ? '' : 's'} (${o.embedding}${o.groupByClip ? ', grouped by clip' : ''}) → ${o.output}\n`);
    });
}
