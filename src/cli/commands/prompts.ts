/**
 * `egogeo prompts --dataset DIR --embedding MODE -o OUT`: the benchmark's VLM prompts for every QA
 * item (or clip, --group-by-clip) of a dataset, exactly as the reference builds them, with the
 * ground-truth trajectory (src/prompts/), as JSONL request records a VLM runner takes.
 */
import type { Command } from 'commander';
import { ClipDataError, firstLine, InputError } from '../../core/errors.js';
import { readDataset } from '../../datasets/benchmark.js';
import { parseCarlaDomain } from '../../datasets/published.js';
import { writeFileAtomic } from '../../io/atomic.js';
import { guardOutputs } from '../../io/safety.js';
import { EMBEDDINGS, type Embedding, selectIndices } from '../../prompts/prompt.js';
import { batchLines, promptRequests } from '../../prompts/requests.js';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { probeVideo, referenceFrames } from '../../native/index.js';
import { join } from 'node:path';
import type { Clip } from '../../core/clip.js';
import { readTum } from '../../io/trajectories.js';
import { computeDynamics, summaryFeatures } from '../../oracle/index.js';
import { sidecar } from '../../run/record.js';
import { engineConfig, engineInput } from '../../vo/config.js';
import { estimateClip } from '../../vo/estimate.js';
import { loadFrames } from '../../vo/frames.js';

interface Opts {
  dataset: string;
  nuscenesRoot?: string;
  carlaDomain: string;
  embedding: string;
  trajectory: string;
  groupByClip?: boolean;
  numFrames: string;
  output: string;
  format: string;
  model: string;
  frameDetail: string;
  temperature: string;
}

/** The estimated trajectory as the oracle processes it (10 Hz arrays, summary features), for the prompt. */
function estimatedTrajectory(which: string): (c: Clip) => { arrays: ReturnType<typeof computeDynamics> | null; features?: Record<string, unknown> } {
  const of = (t: Parameters<typeof computeDynamics>[0]) => {
    const arrays = computeDynamics(t);
    return { arrays, features: { ...summaryFeatures(arrays) } };
  };
  if (which === 'estimated') {
    return (c) => {
      try {
        const { clip, options, alternative } = engineInput(loadFrames(c), engineConfig());
        return of(estimateClip(clip, options, alternative).trajectory);
      } catch (e) {
        if (e instanceof ClipDataError || (e as { code?: string }).code === 'EGOGEO_INPUT') throw new InputError(`--trajectory estimated: clip ${c.id}: ${firstLine(e)}`);
        throw e;
      }
    };
  }
  // An earlier egogeo run's trajectories (OUT.trajectories/<clip>.tum): the engine runs once for many prompt sets.
  const dir = sidecar.trajectories(which);
  if (!existsSync(dir)) throw new InputError(`--trajectory ${which}: no ${dir} (give gt, estimated or the predictions file of an egogeo run)`);
  return (c) => {
    const p = join(dir, `${c.id}.tum`);
    if (!existsSync(p)) throw new InputError(`--trajectory ${which}: clip ${c.id} has no trajectory (${p})`);
    return of(readTum(p));
  };
}

/**
 * A video clip's frames for the requests, extracted once (reused when present) into `dir/<clip>/`
 * as the reference extracts them (`extract_video_frames`: the declared frame count, its indices,
 * VideoCapture's BGR, cv2.imencode JPEG; native referenceFrames).
 */
function videoFrames(dir: string): (c: Clip, n: number) => string[] {
  return (c, n) => {
    let total: number;
    try {
      total = probeVideo(c.video!).frames;
    } catch (e) {
      throw new InputError(`clip ${c.id}: ${firstLine(e)}`);
    }
    const idx = selectIndices(total, n);
    const out = join(dir, c.id);
    const paths = idx.map((i) => join(out, `${String(i).padStart(6, '0')}.jpg`));
    if (!paths.every((p) => existsSync(p))) {
      mkdirSync(out, { recursive: true });
      try {
        referenceFrames({ video: c.video!, frameIndices: idx, paths });
      } catch (e) {
        throw new InputError(`clip ${c.id}: ${firstLine(e)}`);
      }
    }
    return paths;
  };
}

