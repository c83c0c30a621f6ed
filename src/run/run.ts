/**
 * run/ — the end-to-end benchmark runner behind `egogeo run` and `egogeo merge`: a dataset in the
 * benchmark's layout → one pool task per clip (src/run/task.ts in src/run/worker.ts) → prediction
 * records appended per clip (resumable, src/run/output.ts) → in canonical order on completion,
 * with the errors file, the estimated trajectories (TUM), a run record and the results manifest
 * in the benchmark's submission shape. May import: core/, datasets/, io/, oracle/, vo/, baseline/,
 * pool/, native/.
 *
 * Files beside `-o OUT`:
 *   OUT                      predictions JSONL (the grader's input)
 *   OUT.errors.jsonl         {clip_id, source, reason} per clip that failed
 *   OUT.trajectories/ID.tum  the estimated trajectory per clip (TUM, camera convention, absolute times)
 *   OUT.trajectories/ID.gt.tum  its ground truth at the same timestamps, when the clip has one
 *   OUT.run.json             the run's options, clip list and status (resume checks; merge)
 *   OUT.manifest.json        the submission manifest (model, type, input, per-clip answers)
 */
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { guardOutputs, isSafeFileName, MAX_ID_BYTES, readInputText } from '../io/safety.js';
import { lockOutput, type OutputLock } from '../io/lock.js';
import type { Clip } from '../core/clip.js';
import { InputError } from '../core/errors.js';
import { type CarlaDomain, readDataset } from '../datasets/benchmark.js';
import { cameraRecord } from '../datasets/cameras.js';
import { detectLayout } from '../datasets/layout.js';
import { DEFAULT_QUESTIONS_PATH, type QuestionSet, questionsFromText } from '../oracle/index.js';
import { engineVersion } from '../native/index.js';
import { type EngineConfig, engineRecord } from '../vo/config.js';
import { buildManifest, type ManifestClip, resolveModel } from './manifest.js';
import { datasetContent, keyDiff, readRunRecord, RUN_VERSION, type RunKey, type RunRecord, type Shard, sidecar } from './record.js';

export { keyDiff, readRunRecord, RUN_VERSION, type RunKey, type RunRecord, type Shard, sidecar } from './record.js';
import { type ClipBlock, type ExpectedClip, PredictionsOutput } from './output.js';
import { writeFileAtomic as writeAtomic } from '../io/atomic.js';
import { qualityFromTum } from '../io/trajectories.js';
import type { ClipOutput, ClipTask } from './task.js';
import { CancelledError, firstLine, InternalError } from '../core/errors.js';
import { answeredIds, type ClipExecutor, clipTasks, localExecutor, workerUrl } from './clips.js';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';

export { type ClipExecutor, type ClipExecutorContext, localExecutor, workerUrl } from './clips.js';

export interface RunOptions {
  dataset: string;
  output: string;
  /** Overrides every clip's source. */
  sourceLabel?: string;
  /** A selected_clips.json-style list (filter + order). */
  clips?: string;
  /** Only the first N clips (after the list). */
  limit?: number;
  workers?: number;
  questions: 'subset' | 'all';
  /** What the engine computes (vo/config.ts: `engineConfig`, `engineFromFlags`); its device is resolved already. */
  engine: EngineConfig;
  shard?: Shard;
  config?: string;
  /** `--protocol published` (its frames and questions are in `engine` and `questions` already): recorded in the run record and manifest. */
  protocol?: 'published' | null;
  /** `--abstain`: a clip whose scale failed leaves its scale-dependent answers null (default: answered from its estimate, the verdict beside it). */
  abstain?: boolean;
  /** Model name in the manifest (default: `egogeo_<carla domain>` on the published layout, else egogeo_vo). */
  model?: string;
  /** Published layout: the nuScenes data root. */
  nuscenesRoot?: string;
  /** Published layout: which CARLA videos (default simulation). */
  carlaDomain?: CarlaDomain;
  /** `--cameras FILE`: per-source cameras over the dataset's. */
  cameras?: string;
  /** Cache folder for the nuScenes join (null: none). */
  cacheDir?: string | null;
  progress?: boolean;
  /** Handle SIGINT/SIGTERM (stop scheduling, flush, report). Default true. */
  signals?: boolean;
  /** Test hook: called after each clip is flushed. */
  onClip?: (id: string) => void;
  /** Who answers the clips (default: the local worker pool, `localExecutor`). */
  executor?: ClipExecutor;
  /**
   * A finished run of the same dataset and options but the other CARLA domain: its clips without a
   * video (nuScenes: the same frames in both leaderboard entries) are taken over as they are, records
   * and files, instead of being computed again.
   */
  reuseFrom?: string;
}

