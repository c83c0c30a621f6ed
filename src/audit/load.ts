/**
 * audit/load — reads the clip lists the audits run on, every error one line naming the file, line
  * and field. May import: core/, io/, grade/, datasets/, oracle/ (KITTI windows' labels).
 *
 * Accepted (several may be given, comma-separated, and are concatenated):
 * - a JSON list like the benchmark's `selected_clips.json`: `[{id, source, answers{question: label}, …}]`
 *   (every key but `answers` is a field);
 * - EgoDyn-Bench as published (its root: selected_clips.json with the parts' clips_index.jsonl fields);
 * - a benchmark folder holding `qa.jsonl` (`{clip_id, question_id, answer}` per line) and
 *   `clips_index.jsonl` (`{clip_id, …}` per line: every key is a field), or the `qa.jsonl` itself
 *   (its `clips_index.jsonl` beside it). A record without `source` gets the grader's rule (clip ids
 *   starting with `clip_` are nuScenes, the rest CARLA);
 * - a KITTI sequence folder, read as `egogeo run` reads it: its benchmark windows, answered by the
 *   oracle from the poses (fields: id, source "kitti", seq).
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InputError } from '../core/errors.js';
import { oracleText, referenceSource } from '../core/prediction.js';
import { readDataset, readJsonlRecords } from '../datasets/benchmark.js';
import { groundTruthArrays } from '../datasets/groundtruth.js';
import { clipData, DEFAULT_DYNAMICS, labelClip, loadQuestions, summaryFeatures } from '../oracle/index.js';
import { detectLayout } from '../datasets/layout.js';
import { readInputText } from '../io/safety.js';
import type { AuditClip } from './shortcut.js';
import type { LabelClip } from './labels.js';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON document read whole; a parse error is one line naming the file. */
export function readJson(path: string, what: string): unknown {
  const text = readInputText(path, what);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError(`${path}: not JSON (${(e as Error).message})`);
  }
}

const label = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null);

function fromSelected(path: string): AuditClip[] {
  const data = readJson(path, 'clip list');
  if (!Array.isArray(data)) throw new InputError(`${path}: expected a JSON list of clips {id, source, answers{question_id: label}}`);
  return data.map((r, i) => {
    if (!isObj(r)) throw new InputError(`${path}: clip ${i + 1} is not an object`);
    const id = r.id ?? r.clip_id;
    if (typeof id !== 'string') throw new InputError(`${path}: clip ${i + 1} has no string "id"`);
    if (!isObj(r.answers)) throw new InputError(`${path}: clip ${i + 1} (${id}) has no "answers" object`);
    const answers: Record<string, string> = {};
    for (const [q, v] of Object.entries(r.answers)) {
      const y = label(v);
      if (y === null) throw new InputError(`${path}: clip ${i + 1} (${id}) answers.${q} is not a label`);
      answers[q] = y;
    }
    const fields: Record<string, unknown> = { ...r };
    delete fields.answers;
    if (fields.source === undefined) fields.source = referenceSource(id);
    return { id, answers, fields };
  });
}

function fromQa(qaPath: string, indexPath: string): AuditClip[] {
  const index = new Map<string, Record<string, unknown>>();
  if (existsSync(indexPath)) {
    for (const { line, rec } of readJsonlRecords(indexPath)) {
      const id = rec.clip_id ?? rec.id;
      if (typeof id !== 'string') throw new InputError(`${indexPath}:${line}: no string "clip_id"`);
      index.set(id, rec);
    }
  }
  const clips = new Map<string, { answers: Record<string, string> }>();
  for (const { line, rec } of readJsonlRecords(qaPath)) {
    const id = rec.clip_id;
    if (typeof id !== 'string') throw new InputError(`${qaPath}:${line}: no string "clip_id"`);
    if (typeof rec.question_id !== 'string') throw new InputError(`${qaPath}:${line}: no string "question_id"`);
    const y = label(rec.answer ?? rec.oracle_label);
    if (y === null) throw new InputError(`${qaPath}:${line}: "answer" is not a label`);
    let c = clips.get(id);
    if (!c) clips.set(id, (c = { answers: {} }));
    c.answers[rec.question_id] = y;
  }
  return [...clips].map(([id, c]) => {
    const fields: Record<string, unknown> = { id, ...(index.get(id) ?? {}) };
    if (fields.source === undefined) fields.source = referenceSource(id);
    return { id, answers: c.answers, fields };
  });
}

/**
 * EgoDyn-Bench as published: its `selected_clips.json` (ids, sources, answers, features), each clip
 * with the fields of its record in `nuscenes_clips/` or `carla_clips/clips_index.jsonl` (CARLA's
 * `behavior`, `scene`, …) beneath the list's own.
 */
