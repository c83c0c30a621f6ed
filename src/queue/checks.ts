/**
 * What the coordinator and a worker check about each other, so that a queued run never mixes two
 * engines or two copies of a dataset in one output:
 *
 * - the engine: each job names the run's engine (the run record's engine id: egogeo version, addon
 *   build, device); a worker with another refuses the job, and each answer names the worker's
 *   engine, which the coordinator compares again (an older worker that checks nothing is caught there);
 * - the clip's input files: each job carries a digest of the files the clip reads (its arrays,
 *   video and frames, by content, as the coordinator sees them); the worker digests the same files
 *   after its `--path-map` and refuses the clip when any differs (an edited copy of the dataset),
 *   and its answer names its digest, which the coordinator compares.
 *
 * A refused clip fails for good (it goes to the errors file, naming both sides); the rerun after the
 * workers are fixed redoes it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Clip } from '../core/clip.js';
import { type EngineVersion, engineLine, engineVersion } from '../native/index.js';
import type { ClipOutput } from '../run/task.js';
import type { Device } from '../native/index.js';

/** The parts of an engine id a queued run holds equal: the build and the device (a worker's GPU name and library are its own). */
export type QueueEngine = Pick<EngineVersion, 'egogeo' | 'addon' | 'device'>;

/** This process's engine for a task on `device` (the run record's engine id, without the GPU's own details). */
export function queueEngine(device: Device): QueueEngine {
  const e = engineVersion('cpu');
  return { egogeo: e.egogeo, addon: e.addon, device };
}

const sameEngine = (a: QueueEngine, b: QueueEngine) => a.egogeo === b.egogeo && a.addon === b.addon && (a.device ?? 'cpu') === (b.device ?? 'cpu');
const engineText = (e: QueueEngine) => engineLine({ ...e, device: e.device ?? 'cpu' }).replace(/, gpu .*$/, ', gpu');

/** Why a worker with engine `mine` must not answer a job of a run with engine `run` (null: it may). */
export function engineRefusal(run: QueueEngine, mine: QueueEngine): string | null {
  return sameEngine(run, mine) ? null : `this worker's engine (${engineText(mine)}) is not the run's (${engineText(run)}); run the same egogeo build on the coordinator and every worker`;
}

/** Per input file of a clip (`arrays`, `video`, `frame N`): its path and the first 16 hex digits of its content's SHA-256 (null: unreadable here). */
export type InputDigest = Record<string, { path: string; sha: string | null }>;

/** The clip's input files by content (a file read once per process however many clips name it). */
export function inputDigest(c: Pick<Clip, 'arrays' | 'video' | 'frames'>, cache = new Map<string, string | null>()): InputDigest {
  const files: [string, string][] = [];
  if (c.arrays) files.push(['arrays', c.arrays]);
  if (c.video) files.push(['video', c.video]);
  (c.frames ?? []).forEach((f, i) => {
    if (typeof f === 'string') files.push([`frame ${i}`, f]);
    else if (f && typeof f === 'object' && 'video' in f) files.push([`frame ${i}`, f.video]);
  });
  const out: InputDigest = {};
  for (const [role, path] of files) {
    if (!cache.has(path)) {
      let sha: string | null = null;
      try {
        sha = createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 16);
      } catch {
        /* unreadable here: not compared */
      }
      cache.set(path, sha);
    }
    out[role] = { path, sha: cache.get(path)! };
  }
  return out;
}

/** The first input whose content differs between the coordinator's digest and this machine's (null: none; unreadable on either side: not compared). */
export function inputsRefusal(run: InputDigest, mine: InputDigest): string | null {
  for (const [role, r] of Object.entries(run)) {
    const m = mine[role];
    if (!m) return `its ${role} is not among this machine's files of the clip (another dataset?)`;
    if (r.sha !== null && m.sha !== null && r.sha !== m.sha) {
      return `its ${role} ${m.path} differs from the coordinator's ${r.path} (sha256 ${m.sha}… here, ${r.sha}… there); --path-map must lead to the same dataset`;
    }
  }
  return null;
}

/** A worker's answer: the clip's output, the engine that computed it and the digest of the files it read. */
export interface QueueAnswer extends ClipOutput {
  engine: QueueEngine;
  inputs: InputDigest;
}

/** Why the coordinator does not use an answer (null: it does). */
export function answerRefusal(a: Partial<QueueAnswer>, run: { engine: QueueEngine; inputs?: InputDigest }): string | null {
  if (!a.engine || typeof a.engine !== 'object') return `the worker's answer names no engine (another egogeo version?); run the same egogeo build on the coordinator and every worker`;
  if (!sameEngine(run.engine, a.engine)) return `answered by another engine (${engineText(a.engine)}; this run's: ${engineText(run.engine)}): not used; run the same egogeo build on every worker, then rerun to redo it`;
  if (run.inputs) {
    const r = inputsRefusal(run.inputs, a.inputs ?? {});
    if (r) return `answered from other input files: ${r}`;
  }
  return null;
}