export interface RunSummary {
  clips: number;
  done: number;
  /** Answered clips whose estimate is not 'ok' (vo/quality.ts), in canonical order. */
  flagged: { clip_id: string; verdict: 'weak' | 'failed'; reasons: string[] }[];
  resumed: number;
  failed: { clip_id: string; reason: string }[];
  interrupted: NodeJS.Signals | null;
  seconds: number;
  clipsPerSecond: number;
  output: string;
}

/** The records a clip's block will hold (QA items of the answered questions, or the questions). */
function answered(clip: Clip, ids: ReadonlySet<string>): number {
  return clip.qa.length > 0 ? clip.qa.filter((q) => ids.has(q.question_id)).length : ids.size;
}

/**
 * Runs the benchmark (see the module comment). Before any work: no output may be an input, and the
 * output is locked (`OUT.lock`): a second run on the same output refuses at once.
 */
export async function runBenchmark(o: RunOptions): Promise<RunSummary> {
  const out = resolve(o.output);
  const ds = resolve(o.dataset);
  guardOutputs(
    [{ path: out, flag: '-o' }, ...(['errors', 'run', 'manifest'] as const).map((k) => ({ path: sidecar[k](out), flag: `-o (${k} file)` })), { path: sidecar.trajectories(out), flag: '-o (trajectories)', kind: 'dir' as const }],
    [o.dataset, ...['clips_index.jsonl', 'qa.jsonl', 'selected_clips.json', 'metadata.json', 'poses.txt', 'times.txt', 'calib.txt'].map((f) => join(ds, f)), o.clips, o.config, o.cameras],
  );
  const lock = lockOutput(out);
  // One SIGINT/SIGTERM listener for the whole run, installed with the lock and never swapped
  // (a signal arriving while Node replaces a listener can be lost): it forwards to the current
  // stage's handler. Before the pool starts, a first signal is remembered (the run then stops
  // before any clip) and a second one releases the lock and exits at once.
  const signals: RunSignals = {
    first: null,
    handle: (sig) => {
      if (signals.first) {
        lock.release();
        process.exit(sig === 'SIGTERM' ? 143 : 130);
      }
      signals.first = sig;
      process.stderr.write(`egogeo: ${sig}: stopping before any clip starts (${sig} again to stop now)\n`);
    },
    exitBySignal: (sig) => {
      stopListening();
      lock.release();
      process.kill(process.pid, sig);
    },
  };
  const listener = (sig: NodeJS.Signals) => signals.handle(sig);
  const stopListening = () => {
    process.off('SIGINT', listener);
    process.off('SIGTERM', listener);
  };
  if (o.signals ?? true) {
    process.on('SIGINT', listener);
    process.on('SIGTERM', listener);
  }
  try {
    return await runLocked(o, lock, signals);
  } finally {
    stopListening();
    lock.release();
  }
}

/** The run's signal state: the stage's handler, a signal seen before it, the way to die by one. */
interface RunSignals {
  first: NodeJS.Signals | null;
  handle: (sig: NodeJS.Signals) => void;
  exitBySignal: (sig: NodeJS.Signals) => void;
}

/** What a run reads before it writes anything: the question file (its bytes), the dataset, this shard's clips. */
interface RunInputs {
  config: string;
  configText: string;
  questions: QuestionSet;
  dir: string;
  published: boolean;
  /** Every clip of the run (after --limit), and this shard's. */
  all: Clip[];
  mine: Clip[];
  shard: Shard;
}

/**
 * One run with its output locked, in stages: read the inputs, key the run (what must match to
 * resume), refuse an output that holds another run, open the output (what is done already), answer
 * the clips left, write the record and the files in canonical order.
 */
