/**
 * `egogeo bench`'s measurements: egogeo's default engine and the published VO proxy (natively,
 * method vo-proxy) over the same clips, at each worker count, in one process, so that every ratio
 * is between figures of this run. Runs alternate their order from one worker count to the next
 * (a slow patch of the machine then hits both methods alike).
 */
import type { Clip } from '../core/clip.js';
import type { Device } from '../native/index.js';
import type { QuestionSet } from '../oracle/index.js';
import { answerClips } from '../run/clips.js';
import { type EngineConfig, engineConfig } from '../vo/config.js';
import { measureRun, type RunFigures } from './measure.js';

export interface ThroughputOptions {
  clips: readonly Clip[];
  /** Frames per clip (null: all); the proxy reads its own 10 when null, as the reference does. */
  frames: number | null;
  /** Worker counts, ascending. */
  workers: readonly number[];
  /** Devices egogeo's engine is measured on (checked already). */
  devices: readonly Device[];
  config: string;
  questionSet: QuestionSet;
  progress?: boolean;
  log?: (line: string) => void;
}

/**
 * egogeo against the proxy at one device and worker count, as a speed-up (how many times faster
 * egogeo is; below 1: slower): the proxy's wall time per clip over egogeo's, and the same for
 * core-seconds per clip (the steadier figure where other work shares the machine).
 */
export interface Ratio {
  device: Device;
  workers: number;
  speedup: number;
  coreSecondsSpeedup: number;
}

/** A method's clips/s at each worker count over its clips/s at the fewest workers. */
export interface Scaling {
  method: string;
  device: Device | null;
  points: { workers: number; clipsPerSecond: number; speedup: number; ideal: number }[];
}

export interface ThroughputResult {
  engine: EngineConfig;
  proxy: EngineConfig;
  runs: RunFigures[];
  ratios: Ratio[];
  scaling: Scaling[];
}

/** The default engine (`egogeo run`'s) and the proxy at `frames`. */
export function benchEngines(frames: number | null, device: Device = 'cpu'): { engine: EngineConfig; proxy: EngineConfig } {
  return { engine: engineConfig({ frames, device }), proxy: engineConfig({ method: 'vo-proxy', frames, device: 'cpu' }) };
}

export async function measureThroughput(o: ThroughputOptions): Promise<ThroughputResult> {
  const log = o.log ?? (() => {});
  const { engine, proxy } = benchEngines(o.frames);
  const common = { config: o.config, questionSet: o.questionSet, progress: o.progress };
  // Warm-up, not counted: the addon's load and first-call set-up, the first clip's files in the page cache.
  for (const e of [...o.devices.map((device) => ({ ...engine, device })), proxy]) {
    await answerClips(o.clips.slice(0, 1), { ...common, questions: 'all', engine: e, workers: 1, progress: false });
  }
  const runs: RunFigures[] = [];
  for (const [k, workers] of o.workers.entries()) {
    const who: EngineConfig[] = [...o.devices.map((device) => ({ ...engine, device })), proxy];
    for (const e of k % 2 ? who.reverse() : who) {
      const name = e.method === 'egogeo' ? `egogeo ${e.device}` : e.method;
      log(`${name}, ${workers} worker${workers === 1 ? '' : 's'}: ${o.clips.length} clips`);
      const r = await measureRun(o.clips, { ...common, engine: e, workers, label: `${name} ×${workers}` });
      if (r.failed.length > 0) log(`${name}: ${r.failed.length} clip${r.failed.length === 1 ? '' : 's'} failed, not counted (e.g. ${r.failed[0].clip_id}: ${r.failed[0].reason})`);
      runs.push(r);
    }
  }
  return { engine, proxy, runs, ratios: ratios(runs), scaling: scaling(runs) };
}

const proxyRun = (runs: readonly RunFigures[], workers: number) => runs.find((r) => r.method !== 'egogeo' && r.workers === workers);

/** egogeo over the proxy at each device and worker count both were measured at (with answered clips). */
export function ratios(runs: readonly RunFigures[]): Ratio[] {
  const out: Ratio[] = [];
  for (const e of runs) {
    const p = proxyRun(runs, e.workers);
    if (e.method !== 'egogeo' || !p || e.clips === 0 || p.clips === 0) continue;
    out.push({ device: e.device!, workers: e.workers, speedup: e.clipsPerSecond / p.clipsPerSecond, coreSecondsSpeedup: p.coreSecondsPerClip / e.coreSecondsPerClip });
  }
  return out;
}

/** Each method's (and device's) clips/s against the fewest workers measured, with linear scaling from there. */
export function scaling(runs: readonly RunFigures[]): Scaling[] {
  const groups = new Map<string, RunFigures[]>();
  for (const r of runs) {
    const key = `${r.method}\0${r.device}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((g) => {
    const sorted = [...g].sort((a, b) => a.workers - b.workers);
    const base = sorted[0];
    return {
      method: base.method,
      device: base.device,
      points: sorted.map((r) => ({
        workers: r.workers,
        clipsPerSecond: r.clipsPerSecond,
        speedup: base.clipsPerSecond > 0 ? r.clipsPerSecond / base.clipsPerSecond : 0,
        ideal: (base.clipsPerSecond * r.workers) / base.workers,
      })),
    };
  });
}