export function registerPrompts(program: Command): void {
  program
    .command('prompts')
    .description("the benchmark's VLM prompts for a dataset's QA items, as the reference builds them (evaluation/evaluator_common.py), as JSONL requests")
    .requiredOption('--dataset <dir>', 'EgoDyn-Bench as published or a benchmark folder (qa.jsonl with the question texts)')
    .option('--nuscenes-root <dir>', 'published layout: the nuScenes data root (frames of the nuScenes clips)')
    .option('--carla-domain <domain>', "published layout: 'simulation' or 'transferred' (the CARLA videos named)", 'simulation')
    .requiredOption('--embedding <mode>', `trajectory text in the prompt: ${EMBEDDINGS.join(', ')} (the reference's trajectory modes)`)
    .option('--trajectory <which>', "the trajectory embedded: 'gt' (the clip's ground-truth arrays and features, as the reference embeds them), 'estimated' (the engine's, run here), or RUN.jsonl (the trajectories of an earlier egogeo run)", 'gt')
    .option('--group-by-clip', 'one request per clip with every question numbered (build_grouped_prompt)')
    .option('--num-frames <n>', 'frames per request, evenly spaced (select_frames); 0 for text only', '10')
    .requiredOption('-o, --output <path>', 'request records (JSONL), written atomically')
    .option('--format <f>', "'requests' ({qa_id, clip_id, question_id, prompt, frames, choices} per line) or 'openai-batch' (OpenAI Batch API lines with the frames as data URIs, as the reference's evaluate_openai_batch.py prepares them)", 'requests')
    .option('--model <name>', 'openai-batch: the model named in each request', 'gpt-4o-mini')
    .option('--frame-detail <d>', "openai-batch: the images' detail", 'low')
    .option('--temperature <t>', 'openai-batch: sampling temperature', '0')
    .action((o: Opts) => {
      if (!(EMBEDDINGS as readonly string[]).includes(o.embedding)) throw new InputError(`--embedding must be one of ${EMBEDDINGS.join(', ')}, got '${o.embedding}'`);
      if (o.format !== 'requests' && o.format !== 'openai-batch') throw new InputError(`--format must be 'requests' or 'openai-batch', got '${o.format}'`);
      const temperature = Number(o.temperature);
      if (!Number.isFinite(temperature) || temperature < 0) throw new InputError(`--temperature must be a non-negative number, got '${o.temperature}'`);
      const n = Number(o.numFrames);
      if (!Number.isInteger(n) || n < 0) throw new InputError(`--num-frames must be a non-negative integer, got '${o.numFrames}'`);
      guardOutputs([{ path: o.output, flag: '-o' }], []);
      const { clips } = readDataset(o.dataset, { nuscenesRoot: o.nuscenesRoot, carlaDomain: parseCarlaDomain(o.carlaDomain), needFrames: n > 0 });
      const trajectoryOf = o.trajectory === 'gt' ? undefined : estimatedTrajectory(o.trajectory);
      const reqs = promptRequests(clips, { embedding: o.embedding as Embedding, groupByClip: !!o.groupByClip, numFrames: n, trajectoryOf, videoFrames: videoFrames(`${o.output}.frames`) });
      if (reqs.length === 0) throw new InputError(`${o.dataset}: no QA items to build prompts for`);
      const lines = o.format === 'requests' ? reqs : batchLines(reqs, { model: o.model, frameDetail: o.frameDetail, temperature, readFrame: (p) => readFileSync(p) });
      writeFileAtomic(o.output, lines.map((r) => JSON.stringify(r)).join('\n') + '\n');
      process.stderr.write(`egogeo: ${reqs.length} request${reqs.length === 1 ? '' : 's'} (${o.embedding}${o.groupByClip ? ', grouped by clip' : ''}) → ${o.output}\n`);
    });
}