async function runLocked(o: RunOptions, lock: OutputLock, sig0: RunSignals): Promise<RunSummary> {
  const t0 = Date.now();
  const log = (line: string) => process.stderr.write(`egogeo: ${line}\n`);
  const inputs = readRunInputs(o, log);
  const { questions, all, mine, shard, config } = inputs;
  const engine = o.engine;
  const key = runKey(o, inputs);
  const out = resolve(o.output);
  refuseOtherRun(o.output, out, key, shard);

  const ids = answeredIds({ questions: o.questions, questionSet: questions, engine });
  const expected = new Map<string, ExpectedClip>();
  for (const c of mine) expected.set(c.id, { index: c.index, count: answered(c, ids) });
  const record = runRecord(o, key, shard, all, mine, expected);
  const output = openOutput(o.output, out, expected, record, engine.method);
  const { file, done, failed, fail } = output;

  if (o.reuseFrom) {
    const n = reuseClips(o.reuseFrom, key, out, mine.filter((c) => !c.video && !done.has(c.id)), engine.method, file);
    for (const id of n) done.add(id);
    if (n.length > 0) log(`${n.length} clip${n.length === 1 ? '' : 's'} without a video taken over from ${o.reuseFrom} (the same frames in both CARLA domains' runs)`);
  }

  const cancel = new Int32Array(new SharedArrayBuffer(4));
  const todo = mine.filter((c) => !done.has(c.id) && expected.get(c.id)!.count > 0);
  const tasks = runnableTasks(todo, fail, { questions: o.questions, engine, config, questionSet: questions, cancel, abstain: o.abstain });
  const interrupted = watchSignals(o.output, out, record, file, cancel, sig0);

  let finished = 0;
  try {
    if (tasks.length > 0) {
      const runId = createHash('sha256').update(JSON.stringify({ key, shard, out, host: hostname() })).digest('hex').slice(0, 16);
      finished = await executeTasks(o, tasks, output, { runId, out, method: engine.method, cancel, log });
    }
  } finally {
    file.close();
  }

  const seconds = (Date.now() - t0) / 1000;
  const summary: RunSummary = {
    clips: mine.length,
    done: done.size + finished,
    flagged: [],
    resumed: done.size,
    failed: failed.sort((a, b) => a.index - b.index).map(({ clip_id, reason }) => ({ clip_id, reason })),
    interrupted: interrupted(),
    seconds,
    clipsPerSecond: finished / Math.max(seconds, 1e-3),
    output: out,
  };
  if (summary.interrupted) {
    writeAtomic(sidecar.run(out), `${JSON.stringify({ ...record, status: 'interrupted', counts: { done: summary.done, failed: failed.length, resumed: done.size } }, null, 1)}\n`);
    return summary;
  }
  finishRun(out, output, record, engine.method, summary);
  return summary;
}

/** The question file (hashed from the same bytes that are parsed: answers depend on its content), the dataset and this shard's clips. */
function readRunInputs(o: RunOptions, log: (line: string) => void): RunInputs {
  const config = resolve(o.config ?? DEFAULT_QUESTIONS_PATH);
  const configText = readInputText(config, 'question file');
  const questions = questionsFromText(configText, config);
  const bench = readDataset(o.dataset, {
    selected: o.clips,
    sourceLabel: o.sourceLabel,
    nuscenesRoot: o.nuscenesRoot,
    carlaDomain: o.carlaDomain,
    cameras: o.cameras,
    cacheDir: o.cacheDir,
    log,
  });
  let all = bench.clips;
  if (o.limit !== undefined) all = all.slice(0, o.limit);
  if (all.length === 0) throw new InputError(`${o.dataset}: no clips to run`);
  const shard = o.shard ?? { index: 0, count: 1 };
  const mine = all.filter((c) => c.index % shard.count === shard.index);
  return { config, configText, questions, dir: bench.dir, published: detectLayout(bench.dir) === 'published', all, mine, shard };
}

