/**
 * One throughput measurement: a set of clips answered end to end on the run's worker pool
 * (src/run/clips.ts `answerClips`, the path `egogeo run` takes), timed by the wall clock and by
 * the process's CPU time. `process.cpuUsage()` counts every thread of the process — the pool's
 * worker threads and libuv's (the one-worker path runs the engine there) — exited ones included,
 * so core-seconds per clip compare the in-process and pooled paths.
 */
import type { Clip } from '../core/clip.js';
import type { QuestionSet } from '../oracle/index.js';
import { answerClips } from '../run/clips.js';
import type { ClipOutput } from '../run/task.js';
import type { EngineConfig } from '../vo/config.js';
import type { EngineRun } from '../vo/estimate.js';

export const STAGES = ['decode', 'detect', 'track', 'pose', 'scale', 'total'] as const;
export type Stage = (typeof STAGES)[number];

/** Mean milliseconds per answered clip of one tracking size's engine runs, per stage. */
export interface SizeStages {
  /** 'full' (downsample 1), 'half' (2), else `1/N`. */
  size: string;
  /** Clips that ran the engine at this size. */
  clips: number;
  ms: Record<Stage, number>;
}

export interface RunFigures {
  method: EngineConfig['method'];
  /** The engine's device; null for the published baselines (they run on the CPU only). */
  device: EngineConfig['device'] | null;
  workers: number;
  /** Answered clips (failed ones are not counted in any rate). */
  clips: number;
  failed: { clip_id: string; reason: string }[];
  /** Frames the engine saw, summed over the answered clips. */
  frames: number;
  framesPerClip: number;
  wallSeconds: number;
  clipsPerSecond: number;
  framesPerSecond: number;
  /** User + system CPU seconds of the whole process over the run. */
  cpuSeconds: number;
  coreSecondsPerClip: number;
  /** cpuSeconds / wallSeconds: how many cores the run kept busy. */
  coresBusy: number;
  /** Mean per clip of the task's own times (ms: frame loading, engine, whole task, as the worker measured them). */
  taskMs: { load: number; vo: number; total: number };
  /** Method egogeo: the engine's stage times per tracking size (mean ms per answered clip; a size a clip did not run counts 0 for it). */
  stages: SizeStages[];
}

export interface MeasureOptions {
  engine: EngineConfig;
  workers: number;
  config: string;
  questionSet: QuestionSet;
  progress?: boolean;
  label?: string;
}

/** A tracking size's name from the addon's `downsample`. */
export function sizeName(downsample: number): string {
  return downsample === 1 ? 'full' : downsample === 2 ? 'half' : `1/${downsample}`;
}

/**
 * Per tracking size, the mean stage times per clip over `clips` clips (full size first). `runs`
 * holds each clip's engine runs (one size, or two with resolution 'auto' on frames far apart).
 */
export function stageMeans(runs: readonly (readonly EngineRun[])[], clips = runs.length): SizeStages[] {
  const by = new Map<number, { clips: number; ms: Record<Stage, number> }>();
  for (const clipRuns of runs) {
    for (const r of clipRuns) {
      let s = by.get(r.downsample);
      if (!s) by.set(r.downsample, (s = { clips: 0, ms: Object.fromEntries(STAGES.map((k) => [k, 0])) as Record<Stage, number> }));
      s.clips++;
      for (const k of STAGES) s.ms[k] += r.timing[k];
    }
  }
  return [...by.entries()]
    .sort(([a], [b]) => a - b)
    .map(([d, s]) => ({ size: sizeName(d), clips: s.clips, ms: Object.fromEntries(STAGES.map((k) => [k, clips > 0 ? s.ms[k] / clips : 0])) as Record<Stage, number> }));
}

/** Answers `clips` once with `o.engine` on `o.workers` workers and returns the figures. */
export async function measureRun(clips: readonly Clip[], o: MeasureOptions): Promise<RunFigures> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const run = await answerClips(clips, { questions: 'all', engine: o.engine, config: o.config, questionSet: o.questionSet, workers: o.workers, progress: o.progress, label: o.label });
  const wallSeconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const outputs = run.outputs.filter((r): r is ClipOutput => r !== null);
  return figures(outputs, run.failed, { method: o.engine.method, device: o.engine.method === 'egogeo' ? o.engine.device : null, workers: o.workers, wallSeconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 });
}

/** The figures of a finished run from its clips' outputs (pure: tests and the stage profile use it too). */
export function figures(
  outputs: readonly Pick<ClipOutput, 'framesUsed' | 'ms' | 'engineRuns'>[],
  failed: RunFigures['failed'],
  m: Pick<RunFigures, 'method' | 'device' | 'workers' | 'wallSeconds' | 'cpuSeconds'>,
): RunFigures {
  const clips = outputs.length;
  const frames = outputs.reduce((a, r) => a + r.framesUsed, 0);
  const mean = (f: (r: (typeof outputs)[number]) => number) => (clips > 0 ? outputs.reduce((a, r) => a + f(r), 0) / clips : 0);
  const wall = Math.max(m.wallSeconds, 1e-9);
  return {
    ...m,
    clips,
    failed,
    frames,
    framesPerClip: clips > 0 ? frames / clips : 0,
    clipsPerSecond: clips / wall,
    framesPerSecond: frames / wall,
    coreSecondsPerClip: clips > 0 ? m.cpuSeconds / clips : 0,
    coresBusy: m.cpuSeconds / wall,
    taskMs: { load: mean((r) => r.ms.load), vo: mean((r) => r.ms.vo), total: mean((r) => r.ms.total) },
    stages: m.method === 'egogeo' ? stageMeans(outputs.map((r) => r.engineRuns ?? []), clips) : [],
  };
}
