/**
 * The run action `egogeo run` and `egogeo baseline` share: their flags → the runner's options,
 * and the run itself (local pool or queue).
 */
import { InputError } from '../core/errors.js';
import type { CarlaDomain } from '../datasets/records.js';
import { type RunOptions, runBenchmark, sidecar } from '../run/run.js';
import { decideDevice } from '../native/device.js';
import { ENGINE_DEFAULTS } from '../vo/config.js';
import { type QueueTarget } from '../queue/connection.js';
import { engineFromFlags, parseCarlaDomains, parseDevice, parseLimit, parseQueueUrl, parseShard, parseWorkers, positiveInt, queueDevice } from './options.js';

export interface RunOpts {
  dataset: string;
  method?: string;
  protocol?: string;
  abstain?: boolean;
  output: string;
  sourceLabel?: string;
  clips?: string;
  limit?: string;
  workers?: string;
  questions: string;
  frames: string;
  shard?: string;
  config: string;
  scale: string;
  model?: string;
  nuscenesRoot?: string;
  carlaDomain?: string;
  cameras?: string;
  cache?: string | boolean;
  photometric?: string;
  resolution?: string;
  /** Absent: ENGINE_DEFAULTS.device (auto), the CPU with --queue. */
  device?: string;
  progress?: boolean;
  /** How to resume, for the line an interrupted run ends with (default: rerun the same command). */
  resumeHint?: string;
  queue?: string;
  queueName: string;
  attempts: string;
}

/**
 * A run's flags → the run's typed options (the one place they are parsed; runBenchmark takes
 * these). The device is resolved here: 'auto' probes the GPU and prints its note.
 */
export function runOptions(o: RunOpts, carlaDomain: CarlaDomain, output: string, reuseFrom?: string): Omit<RunOptions, 'executor'> & { queue?: { target: QueueTarget; attempts: number } } {
  if (o.protocol !== undefined && o.protocol !== 'published') throw new InputError(`--protocol must be 'published', got '${o.protocol}'`);
  // The published geometric rows' protocol: 10 evenly spaced frames, the 6-question subset.
  if (o.protocol === 'published') o = { ...o, frames: '10', questions: 'subset' };
  if (o.questions !== 'subset' && o.questions !== 'all') throw new InputError(`--questions must be 'subset' or 'all', got '${o.questions}'`);
  const flags = { method: o.method, frames: o.frames, scale: o.scale, photometric: o.photometric, resolution: o.resolution };
  const engine = engineFromFlags(flags, 'cpu'); // a bad flag is one line before the GPU is probed; the device is set below
  const limit = parseLimit(o.limit);
  const workers = o.workers === undefined ? undefined : parseWorkers(o.workers);
  const shard = o.shard === undefined ? undefined : parseShard(o.shard);
  const queue = o.queue === undefined ? undefined : { target: parseQueueUrl(o.queue, o.queueName), attempts: positiveInt('--attempts', o.attempts) };
  // Resolved once here (one clear error for a missing or failing GPU, not one per clip); recorded in the manifest.
  let device: 'cpu' | 'gpu';
  if (queue === undefined) {
    const d = decideDevice(parseDevice(o.device ?? ENGINE_DEFAULTS.device));
    if (d.note) process.stderr.write(`egogeo: ${d.note}\n`);
    device = d.device;
  } else {
    device = queueDevice(o.device);
  }
  return {
    dataset: o.dataset,
    output,
    sourceLabel: o.sourceLabel,
    clips: o.clips,
    limit,
    workers,
    questions: o.questions,
    engine: { ...engine, device },
    shard,
    config: o.config,
    model: o.model,
    protocol: o.protocol === 'published' ? 'published' : null,
    abstain: o.abstain === true,
    nuscenesRoot: o.nuscenesRoot,
    carlaDomain,
    reuseFrom,
    cameras: o.cameras,
    cacheDir: o.cache === false ? null : typeof o.cache === 'string' ? o.cache : undefined,
    progress: o.progress === false ? false : undefined,
    ...(queue ? { queue } : {}),
  };
}

/** What `egogeo run` does with its parsed options (also `egogeo baseline`, its alias over a KITTI sequence). */
export async function runCommand(o: RunOpts): Promise<void> {
  const domains = parseCarlaDomains(o.carlaDomain);
  // Both CARLA domains in one command: one run (one output, one leaderboard entry) each, the second
  // taking the nuScenes clips (the same frames in both) over from the first.
  if (domains.length > 1) {
    if (!o.output.includes('{domain}')) throw new InputError(`-o: with two CARLA domains, name both outputs with {domain} (e.g. -o preds.{domain}.jsonl), got '${o.output}'`);
    if (o.shard !== undefined || o.queue !== undefined) throw new InputError('--carla-domain with both domains runs locally and unsharded; run each domain on its own for --shard or --queue');
    let first: string | undefined;
    for (const d of domains) {
      const output = o.output.replaceAll('{domain}', d);
      await runOne(o, runOptions(o, d, output, first));
      if (process.exitCode !== undefined && process.exitCode !== 0) return;
      first = output;
    }
    return;
  }
  await runOne(o, runOptions(o, domains[0], o.output));
}

async function runOne(o: RunOpts, r: ReturnType<typeof runOptions>): Promise<void> {
  const { queue, ...options } = r;
  const s = await runBenchmark({
    ...options,
    // BullMQ loads only for a queued run (it alone costs a fifth of a second at every start).
    executor: queue === undefined ? undefined : (await import('../queue/coordinator.js')).queueExecutor(queue),
  });
  const ran = s.done - s.resumed;
  const rate = `${ran} clip${ran === 1 ? '' : 's'} in ${s.seconds.toFixed(1)} s (${s.clipsPerSecond.toFixed(2)} clips/s)`;
  if (s.interrupted) {
    process.stderr.write(`egogeo: interrupted (${s.interrupted}): ${s.done}/${s.clips} clips done, ${rate}; ${o.resumeHint ?? 'rerun the same command to resume'}\n`);
    process.exitCode = s.interrupted === 'SIGTERM' ? 143 : 130; // 128 + the signal's number
    return;
  }
  const resumed = s.resumed > 0 ? `, ${s.resumed} from an earlier run` : '';
  process.stderr.write(`egogeo: ${s.done}/${s.clips} clips → ${r.output}: ${rate}${resumed}\n`);
  if (s.flagged.length > 0) {
    const failed = s.flagged.filter((f) => f.verdict === 'failed');
    const first = failed[0] ?? s.flagged[0];
    process.stderr.write(
      `egogeo: ${s.flagged.length} clip${s.flagged.length > 1 ? 's' : ''} flagged (${failed.length} failed: scale-dependent answers ${o.abstain ? 'withheld (--abstain)' : 'answered from the estimate'}, ${s.flagged.length - failed.length} weak; see "quality" in ${sidecar.run(r.output)}), e.g. ${first.clip_id}: ${first.reasons.join('; ')}\n`,
    );
  }
  if (s.failed.length > 0) {
    process.stderr.write(`egogeo: ${s.failed.length} clip${s.failed.length > 1 ? 's' : ''} failed (see ${sidecar.errors(r.output)}): ${s.failed.slice(0, 3).map((f) => `${f.clip_id}: ${f.reason}`).join('; ')}${s.failed.length > 3 ? '; …' : ''}\n`);
    process.exitCode = 1;
  }
}