/** What a run's output must have been made with to be resumed or merged (record.ts keyDiff). */
function runKey(o: RunOptions, r: RunInputs): RunKey {
  const engine = o.engine;
  return {
    dataset: r.dir,
    dataset_content: datasetContent(r.all),
    clips: o.clips ? resolve(o.clips) : null,
    source_label: o.sourceLabel ?? null,
    limit: o.limit ?? null,
    questions: o.questions,
    method: engine.method,
    frames: engine.frames,
    config: r.config,
    config_sha256: createHash('sha256').update(r.configText).digest('hex'),
    scale: engine.scale,
    nuscenes_root: o.nuscenesRoot ? resolve(o.nuscenesRoot) : null,
    carla_domain: r.published && r.all.some((c) => c.video) ? (o.carlaDomain ?? 'simulation') : null,
    cameras: o.cameras ? JSON.parse(readFileSync(o.cameras, 'utf8')) : null,
    photometric: engine.photometric,
    ...(o.abstain ? { abstain: true as const } : {}),
    // Only when not the default, so that runs recorded before the option existed still resume.
    ...(engine.resolution !== 'auto' ? { resolution: engine.resolution } : {}),
    // A queued run's clips are tracked on the workers' machines: their GPU is not this one.
    engine: o.executor && o.executor !== localExecutor && engine.device === 'gpu' ? { ...engineVersion('cpu'), device: 'gpu', gpu_device: 'the queue workers\' (not recorded)', gpu_library: 'the queue workers\' (not recorded)' } : engineVersion(engine.device),
  };
}

/** An output that no egogeo run wrote, or that holds a run with another key or shard, is refused with one line. */
function refuseOtherRun(name: string, out: string, key: RunKey, shard: Shard): void {
  const prev = readRunRecord(out);
  if (!prev && existsSync(out) && statSync(out).size > 0) {
    throw new InputError(`${name} exists but no egogeo run wrote it (no ${basename(sidecar.run(out))} beside it); use another -o or remove it`);
  }
  if (prev && existsSync(out)) {
    const d = keyDiff(key, prev.key) ?? (JSON.stringify(prev.shard) !== JSON.stringify(shard) ? `shard: ${prev.shard.index}/${prev.shard.count} then, ${shard.index}/${shard.count} now` : null);
    if (d) throw new InputError(`${name} holds a run with other options (${d}); rerun with the same options to resume, or use another -o`);
  }
}

/** The run record as the run starts ('running'): key, shard, model name, the clips and what each answers, cameras, engine. */
function runRecord(o: RunOptions, key: RunKey, shard: Shard, all: readonly Clip[], mine: readonly Clip[], expected: ReadonlyMap<string, ExpectedClip>): RunRecord {
  const engine = o.engine;
  return {
    egogeo_run: RUN_VERSION,
    key,
    shard,
    model: resolveModel(o.model, engine.method, key.carla_domain),
    protocol: o.protocol ?? null,
    clips_total: all.length,
    clips: mine.map((c) => [c.index, c.id, c.source, expected.get(c.id)!.count]),
    cameras: Object.fromEntries(mine.map((c) => [c.id, cameraRecord(c.camera)])),
    device: engine.device,
    engine_options: engineRecord(engine),
    status: 'running',
    started: new Date().toISOString(),
  };
}

/** A failed clip as the errors file lists it (index: its canonical position). */
interface FailedClip {
  clip_id: string;
  source: string;
  reason: string;
  index: number;
}

/** The run's output opened for writing: the predictions (recovered), the clips already done, the errors file. */
interface RunOutput {
  file: PredictionsOutput;
  done: Set<string>;
  trajDir: string;
  failed: FailedClip[];
  /** A clip failed: listed, and appended to the errors file at once. */
  fail: (c: Clip, reason: string) => void;
  /** The errors file rewritten in canonical order. */
  writeErrors: () => void;
}

/**
 * Opens the output: recovers the predictions a previous run wrote (a finished clip whose
 * trajectory file is gone is redone, so a resume regenerates side files), writes the run record
 * (status running), clears temporary trajectory files, starts the errors file.
 */
