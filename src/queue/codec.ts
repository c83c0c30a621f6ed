/**
 * A clip task as a BullMQ job and back: job ids, the job's data (the ClipTask without its shared
 * cancel flag, typed arrays tagged so they survive JSON exactly, the question file's text so a
 * worker needs no copy of it) and `--path-map` on the worker's side.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClipTask } from '../run/task.js';
import type { InputDigest, QueueEngine } from './checks.js';

/** Bumped when the job data changes shape; a worker refuses jobs of another version. */
export const JOB_VERSION = 2;

export interface ClipJobData {
  v: number;
  /** The run this clip belongs to (ClipExecutorContext.runId). */
  run: string;
  /** The ClipTask, JSON with typed arrays tagged (`encodeTask`). */
  task: string;
  /** The question file's content and its sha256 (the worker writes it once to its temp folder). */
  questions: { sha256: string; text: string };
  /** The run's engine and the clip's input files by content, which the worker's must equal (checks.ts). */
  engine: QueueEngine;
  inputs: InputDigest;
}

/** `<runId>.<clip id, URI-encoded>`: the same clip of the same run is one job however often it is enqueued. */
export function jobId(runId: string, clipId: string): string {
  return `${runId}.${encodeURIComponent(clipId)}`;
}

export function encodeTask(t: ClipTask): string {
  // The question file travels once per job as text (`questions`), not as a parsed copy per task.
  const { cancel: _cancel, questionsDoc: _doc, ...rest } = t;
  return JSON.stringify(rest, (_k, v: unknown) => (v instanceof Float64Array ? { $f64: Array.from(v) } : v));
}

export function decodeTask(s: string): ClipTask {
  return JSON.parse(s, (_k, v: unknown) => (v && typeof v === 'object' && Array.isArray((v as { $f64?: unknown }).$f64) ? Float64Array.from((v as { $f64: number[] }).$f64) : v)) as ClipTask;
}

export interface PathMap {
  from: string;
  to: string;
}

/** A path under the first matching FROM rewritten under its TO (whole path components only). */
export function mapPath(p: string, maps: readonly PathMap[]): string {
  for (const m of maps) {
    if (p === m.from) return m.to;
    const prefix = m.from === '/' ? '/' : `${m.from}/`;
    if (p.startsWith(prefix)) return `${m.to === '/' ? '' : m.to}/${p.slice(prefix.length)}`;
  }
  return p;
}

/** The task's file paths (frames, video, arrays) mapped for this machine. */
export function mapTask(t: ClipTask, maps: readonly PathMap[]): ClipTask {
  if (maps.length === 0) return t;
  const c = t.clip;
  return {
    ...t,
    clip: {
      ...c,
      ...(c.frames ? { frames: c.frames.map((f) => (typeof f === 'string' ? mapPath(f, maps) : 'video' in f ? { ...f, video: mapPath(f.video, maps) } : f)) } : {}),
      ...(c.video ? { video: mapPath(c.video, maps) } : {}),
      ...(c.arrays ? { arrays: mapPath(c.arrays, maps) } : {}),
    },
  };
}

/** The question file a job carries, written once per content to this machine's temp folder. */
export function questionFile(q: ClipJobData['questions']): string {
  if (!/^[0-9a-f]{64}$/.test(q.sha256) || createHash('sha256').update(q.text).digest('hex') !== q.sha256) throw new Error('the job\'s question file does not match its sha256');
  const dir = join(tmpdir(), 'egogeo-queue');
  const p = join(dir, `questions-${q.sha256}.yaml`);
  if (!existsSync(p)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${p}.${process.pid}.tmp`;
    writeFileSync(tmp, q.text);
    renameSync(tmp, p);
  }
  return p;
}
