/**
 * `egogeo prompts --dataset DIR --embedding MODE -o OUT`: the benchmark's VLM prompts for every QA
 * item (or clip, --group-by-clip) of a dataset, exactly as the reference builds them, with the
 * ground-truth trajectory (src/prompts/), as JSONL request records a VLM runner takes.
 *
 * Streamed: each line is written as it is built (io/jsonlparts.ts, through a file stream with
 * backpressure), a clip's frames read and encoded once for its lines and no others held, so memory
 * does not grow with the number of requests. The output splits into parts at `--max-file-mb`
 * (OUT.part-001.jsonl, …; stdout names the files written). On a failure or SIGINT/SIGTERM nothing is
 * left: the temporary parts are removed, and so are the video frames this run extracted (inline
 * frames: a temporary folder, each clip's removed once its lines are written).
 */
import type { Command } from 'commander';
import { ClipDataError, firstLine, InputError } from '../../core/errors.js';
import { readDataset } from '../../datasets/benchmark.js';
import { addDeprecated, parseCarlaDomains, parseFrames, parseLimit, type Renamed, takeRenamed } from '../options.js';
import type { CarlaDomain } from '../../datasets/records.js';
import { JsonlParts } from '../../io/jsonlparts.js';
import { guardOutputs } from '../../io/safety.js';
import { EMBEDDINGS, type Embedding, selectIndices } from '../../prompts/prompt.js';
import { batchLine, frameDataUri, iteratePromptRequests, qualifiedIds } from '../../prompts/requests.js';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { probeVideo, referenceFrames } from '../../native/index.js';
import { basename, dirname, join, resolve } from 'node:path';
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
  limit?: string;
  embedding: string;
  trajectory: string;
  groupByClip?: boolean;
  frames?: string;
  /** Deprecated name of --frames. */
  numFrames?: string;
  output: string;
  format: string;
  openaiModel?: string;
  /** Deprecated name of --openai-model. */
  model?: string;
  frameDetail: string;
  temperature: string;
  maxFileMb: string;
  frameUrls: string;
}