function openOutput(shown: string, out: string, expected: ReadonlyMap<string, ExpectedClip>, record: RunRecord, method: string): RunOutput {
  const file = new PredictionsOutput(out, expected);
  const trajDir = sidecar.trajectories(out);
  const rec = file.recover((id) => existsSync(sidecar.clipFile(out, id, method)));
  const done = new Set(rec.blocks.map((b) => b.id));
  if (rec.dropped.length > 0) {
    process.stderr.write(`egogeo: ${shown}: dropped the incomplete records of ${rec.dropped.join(', ')} (redoing ${rec.dropped.length === 1 ? 'it' : 'them'})\n`);
  }
  writeAtomic(sidecar.run(out), `${JSON.stringify(record, null, 1)}\n`);
  mkdirSync(trajDir, { recursive: true });
  for (const f of readdirSync(trajDir)) if (f.endsWith('.tmp')) unlinkSync(`${trajDir}/${f}`);
  // Errors: appended as clips fail (one line each), rewritten in canonical order at the end.
  const errorsPath = sidecar.errors(out);
  const failed: FailedClip[] = [];
  const errorLine = (f: { clip_id: string; source: string; reason: string }) => `${JSON.stringify({ clip_id: f.clip_id, source: f.source, reason: f.reason })}\n`;
  const writeErrors = () => writeAtomic(errorsPath, failed.slice().sort((a, b) => a.index - b.index).map(errorLine).join(''));
  writeErrors();
  const fail = (c: Clip, reason: string) => {
    const f = { clip_id: c.id, source: c.source, reason, index: c.index };
    failed.push(f);
    appendFileSync(errorsPath, errorLine(f));
  };
  return { file, done, trajDir, failed, fail, writeErrors };
}

/**
 * The clips to answer as tasks. Clips known to be bad before any decoding (listed but not
 * indexed) fail without a task; a clip id names its trajectory file: one that is not a safe file
 * name ('../x') is refused.
 */
function runnableTasks(todo: readonly Clip[], fail: RunOutput['fail'], o: Parameters<typeof clipTasks>[1]): ClipTask[] {
  const unsafe = (c: Clip) => (isSafeFileName(c.id) ? undefined : `clip id ${JSON.stringify(c.id)} is not a safe file name (no '/', '\\', control characters, '.' or '..'; at most ${MAX_ID_BYTES} bytes in UTF-8)`);
  for (const c of todo) if (c.problem || unsafe(c)) fail(c, (c.problem ?? unsafe(c))!);
  return clipTasks(todo.filter((c) => !c.problem && !unsafe(c)), o);
}

/**
 * The run's signal handling from here on: the first SIGINT/SIGTERM (or one seen before) cancels
 * (the clips in flight finish); a second stops now. Returns what interrupted the run, if anything.
 */
function watchSignals(shown: string, out: string, record: RunRecord, file: PredictionsOutput, cancel: Int32Array, sig0: RunSignals): () => NodeJS.Signals | null {
  let interrupted: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) {
      // Stop now without tearing down workers inside native calls (that aborts): flush what is
      // written, mark the run interrupted, and let the signal's default action end the process
      // (exit status 128 + signal, as a shell reports it). A torn last block is redone on resume.
      process.stderr.write(`egogeo: ${sig} again: stopping now; ${shown} keeps every finished clip (rerun to resume)\n`);
      try {
        file.close();
        writeAtomic(sidecar.run(out), `${JSON.stringify({ ...record, status: 'interrupted' }, null, 1)}\n`);
      } catch {
        /* the run record says running: still resumable */
      }
      sig0.exitBySignal(sig);
      return;
    }
    interrupted = sig;
    Atomics.store(cancel, 0, 1);
    process.stderr.write(`egogeo: ${sig}: finishing the clips in flight, then stopping (${sig} again to stop now)\n`);
  };
  sig0.handle = onSignal;
  if (sig0.first) {
    interrupted = sig0.first;
    Atomics.store(cancel, 0, 1);
  }
  return () => interrupted;
}

/** Runs the tasks on the executor (the local pool, or the queue); each answer written as it comes. Returns the clips answered. */
async function executeTasks(
  o: RunOptions,
  tasks: ClipTask[],
  output: RunOutput,
  r: { runId: string; out: string; method: string; cancel: Int32Array; log: (line: string) => void },
): Promise<number> {
  const { file, done, trajDir, fail } = output;
  const { out, method } = r;
  let finished = 0;
  await (o.executor ?? localExecutor)(tasks, {
    runId: r.runId,
    done,
    workers: o.workers,
    label: 'run',
    progress: o.progress,
    cancel: r.cancel,
    log: r.log,
    onResult: (res, t) => {
      try {
        if (res.gtTum) writeAtomic(`${trajDir}/${res.id}.gt.tum`, res.gtTum);
        writeAtomic(sidecar.clipFile(out, res.id, method), res.tum ?? res.signals ?? '');
      } catch (e) {
        // A name this file system refuses is this clip's problem; a full or read-only disk stops the run.
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENAMETOOLONG' && code !== 'EILSEQ' && code !== 'EINVAL') throw e;
        fail(t.clip, `cannot write its file ${JSON.stringify(basename(sidecar.clipFile(out, res.id, method)))} (${code})`);
        return;
      }
      file.append(res.records.map((x) => `${JSON.stringify(x)}\n`).join(''));
      finished++;
      o.onClip?.(res.id);
    },
    onError: (e, t) => {
      if (e instanceof InternalError) throw e; // a bug, not the clip's data: stop the run (exit 2)
      if (!(e instanceof CancelledError)) fail(t.clip, firstLine(e));
    },
  });
  return finished;
}

