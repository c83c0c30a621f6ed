/**
 * The one way clips get answered: a dataset's clips (src/datasets/) → one pool task per clip
 * (src/run/task.ts inside src/run/worker.ts) → prediction records per clip. `egogeo run` adds its
 * resumable files around it (src/run/run.ts); `egogeo baseline`, `egogeo demo` and the benches take
 * the records in memory through `answerClips`.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GEOMETRIC_SUBSET, type Prediction } from '../baseline/baseline.js';
import type { BenchmarkClip } from '../datasets/benchmark.js';
import type { Device, Photometric } from '../native/index.js';
import type { QuestionSet } from '../oracle/index.js';
import { runPool } from '../pool/index.js';
import type { ClipOutput, ClipTask } from './task.js';

export interface AnswerOptions {
  /** 'subset': the 6 geometric questions; 'all': every question of the file. */
  questions: 'subset' | 'all';
  /** Frames the estimator sees, spread evenly; null = all. */
  frames: number | null;
  /** Question file (path) and its parsed questions. */
  config: string;
  questionSet: QuestionSet;
  scale?: 'road' | 'gt' | 'none';
  photometric?: Photometric;
  device?: Device;
  cancel?: Int32Array;
}

/** The question ids a run answers. */
export function answeredIds(o: Pick<AnswerOptions, 'questions' | 'questionSet'>): Set<string> {
  return new Set(o.questions === 'subset' ? GEOMETRIC_SUBSET : o.questionSet.questions.map((q) => q.id));
}

/** One pool task per clip; records of clips without QA items are numbered clip-major from the clip's index. */
export function clipTasks(clips: readonly BenchmarkClip[], o: AnswerOptions): ClipTask[] {
  const ids = answeredIds(o);
  return clips.map((c) => ({
    clip: c,
    qa: c.qa.filter((q) => ids.has(q.question_id)),
    frames: o.frames,
    config: o.config,
    questionsDoc: o.questionSet.document,
    questionIds: [...ids],
    qaBase: c.index * o.questionSet.questions.length,
    scale: o.scale ?? 'road',
    photometric: o.photometric,
    device: o.device,
    cancel: o.cancel,
  }));
}

/** The run worker: next to this file when compiled, else the compiled copy in dist/ (tests). */
export function workerUrl(): URL {
  const here = new URL('./worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  const dist = new URL('../../dist/run/worker.js', import.meta.url);
  if (existsSync(fileURLToPath(dist))) return dist;
  throw new Error(`the run worker is not compiled (looked for ${fileURLToPath(here)} and ${fileURLToPath(dist)}); run \`npm run build\``);
}

export interface Answered {
  /** Per clip in canonical order: its output, or null when it failed. */
  outputs: (ClipOutput | null)[];
  /** Every record, clips in canonical order. */
  records: Prediction[];
  failed: { clip_id: string; reason: string }[];
  seconds: number;
}

/** Answers every clip on the worker pool and returns the records in memory, in canonical order. */
export async function answerClips(
  clips: readonly BenchmarkClip[],
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
  await runPool<ClipTask, ClipOutput>({
    worker: workerUrl(),
    tasks,
    workers: o.workers,
    label: o.label ?? 'clips',
    progress: o.progress,
    onResult: (r, _t, k) => {
      outputs[pending[k].i] = r;
    },
    onError: (e, t, k) => {
      failed.push({ clip_id: t.clip.id, reason: (e as Error).message.split('\n')[0], i: pending[k].i });
    },
  });
  return {
    outputs,
    records: outputs.flatMap((r) => r?.records ?? []),
    failed: failed.sort((a, b) => a.i - b.i).map(({ clip_id, reason }) => ({ clip_id, reason })),
    seconds: (Date.now() - t0) / 1000,
  };
}