/** The default part size limit (MB, 10^6 bytes): under the OpenAI Batch API's 200 MB input file limit. */
export const DEFAULT_MAX_FILE_MB = 190;

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
function videoFrames(dir: string, created: Set<string>): (c: Clip, n: number) => string[] {
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
      if (!existsSync(out)) created.add(out);
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

/** Names that meant something else in another command (issue 53): still read, with one deprecation line. */
const NUM_FRAMES: Renamed = { old: '--num-frames <n>', now: '--frames' };
const MODEL: Renamed = { old: '--model <name>', now: '--openai-model' };

export function registerPrompts(program: Command): void {
  const cmd = program
    .command('prompts')
    .description("the benchmark's VLM prompts for a dataset's QA items, as the reference builds them (evaluation/evaluator_common.py), as JSONL requests")
    .requiredOption('--dataset <dir>', 'EgoDyn-Bench as published or a benchmark folder (qa.jsonl with the question texts)')
    .option('--nuscenes-root <dir>', 'published layout: the nuScenes data root (frames of the nuScenes clips)')
    .option('--carla-domain <domain>', "published layout: the CARLA videos named, 'simulation' or 'transferred', or 'simulation,transferred': both, one output each (-o with {domain})", 'simulation')
    .option('--limit <n>', 'only the first n clips')
    .requiredOption('--embedding <mode>', `trajectory text in the prompt: ${EMBEDDINGS.join(', ')} (the reference's trajectory modes)`)
    .option('--trajectory <which>', "the trajectory embedded: 'gt' (the clip's ground-truth arrays and features, as the reference embeds them), 'estimated' (the engine's, run here), or RUN.jsonl (the trajectories of an earlier egogeo run)", 'gt')
    .option('--group-by-clip', 'one request per clip with every question numbered (build_grouped_prompt)')
    .option('--frames <n>', "frames per request, evenly spaced (select_frames), or 'all'; 0 for text only (default: 10)")
    .requiredOption('-o, --output <path>', 'request records (JSONL), written atomically')
    .option('--format <f>', "'requests' ({qa_id, clip_id, question_id, prompt, frames, choices} per line) or 'openai-batch' (OpenAI Batch API lines with the frames as data URIs, as the reference's evaluate_openai_batch.py prepares them)", 'requests')
    .option('--openai-model <name>', 'openai-batch: the model named in each request (default: gpt-4o-mini)')
    .option('--frame-detail <d>', "openai-batch: the images' detail", 'low')
    .option('--temperature <t>', 'openai-batch: sampling temperature', '0')
    .option('--frame-urls <how>', "openai-batch: 'inline' (each frame a base64 data URI in the line, as the reference does; what hosted batch APIs take) or 'file' (file:// URLs of the frame files, lines of a few kB: vllm run-batch with --allowed-local-media-path)", 'inline')
    .option('--max-file-mb <mb>', `split the output into parts of at most this many MB (10^6 bytes): OUT.part-001.jsonl, … (one part: OUT itself); stdout names the files written`, String(DEFAULT_MAX_FILE_MB));
  addDeprecated(cmd, NUM_FRAMES);
  addDeprecated(cmd, MODEL);
  cmd.action(async (o: Opts) => {
    const frames = takeRenamed(o as unknown as Record<string, unknown>, NUM_FRAMES, '10')!;
    const model = takeRenamed(o as unknown as Record<string, unknown>, MODEL, 'gpt-4o-mini')!;
    const domains = parseCarlaDomains(o.carlaDomain);
    const limit = parseLimit(o.limit);
    if (domains.length > 1 && !o.output.includes('{domain}')) throw new InputError(`-o: with two CARLA domains, name both outputs with {domain} (e.g. -o prompts.{domain}.jsonl), got '${o.output}'`);
    for (const d of domains) await writePrompts(o, { frames, model, carlaDomain: d, limit, output: o.output.replaceAll('{domain}', d) });
  });
}

/** One output of `egogeo prompts`: the requests for one CARLA domain's videos. */
async function writePrompts(o: Opts, p: { frames: string; model: string; carlaDomain: CarlaDomain; limit?: number; output: string }): Promise<void> {
  if (!(EMBEDDINGS as readonly string[]).includes(o.embedding)) throw new InputError(`--embedding must be one of ${EMBEDDINGS.join(', ')}, got '${o.embedding}'`);
  if (o.format !== 'requests' && o.format !== 'openai-batch') throw new InputError(`--format must be 'requests' or 'openai-batch', got '${o.format}'`);
  if (o.frameUrls !== 'inline' && o.frameUrls !== 'file') throw new InputError(`--frame-urls must be 'inline' or 'file', got '${o.frameUrls}'`);
  const temperature = Number(o.temperature);
  if (!Number.isFinite(temperature) || temperature < 0) throw new InputError(`--temperature must be a non-negative number, got '${o.temperature}'`);
  // Frames spread evenly over the clip as every command's --frames means; 0 here: text only.
  const n = parseFrames(p.frames, '--frames', 0) ?? Number.MAX_SAFE_INTEGER;
  const maxMb = Number(o.maxFileMb);
  if (!Number.isFinite(maxMb) || maxMb <= 0) throw new InputError(`--max-file-mb must be a positive number, got '${o.maxFileMb}'`);
  guardOutputs([{ path: p.output, flag: '-o' }], []);
  const clips = readDataset(o.dataset, { nuscenesRoot: o.nuscenesRoot, carlaDomain: p.carlaDomain, needFrames: n > 0 }).clips.slice(0, p.limit);
  if (!clips.some((c) => c.qa.length > 0)) throw new InputError(`${o.dataset}: no QA items to build prompts for`);
  const trajectoryOf = o.trajectory === 'gt' ? undefined : estimatedTrajectory(o.trajectory);
  const batch = o.format === 'openai-batch';
  // Frames by path (requests, file URLs) stay in OUT.frames/ (reused by a later run); inline ones
  // are extracted to a temporary folder, each clip's removed once its lines are written.
  const inline = batch && o.frameUrls === 'inline';
  const framesDir = inline ? join(dirname(resolve(p.output)), `.${basename(p.output)}.${process.pid}.${randomBytes(4).toString('hex')}.frames.tmp`) : `${p.output}.frames`;
  const framesDirExisted = existsSync(framesDir);
  const created = new Set<string>();
  const out = new JsonlParts(p.output, Math.floor(maxMb * 1e6));
  // Interrupted or failed: the temporary parts and the frames this run extracted go; then the signal does what it would have done.
  const cleanup = () => {
    out.abort();
    if (inline || !framesDirExisted) rmSync(framesDir, { recursive: true, force: true });
    else for (const d of created) rmSync(d, { recursive: true, force: true });
  };
  const onSignal = (sig: NodeJS.Signals) => {
    cleanup();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.kill(process.pid, sig);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let files: string[];
  try {
    const qualified = qualifiedIds(clips, !!o.groupByClip);
    // One clip's frames encoded once for all its lines; the previous clip's dropped.
    let clipId = '';
    let uris = new Map<string, string>();
    const frameUrl = (p: string): string => {
      if (o.frameUrls === 'file') return pathToFileURL(resolve(p)).href;
      let u = uris.get(p);
      if (u === undefined) uris.set(p, (u = frameDataUri(p, readFileSync(p))));
      return u;
    };
    const batchOptions = { model: p.model, frameDetail: o.frameDetail, temperature, readFrame: (p: string) => readFileSync(p), frameUrl };
    const reqs = iteratePromptRequests(clips, { embedding: o.embedding as Embedding, groupByClip: !!o.groupByClip, numFrames: n, trajectoryOf, videoFrames: videoFrames(framesDir, created) });
    for (const r of reqs) {
      if (r.clip_id !== clipId) {
        if (inline && clipId) rmSync(join(framesDir, clipId), { recursive: true, force: true });
        clipId = r.clip_id;
        uris = new Map();
      }
      await out.write(JSON.stringify(batch ? batchLine(r, batchOptions, qualified) : r));
      // Let a signal in now and then (writes that never wait for the stream never yield).
      if (out.lines % 64 === 0) await new Promise((res) => setImmediate(res));
    }
    files = await out.finish();
    if (inline) rmSync(framesDir, { recursive: true, force: true });
  } catch (e) {
    cleanup();
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  for (const f of files) process.stdout.write(`${f}\n`);
  const where = files.length > 1 ? `${files.length} parts of at most ${maxMb} MB: ${files[0]} … ${files[files.length - 1]}` : files[0];
  process.stderr.write(`egogeo: ${out.lines} request${out.lines === 1 ? '' : 's'} (${o.embedding}${o.groupByClip ? ', grouped by clip' : ''}) → ${where}\n`);
}
