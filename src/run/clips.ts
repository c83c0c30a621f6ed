/**
 * The one way clips get answered: a dataset's clips (src/datasets/) → one pool task per clip
 * (src/run/task.ts inside src/run/worker.ts) → prediction records per clip. `egogeo run` adds its
 * resumable files around it (src/run/run.ts); `egogeo baseline`, `egogeo demo` and the benches take
 * the records in memory through `answerClips`.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GEOMETRIC_SUBSET } from '../baseline/baseline.js';
import type { Clip } from '../core/clip.js';
import type { Prediction } from '../core/prediction.js';
import type { QuestionSet } from '../oracle/index.js';
import type { EngineConfig } from '../vo/config.js';
import { firstLine, InternalError } from '../core/errors.js';
import { runPool } from '../pool/index.js';
import type { ClipOutput, ClipTask } from './task.js';

export interface AnswerOptions {
  /** 'subset': the 6 geometric questions; 'all': every question of the file. */
  questions: 'subset' | 'all';
  /** What the engine computes for every clip. */
  engine: EngineConfig;
  /** Question file (path) and its parsed questions. */
  config: string;
  questionSet: QuestionSet;
  cancel?: Int32Array;
  /** `--abstain`: clips whose scale failed leave their scale-dependent answers null (task.ts). */
  abstain?: boolean;
}

/** The question ids a run answers (the published baselines answer the 6-question subset only). */
export function answeredIds(o: Pick<AnswerOptions, 'questions' | 'questionSet'> & { engine?: EngineConfig }): Set<string> {
  const subset = o.questions === 'subset' || (o.engine !== undefined && o.engine.method !== 'egogeo');
  return new Set(subset ? GEOMETRIC_SUBSET : o.questionSet.questions.map((q) => q.id));
}

/** One pool task per clip; records of clips without QA items are numbered clip-major from the clip's index. */
export function clipTasks(clips: readonly Clip[], o: AnswerOptions): ClipTask[] {
  const ids = answeredIds(o);
  return clips.map((c) => ({
    clip: c,
    qa: c.qa.filter((q) => ids.has(q.question_id)),
    engine: o.engine,
    config: o.config,
    questionsDoc: o.questionSet.document,
    questionIds: [...ids],
    qaBase: c.index * o.questionSet.questions.length,
    cancel: o.cancel,
    ...(o.abstain ? { abstain: true } : {}),
  }));
}

/**
 * The run worker: next to this file when compiled, its bundled entry when this is the bundle
 * (dist/bundle/, scripts/bundle.mjs), else the compiled copy in dist/ (tests).
 */
export function workerUrl(): URL {
  const here = new URL('./worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  const bundled = new URL('./run-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(bundled))) return bundled;
  const dist = new URL('../../dist/run/worker.js', import.meta.url);
  if (existsSync(fileURLToPath(dist))) return dist;
  throw new Error(`the run worker is not compiled (looked for ${fileURLToPath(here)} and ${fileURLToPath(dist)}); run \`npm run build\``);
}

/**
 * What answers a run's clip tasks: the local worker pool (default) or another backend (the Redis
 * queue of src/queue/, which `egogeo run --queue URL` plugs in). It calls `onResult` once per
 * answered clip and `onError` once per failed one, on the main thread; the run writes the files.
 * It should stop soon after `cancel[0]` becomes non-zero (an interrupted run).
 */
export interface ClipExecutorContext {
  /** The run's identity: stable across restarts of the same run (options, shard, output, host). */
  runId: string;
  /** Clips already in the output (a resumed run): nothing to answer for them. */
  done: ReadonlySet<string>;
  workers?: number;
  progress?: boolean;
  label: string;
  cancel: Int32Array;
  onResult: (r: ClipOutput, t: ClipTask) => void;
  onError: (e: Error, t: ClipTask) => void;
  log: (line: string) => void;
}
export type ClipExecutor = (tasks: ClipTask[], ctx: ClipExecutorContext) => Promise<void>;

/** The default executor: one piscina pool on this machine (src/pool/). */
export const localExecutor: ClipExecutor = async (tasks, ctx) => {
  await runPool<ClipTask, ClipOutput>({
    worker: workerUrl(),
    tasks,
    workers: ctx.workers,
    label: ctx.label,
    progress: ctx.progress,
    onResult: (r, t) => ctx.onResult(r, t),
    onError: (e, t) => ctx.onError(e, t),
  });
};

export interface Answered {
  /** Per clip in canonical order: its output, or null when it failed. */
  outputs: (ClipOutput | null)[];
  /** Every record, clips in canonical order. */
  records: Prediction[];
  failed: { clip_id: string; reason: string }[];
  seconds: number;
}

/**
 * Answers every clip on the worker pool (the run's executor, without its files) and returns the
 * records in memory, in canonical order. An engine-internal failure stops it, as it stops a run.
 */
export async function answerClips(
  clips: readonly Clip[],
  o: AnswerOptions & { workers?: number; progress?: boolean; label?: string },
): Promise<Answered> {
  const t0 = Date.now();
  const outputs: (ClipOutput | null)[] = clips.map(() => null);
  const failed: (Answered['failed'][number] & { i: number })[] = [];
  const pending = clips.map((c, i) => ({ c, i })).filter(({ c, i }) => {
    if (c.problem) failed.push({ clip_id: c.id, reason: c.problem, i });
    return !c.problem;
  });
  const tasks = clipTasks(pending.map((p) => p.c), o);
  const at = new Map(tasks.map((t, k) => [t, pending[k].i]));
  await localExecutor(tasks, {
    runId: '',
    done: new Set(),
    workers: o.workers,
    label: o.label ?? 'clips',
    progress: o.progress,
    cancel: o.cancel ?? new Int32Array(new SharedArrayBuffer(4)),
    log: () => {},
    onResult: (r, t) => {
      outputs[at.get(t)!] = r;
    },
    onError: (e, t) => {
      if (e instanceof InternalError) throw e; // a bug, not the clip's data: stop (as a run does)
      failed.push({ clip_id: t.clip.id, reason: firstLine(e), i: at.get(t)! });
    },
  });
  return {
    outputs,
    records: outputs.flatMap((r) => r?.records ?? []),
    failed: failed.sort((a, b) => a.i - b.i).map(({ clip_id, reason }) => ({ clip_id, reason })),
    seconds: (Date.now() - t0) / 1000,
  };
}