/**
 * A run that was not interrupted: the predictions in canonical order, the errors file, the
 * manifest, every answered clip's quality verdict, and the run record marked complete.
 */
function finishRun(out: string, output: RunOutput, record: RunRecord, method: string, summary: RunSummary): void {
  const blocks = output.file.finalize();
  output.writeErrors();
  writeManifest(out, blocks, record);
  // Every answered clip's verdict, from its trajectory file (resumed clips included; the published
  // baselines estimate no trajectory and have none).
  const verdicts = { ok: 0, weak: 0, failed: 0, unknown: 0 };
  for (const b of method === 'egogeo' ? blocks : []) {
    let q = null;
    try {
      q = qualityFromTum(readFileSync(`${output.trajDir}/${b.id}.tum`, 'utf8'));
    } catch {
      /* counted unknown */
    }
    if (!q) verdicts.unknown++;
    else {
      verdicts[q.verdict]++;
      if (q.verdict !== 'ok') summary.flagged.push({ clip_id: b.id, verdict: q.verdict, reasons: q.reasons });
    }
  }
  record.quality = { ...verdicts, flagged: Object.fromEntries(summary.flagged.map((f) => [f.clip_id, { verdict: f.verdict, reasons: f.reasons }])) };
  writeAtomic(
    sidecar.run(out),
    `${JSON.stringify({ ...record, status: 'complete', finished: new Date().toISOString(), counts: { done: summary.done, failed: output.failed.length, resumed: summary.resumed }, seconds: summary.seconds }, null, 1)}\n`,
  );
}

/** Writes `OUT.manifest.json` from the canonical blocks. */
export function writeManifest(out: string, blocks: readonly ClipBlock[], record: Pick<RunRecord, 'key' | 'clips' | 'model' | 'cameras' | 'device' | 'protocol'>): void {
  const sources = new Map(record.clips.map(([, id, source]) => [id, source]));
  const clips: ManifestClip[] = blocks.map((b) => ({ clip_id: b.id, source: sources.get(b.id) ?? 'unknown', text: b.text, camera: record.cameras?.[b.id] }));
  writeAtomic(sidecar.manifest(out), `${JSON.stringify(buildManifest(clips, record.key, record.model, record.device, record.protocol ?? null), null, 1)}\n`);
}

/**
 * Takes over `clips` from the finished run `from` (the same key but the CARLA domain): their record
 * lines, appended as they are, and their files in the trajectories folder. Returns the ids taken.
 */
function reuseClips(from: string, key: RunKey, out: string, clips: readonly Clip[], method: string, file: PredictionsOutput): string[] {
  const src = resolve(from);
  const rec = readRunRecord(src);
  if (!rec || rec.status !== 'complete') throw new InputError(`${from}: not a finished egogeo run to take clips from`);
  const d = keyDiff({ ...key, carla_domain: null }, { ...rec.key, carla_domain: null });
  if (d) throw new InputError(`${from}: made with other options (${d}); its clips cannot be taken over`);
  const lines = new Map<string, string[]>();
  for (const line of readFileSync(src, 'utf8').split('\n')) {
    if (!line) continue;
    const id = (JSON.parse(line) as { clip_id: string }).clip_id;
    lines.set(id, [...(lines.get(id) ?? []), line]);
  }
  const taken: string[] = [];
  for (const c of clips) {
    const own = sidecar.clipFile(src, c.id, method);
    const ls = lines.get(c.id);
    if (!ls || !existsSync(own)) continue;
    for (const f of [own, `${sidecar.trajectories(src)}/${c.id}.gt.tum`]) if (existsSync(f)) copyFileSync(f, `${sidecar.trajectories(out)}/${basename(f)}`);
    file.append(ls.map((l) => `${l}\n`).join(''));
    taken.push(c.id);
  }
  return taken;
}