function fromPublished(root: string): AuditClip[] {
  const list = join(root, 'selected_clips.json');
  if (!existsSync(list)) throw new InputError(`${root}: a published root without selected_clips.json (its clips and answers)`);
  const records = new Map<string, Record<string, unknown>>();
  for (const part of ['nuscenes_clips', 'carla_clips']) {
    const index = join(root, part, 'clips_index.jsonl');
    if (!existsSync(index)) continue;
    for (const { rec } of readJsonlRecords(index)) if (typeof rec.clip_id === 'string') records.set(rec.clip_id, rec);
  }
  return fromSelected(list).map((c) => ({ ...c, fields: { ...(records.get(c.id) ?? {}), ...c.fields } }));
}

/** A KITTI sequence's benchmark windows, each answered by the oracle from its poses. */
function fromKitti(dir: string): AuditClip[] {
  const questions = loadQuestions();
  return readDataset(dir).clips.flatMap((c) => {
    const g = groundTruthArrays(c);
    if (!g) return [];
    const labels = labelClip(clipData(g.arrays, summaryFeatures(g.arrays, `clip '${c.id}'`)), questions);
    return [{ id: c.id, answers: { ...labels }, fields: { id: c.id, source: c.source, seq: c.id.replace(/^kitti(\w+?)_\d+$/, '$1') } }];
  });
}

/** The clips of one path (see the module comment). */
export function loadAuditPath(path: string): AuditClip[] {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    /* readInputText names a missing file */
  }
  const layout = isDir ? detectLayout(path) : null;
  if (layout === 'published') return fromPublished(path);
  if (layout === 'kitti') return fromKitti(path);
  if (isDir) {
    const qa = join(path, 'qa.jsonl');
    if (!existsSync(qa)) throw new InputError(`${path}: a folder without qa.jsonl (expected the benchmark layout: qa.jsonl + clips_index.jsonl)`);
    return fromQa(qa, join(path, 'clips_index.jsonl'));
  }
  if (path.endsWith('.jsonl')) return fromQa(path, join(dirname(path), 'clips_index.jsonl'));
  return fromSelected(path);
}

/** The clips of every path, concatenated; a clip id given twice is an error. */
export function loadAuditClips(paths: readonly string[]): AuditClip[] {
  if (paths.length === 0) throw new InputError('no clips given: expected a file or folder');
  const out: AuditClip[] = [];
  const seen = new Map<string, string>();
  for (const p of paths) {
    for (const c of loadAuditPath(p)) {
      const prev = seen.get(c.id);
      if (prev !== undefined) throw new InputError(`${p}: clip ${c.id} is also in ${prev}`);
      seen.set(c.id, p);
      out.push(c);
    }
  }
  if (out.length === 0) throw new InputError(`${paths.join(', ')}: no clips`);
  return out;
}

/**
 * `audit labels --dataset DIR`: every clip with ground truth, read as `egogeo run` and `oracle`
 * read the folder (EgoDyn-Bench as published, the benchmark layout, a KITTI sequence): its poses at
 * its own frames where the dataset has them (KITTI), else on the oracle's grid (its npz), and its published
 * labels (the QA answers; none for a KITTI sequence, whose labels are the oracle's). `skipped`
 * counts clips without ground truth.
 */
export function loadLabelClips(dir: string): { clips: LabelClip[]; skipped: number } {
  const clips: LabelClip[] = [];
  let skipped = 0;
  for (const c of readDataset(dir, { needFrames: false }).clips) {
    const g = c.problem ? null : groundTruthArrays(c);
    if (!g) {
      skipped++;
      continue;
    }
    const a = g.arrays;
    const published: Record<string, string> = {};
    for (const q of c.qa) {
      const y = oracleText(q.answer);
      if (y !== null) published[q.question_id] = y.toLowerCase();
    }
    // The poses at the frames where the dataset has them (as the oracle labelled them: over the benchmark's 3 s), else the npz's grid.
    const traj = c.groundTruth ? { ...c.groundTruth, id: c.id } : { id: c.id, t: a.timestamps, x: a.x, y: a.y, yaw: a.yaw };
    clips.push({ id: c.id, source: c.source, traj, ...(c.groundTruth ? { duration: DEFAULT_DYNAMICS.duration } : {}), published: c.qa.length ? published : null });
  }
  if (clips.length === 0) throw new InputError(`${dir}: no clip with ground truth (no arrays/<clip>.npz, no KITTI poses)`);
  return { clips, skipped };
}
