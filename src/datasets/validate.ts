/**
 * A maintainer's checks of a dataset before it is published, after the reference's
 * `dataset/validation/` (clips, QA, splits) and beyond it: every finding is one line naming the
 * file, the record and what was expected. Clips are checked one at a time (their arrays read,
 * checked and dropped), so memory stays flat over thousands of clips.
 *
 * Checks, by name:
 *   record      a line that is not a JSON object, a required field missing or of the wrong type
 *   duplicate   a clip id twice in the indexes, a qa_id twice in a QA file, a (clip, question) asked twice
 *   reference   a QA item of an unknown clip or question, a clip without QA or missing questions,
 *               selected_clips.json and the indexes listing different clips
 *   answer      a QA answer outside its choices, or unlike the oracle over the clip's own arrays;
 *               selected_clips.json's answers unlike the QA's
 *   frames      frames (or the CARLA domains' videos) missing, unreadable, too few; frame_tokens
 *               and frame_paths of different lengths
 *   timestamps  the window (t_start < t_end, 3 s), frame times increasing and spanning it, array
 *               timestamps strictly increasing from 0 over it
 *   arrays      the npz missing or unreadable, a required array missing, shapes unlike (n,) / (n, 2)
 *   finite      NaN or infinity in an array or a feature
 *   features    a clip's features unlike those computed from its arrays (and selected_clips.json's)
 *   signs       conventions: yaw rate integrates to the heading change, acceleration to the
 *               speed change (braking is a speed drop), speed to the distance travelled, and the
 *               car moves along its yaw
 *
 * Arrays that fail a structural or sign check are not used for the derived checks (features,
 * answers): one fault, one line. May import: core/, io/, native/, oracle/.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { firstLine, InputError } from '../core/errors.js';
import { readNpz } from '../io/npz.js';
import { readInputText } from '../io/safety.js';
import { probeVideo } from '../native/index.js';
import { clipData, labelClip, type QuestionSet, summaryFeatures } from '../oracle/index.js';
import { savgolCoeffs } from '../oracle/savgol.js';
import type { DynamicsArrays } from '../oracle/index.js';
import { clipMedia } from './benchmark.js';
import { detectLayout, LAYOUTS_TEXT } from './layout.js';
import { CARLA_DOMAINS, type CarlaDomain } from './records.js';

export const CHECKS = ['record', 'duplicate', 'reference', 'answer', 'frames', 'timestamps', 'arrays', 'finite', 'features', 'signs'] as const;
export type Check = (typeof CHECKS)[number];

export interface Finding {
  check: Check;
  /** The file, with `:line` when the finding is about one record. */
  where: string;
  clip?: string;
  message: string;
}

export interface ValidateOptions {
  questions: QuestionSet;
  /** Published layout: the nuScenes data root holding the nuScenes clips' frames (else they are not checked). */
  nuscenesRoot?: string;
  /** Published layout: the CARLA videos checked (default: every domain's folder present). */
  carlaDomains?: readonly CarlaDomain[];
  /** The clip-by-clip checks (window, frames, videos, arrays, answers) on the first `limit` clips only; indexes, QA and selected_clips.json are read whole. */
  limit?: number;
  /** Called with each finding as it is made (the CLI prints as it goes). */
  onFinding?: (f: Finding) => void;
  /** Called after each clip. */
  onClip?: (done: number, total: number) => void;
}

export interface ValidateReport {
  dir: string;
  layout: 'published' | 'benchmark';
  clips: number;
  qa_items: number;
  frames: number;
  videos: number;
  /** How many findings of each check. */
  counts: Record<Check, number>;
  findings: Finding[];
  /** What was not checked, and why. */
  notes: string[];
}

/** Seconds of slack on window lengths and array timestamps (the reference's `timestamp_tolerance`). */
const TOL = 0.1;
/** Frame times need only cover the window to within this (frames sit at sensor times, not on its edges). */
const FRAME_TOL = 0.25;
const MIN_FRAMES = 20;
const WINDOW = 3.0;
/** The reference's `validate_dynamics_arrays` set: a missing `jerk` is a finding, not zeros. */
const REQUIRED_ARRAYS = ['timestamps', 'position', 'yaw', 'speed', 'accel', 'yaw_rate', 'jerk'] as const;
const REQUIRED_FEATURES = ['max_speed', 'mean_speed', 'min_accel', 'max_abs_yaw_rate', 'max_abs_jerk', 'max_lateral_accel', 'total_heading_change'] as const;

interface Line {
  rec: Record<string, unknown>;
  where: string;
}

interface Part {
  source: string;
  dir: string;
  /** Frames' paths are relative to this; null: not checked. */
  frameRoot: string | null;
  /** CARLA: the domain video folders present. */
  videoDirs: string[];
}

type Emit = (check: Check, where: string, message: string, clip?: string) => void;

/** JSONL lines as records; bad lines become `record` findings. */
function jsonl(path: string, emit: Emit): Line[] {
  const out: Line[] = [];
  const lines = readInputText(path, 'JSONL file').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const s = lines[i].trim();
    if (!s) continue;
    const where = `${path}:${i + 1}`;
    try {
      const rec = JSON.parse(s);
      if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) emit('record', where, 'expected a JSON object');
      else out.push({ rec, where });
    } catch (e) {
      emit('record', where, `invalid JSON (${(e as Error).message.split('\n')[0].slice(0, 100)})`);
    }
  }
  return out;
}

/**
 * Whether an image file is readable: present, not empty, with its format's magic number and (JPEG)
 * end marker. A file the system will not read (permissions, a folder) is a problem, not an error.
 */
export function imageProblem(path: string): string | null {
  try {
    if (!existsSync(path)) return 'missing';
    const size = statSync(path).size;
    if (size < 8) return 'empty or truncated';
    const fd = openSync(path, 'r');
    try {
      const head = Buffer.alloc(8), tail = Buffer.alloc(2);
      readSync(fd, head, 0, 8, 0);
      readSync(fd, tail, 0, 2, size - 2);
      if (head[0] === 0xff && head[1] === 0xd8) return tail[0] === 0xff && tail[1] === 0xd9 ? null : 'JPEG without its end marker (truncated)';
      if (head.readUInt32BE(0) === 0x89504e47) return null;
      return 'not a JPEG or PNG';
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    return `unreadable: ${(e as NodeJS.ErrnoException).code ?? firstLine(e)}`;
  }
}

const isNum = (v: unknown): v is number => typeof v === 'number';
const close = (a: number, b: number, rel = 1e-6, abs = 1e-9): boolean => Math.abs(a - b) <= abs + rel * Math.max(Math.abs(a), Math.abs(b));

/** Dynamics arrays from an npz, or the findings that keep them from being used. */
function readArrays(path: string, where: string, emit: Emit, clip: string): DynamicsArrays | null {
  let a: ReturnType<typeof readNpz>;
  try {
    a = readNpz(path);
  } catch (e) {
    const msg = (e as Error).message.split('\n')[0];
    emit('arrays', where, `${path}: unreadable (${(msg.startsWith(`${path}: `) ? msg.slice(path.length + 2) : msg).slice(0, 100)})`, clip);
    return null;
  }
  const missing = REQUIRED_ARRAYS.filter((k) => !a[k]);
  if (missing.length) {
    emit('arrays', where, `${path}: no array ${missing.map((k) => `'${k}'`).join(', ')}`, clip);
    return null;
  }
  const n = a.timestamps.data.length;
  const bad: string[] = [];
  for (const k of REQUIRED_ARRAYS) {
    const s = a[k].shape;
    const ok = k === 'position' ? s.length === 2 && s[0] === n && s[1] >= 2 : s.length === 1 && s[0] === n;
    if (!ok) bad.push(`'${k}' has shape (${s.join(', ')}), expected (${n}${k === 'position' ? ', 2' : ''},)`.replace(', 2,)', ', 2)'));
  }
  if (n < 2) bad.push(`${n} samples`);
  if (bad.length) {
    emit('arrays', where, `${path}: ${bad.join('; ')}`, clip);
    return null;
  }
  const nonFinite = REQUIRED_ARRAYS.filter((k) => {
    const d = a[k].data;
    for (let i = 0; i < d.length; i++) if (!Number.isFinite(d[i])) return true;
    return false;
  });
  if (nonFinite.length) {
    emit('finite', where, `${path}: NaN or infinity in ${nonFinite.map((k) => `'${k}'`).join(', ')}`, clip);
    return null;
  }
  const w = a.position.shape[1];
  const pos = a.position.data;
  return {
    timestamps: Float64Array.from(a.timestamps.data),
    x: Float64Array.from({ length: n }, (_, i) => pos[i * w]),
    y: Float64Array.from({ length: n }, (_, i) => pos[i * w + 1]),
    yaw: Float64Array.from(a.yaw.data),
    speed: Float64Array.from(a.speed.data),
    accel: Float64Array.from(a.accel.data),
    yaw_rate: Float64Array.from(a.yaw_rate.data),
    jerk: Float64Array.from(a.jerk.data),
  };
}

/** ∫ v dt by the trapezoid rule. */
function integral(t: Float64Array, v: Float64Array): number {
  let s = 0;
  for (let i = 1; i < t.length; i++) s += 0.5 * (v[i] + v[i - 1]) * (t[i] - t[i - 1]);
  return s;
}

/**
 * The sign and consistency conventions (SPEC.md: x forward, y left, yaw counter-clockwise, speed ≥ 0):
 * yaw rate integrates to the heading change, acceleration to the speed change, speed to the path
 * length, and the car moves along its yaw. Returns the first violation, or null.
 */
export function signProblem(a: DynamicsArrays): string | null {
  const t = a.timestamps, n = t.length;
  const floor = speedFloor(a);
  for (let i = 0; i < n; i++) {
    if (a.speed[i] < floor[i]) return `speed is negative (${a.speed[i].toFixed(3)} m/s at ${t[i].toFixed(2)} s${floor[i] < -1e-6 ? `, below the ${floor[i].toFixed(3)} m/s its smoothing allows` : ''})`;
  }
  const dYaw = a.yaw[n - 1] - a.yaw[0], iYaw = integral(t, a.yaw_rate);
  if (Math.abs(dYaw) > 0.05 && Math.abs(iYaw) > 0.05 && Math.sign(dYaw) !== Math.sign(iYaw)) {
    return `yaw_rate integrates to ${iYaw.toFixed(3)} rad but yaw changes by ${dYaw.toFixed(3)} rad (opposite signs: is yaw_rate's sign flipped?)`;
  }
  if (Math.abs(dYaw - iYaw) > 0.1 + 0.25 * Math.abs(dYaw)) return `yaw_rate integrates to ${iYaw.toFixed(3)} rad but yaw changes by ${dYaw.toFixed(3)} rad`;
  const dV = a.speed[n - 1] - a.speed[0], iA = integral(t, a.accel);
  if (Math.abs(dV) > 0.5 && Math.abs(iA) > 0.5 && Math.sign(dV) !== Math.sign(iA)) {
    return `accel integrates to ${iA.toFixed(2)} m/s but speed changes by ${dV.toFixed(2)} m/s (opposite signs: is braking positive?)`;
  }
  if (Math.abs(dV - iA) > 0.5 + 0.25 * Math.abs(dV)) return `accel integrates to ${iA.toFixed(2)} m/s but speed changes by ${dV.toFixed(2)} m/s`;
  let path = 0, along = 0;
  for (let i = 1; i < n; i++) {
    const dx = a.x[i] - a.x[i - 1], dy = a.y[i] - a.y[i - 1];
    path += Math.hypot(dx, dy);
    const h = 0.5 * (a.yaw[i] + a.yaw[i - 1]);
    along += dx * Math.cos(h) + dy * Math.sin(h);
  }
  const iV = integral(t, a.speed);
  if (Math.abs(path - iV) > 0.5 + 0.1 * Math.max(path, iV)) return `speed integrates to ${iV.toFixed(2)} m but the positions travel ${path.toFixed(2)} m`;
  if (path > 2 && along < 0.5 * path) return `the positions move ${along < 0 ? 'against' : 'across'} the yaw (${along.toFixed(2)} m along it of ${path.toFixed(2)} m travelled)`;
  return null;
}

/**
 * How far below zero each speed sample may be. The oracle's speed is |Δposition| / Δt (never
 * negative) smoothed by the Savitzky–Golay 5/2 kernel, whose outer weights are −3/35: a sample can
 * go down to −(3/35)·(v[i−2] + v[i+2]) of the unsmoothed speeds (at most 6/35 of the local peak;
 * a stop next to motion gives −0.002 m/s). Those are recomputed from the positions, so arrays
 * whose speed is negative by more than its own smoothing explains are still caught.
 */
function speedFloor(a: DynamicsArrays): Float64Array {
  const t = a.timestamps, n = t.length;
  const raw = new Float64Array(n);
  const d = (i: number, j: number) => Math.hypot(a.x[j] - a.x[i], a.y[j] - a.y[i]) / (t[j] - t[i]);
  for (let i = 0; i < n; i++) raw[i] = n < 2 ? 0 : i === 0 ? d(0, 1) : i === n - 1 ? d(n - 2, n - 1) : d(i - 1, i + 1);
  const c = savgolCoeffs(5, 2);
  const outer = -Math.min(0, c[0]) - Math.min(0, c[4]);
  const last = n - 1;
  const at = (j: number) => raw[j < 0 ? Math.min(-j, last) : j > last ? Math.max(2 * last - j, 0) : j];
  return Float64Array.from(raw, (_, i) => -(outer / 2) * (at(i - 2) + at(i + 2)) * 1.001 - 1e-6);
}

/** A QA answer as the oracle writes its labels: Python's str(), lower case. */
function answerText(v: unknown): string {
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return String(v).toLowerCase();
}

/** One clip of an index, where its record is and the part it belongs to. */
interface IndexedClip {
  line: Line;
  part: Part;
  id: string;
}

/** What the clip-by-clip checks read besides the clip: the QA items by clip, selected_clips.json's entries, the question ids. */
interface ClipContext {
  o: ValidateOptions;
  emit: Emit;
  qaOf: ReadonlyMap<string, Line[]>;
  selected: ReadonlyMap<string, { entry: Record<string, unknown>; where: string }>;
  qids: readonly string[];
  counted: { frames: number; videos: number };
}

/**
 * Validates a dataset folder: EgoDyn-Bench as published, or the benchmark layout (clips_index.jsonl).
 * Every index first (ids, duplicates), then the QA (so references resolve), then selected_clips.json,
 * then clip by clip.
 */
export function validateDataset(dir: string, o: ValidateOptions): ValidateReport {
  if (!existsSync(dir)) throw new InputError(`${dir}: no such dataset folder`);
  const counts = Object.fromEntries(CHECKS.map((c) => [c, 0])) as Record<Check, number>;
  const findings: Finding[] = [];
  const notes: string[] = [];
  const emit: Emit = (check, where, message, clip) => {
    const f: Finding = { check, where, message, ...(clip !== undefined ? { clip } : {}) };
    counts[check]++;
    findings.push(f);
    o.onFinding?.(f);
  };
  const { published, parts } = datasetParts(dir, o, notes);
  const { clips, clipAt } = readIndexes(parts, emit);
  const { qaOf, qaItems } = readQa(parts, clipAt, emit, notes);
  const selected = published ? readSelected(dir, clips, clipAt, emit) : new Map();
  const ctx: ClipContext = { o, emit, qaOf, selected, qids: o.questions.questions.map((q) => q.id), counted: { frames: 0, videos: 0 } };
  const checked = clips.slice(0, o.limit);
  if (checked.length < clips.length) notes.push(`clip-by-clip checks on the first ${checked.length} of ${clips.length} clips (--limit)`);
  checked.forEach((c, k) => {
    checkClip(c, ctx);
    o.onClip?.(k + 1, checked.length);
  });
  const { frames, videos } = ctx.counted;
  return { dir, layout: published ? 'published' : 'benchmark', clips: clips.length, qa_items: qaItems, frames, videos, counts, findings, notes };
}

/** The parts of a dataset folder: the published root's nuScenes and CARLA folders, or the folder itself. */
function datasetParts(dir: string, o: ValidateOptions, notes: string[]): { published: boolean; parts: Part[] } {
  const layout = detectLayout(dir);
  const published = layout === 'published';
  const parts: Part[] = [];
  if (published) {
    const videoDirs = (o.carlaDomains ?? CARLA_DOMAINS).map((d) => join(dir, `carla_videos_${d}`)).filter((d) => existsSync(d));
    if (existsSync(join(dir, 'nuscenes_clips', 'clips_index.jsonl'))) {
      parts.push({ source: 'nuscenes', dir: join(dir, 'nuscenes_clips'), frameRoot: o.nuscenesRoot ?? null, videoDirs: [] });
      if (!o.nuscenesRoot) notes.push('nuScenes frames not checked: give --nuscenes-root');
    }
    if (existsSync(join(dir, 'carla_clips', 'clips_index.jsonl'))) {
      parts.push({ source: 'carla', dir: join(dir, 'carla_clips'), frameRoot: null, videoDirs });
      if (videoDirs.length === 0) notes.push(`CARLA videos not checked: no carla_videos_{${CARLA_DOMAINS.join(',')}}/ in ${dir}`);
    }
  } else if (layout === 'benchmark') {
    parts.push({ source: '', dir, frameRoot: dir, videoDirs: [] });
  } else {
    throw new InputError(layout === 'kitti' ? `${dir}: a KITTI sequence has no records to validate (expected EgoDyn-Bench as published or the benchmark layout)` : `${dir}: not a dataset folder: expected ${LAYOUTS_TEXT}`);
  }
  return { published, parts };
}

/** Every index's clips (ids checked, duplicates found), in order. */
function readIndexes(parts: readonly Part[], emit: Emit): { clips: IndexedClip[]; clipAt: Map<string, string> } {
  const clips: IndexedClip[] = [];
  const clipAt = new Map<string, string>();
  for (const p of parts) {
    for (const line of jsonl(join(p.dir, 'clips_index.jsonl'), emit)) {
      const id = line.rec.clip_id;
      if (typeof id !== 'string' || !id) {
        emit('record', line.where, "field 'clip_id' must be a non-empty string");
        continue;
      }
      if (clipAt.has(id)) {
        emit('duplicate', line.where, `clip '${id}' is also at ${clipAt.get(id)}`, id);
        continue;
      }
      clipAt.set(id, line.where);
      clips.push({ line, part: p, id });
    }
  }
  return { clips, clipAt };
}

/** Every part's QA items by clip (fields, duplicate qa_ids, references to the indexes). */
function readQa(parts: readonly Part[], clipAt: ReadonlyMap<string, string>, emit: Emit, notes: string[]): { qaOf: Map<string, Line[]>; qaItems: number } {
  const qaOf = new Map<string, Line[]>();
  let qaItems = 0;
  for (const p of parts) {
    // qa_ids are unique per QA file: the published nuScenes and CARLA files both count from qa_00000000.
    const qaIds = new Map<string, string>();
    const qaPath = join(p.dir, 'qa.jsonl');
    if (!existsSync(qaPath)) {
      notes.push(`${qaPath}: no QA file; answers not checked`);
      continue;
    }
    for (const line of jsonl(qaPath, emit)) {
      qaItems++;
      const r = line.rec;
      const missing = ['qa_id', 'clip_id', 'question_id', 'answer'].filter((f) => r[f] === undefined || r[f] === null);
      if (missing.length) {
        emit('record', line.where, `missing field${missing.length > 1 ? 's' : ''} ${missing.map((f) => `'${f}'`).join(', ')}`);
        continue;
      }
      const qaId = String(r.qa_id), clip = String(r.clip_id);
      if (qaIds.has(qaId)) emit('duplicate', line.where, `qa_id '${qaId}' is also at ${qaIds.get(qaId)}`, clip);
      else qaIds.set(qaId, line.where);
      if (!clipAt.has(clip)) {
        emit('reference', line.where, `clip '${clip}' is in no clips_index.jsonl`, clip);
        continue;
      }
      let list = qaOf.get(clip);
      if (!list) qaOf.set(clip, (list = []));
      list.push(line);
    }
  }
  return { qaOf, qaItems };
}

/** selected_clips.json (published): the same clips as the indexes, its answers and features theirs. */
function readSelected(dir: string, clips: readonly IndexedClip[], clipAt: ReadonlyMap<string, string>, emit: Emit): Map<string, { entry: Record<string, unknown>; where: string }> {
  const selected = new Map<string, { entry: Record<string, unknown>; where: string }>();
  const selPath = join(dir, 'selected_clips.json');
  if (existsSync(selPath)) {
    let doc: unknown;
    try {
      doc = JSON.parse(readInputText(selPath, 'selected_clips.json'));
    } catch (e) {
      emit('record', selPath, `invalid JSON (${(e as Error).message.split('\n')[0].slice(0, 100)})`);
    }
    if (doc !== undefined && !Array.isArray(doc)) emit('record', selPath, 'expected a JSON list of {id, source, answers, features}');
    (Array.isArray(doc) ? doc : []).forEach((e, i) => {
      const where = `${selPath}: entry ${i}`;
      const id = (e as { id?: unknown })?.id;
      if (typeof id !== 'string' || !id) return emit('record', where, "no string 'id'");
      if (selected.has(id)) return emit('duplicate', where, `clip '${id}' is also ${selected.get(id)!.where.split(': ')[1]}`, id);
      selected.set(id, { entry: e as Record<string, unknown>, where });
      if (!clipAt.has(id)) emit('reference', where, `clip '${id}' is in no clips_index.jsonl`, id);
    });
    for (const c of clips) if (!selected.has(c.id)) emit('reference', c.line.where, `clip '${c.id}' is not in selected_clips.json`, c.id);
  }
  return selected;
}

/** One clip's checks, in order: its window, frames, arrays, features, QA items. */
function checkClip(c: IndexedClip, ctx: ClipContext): void {
  const duration = checkWindow(c, ctx.emit);
  checkFrames(c, duration, ctx);
  const { arrays, computed } = checkFeatures(c, checkArrays(c, duration, ctx.emit), ctx);
  checkClipQa(c, arrays, computed, ctx);
}

/** The record's window (t_start, t_end): its duration, WINDOW when it states none. */
function checkWindow(c: IndexedClip, emit: Emit): number {
  const { rec, where } = c.line;
  const id = c.id;
  const t0 = rec.t_start, t1 = rec.t_end;
  let duration = WINDOW;
  if (isNum(t0) && isNum(t1)) {
    duration = t1 - t0;
    if (!(t1 > t0)) emit('timestamps', where, `t_end (${t1}) is not after t_start (${t0})`, id);
    else if (Math.abs(duration - WINDOW) > TOL) emit('timestamps', where, `window of ${duration.toFixed(3)} s, expected ${WINDOW} s`, id);
  } else if (isNum(t1) && t0 === undefined) {
    duration = t1; // CARLA records: t_end only, times from 0
  }
  return duration;
}

/** Frames: files (benchmark, nuScenes), a video (benchmark) or the domains' videos (CARLA), and their times against the window. */
function checkFrames(c: IndexedClip, duration: number, ctx: ClipContext): void {
  const { rec, where } = c.line;
  const { emit } = ctx;
  const id = c.id, t0 = rec.t_start;
  const checkVideo = (v: string, tokens?: unknown) => {
    ctx.counted.videos++;
    if (!existsSync(v)) return emit('frames', where, `${v}: missing`, id);
    try {
      const info = probeVideo(v);
      const span = (info.frames - 1) / (typeof rec.fps === 'number' && rec.fps > 0 ? rec.fps : info.fps || 10);
      if (info.frames < MIN_FRAMES) emit('frames', where, `${v}: ${info.frames} frames, expected at least ${MIN_FRAMES}`, id);
      else if (Array.isArray(tokens) && tokens.length > 0 && tokens.length !== info.frames) emit('frames', where, `${tokens.length} frame_tokens but ${v} has ${info.frames} frames`, id);
      else if (Math.abs(span - duration) > FRAME_TOL) emit('timestamps', where, `${v}: frames span ${span.toFixed(2)} s of a ${duration.toFixed(3)} s window`, id);
    } catch (e) {
      emit('frames', where, `${v}: unreadable (${firstLine(e).slice(0, 100)})`, id);
    }
  };
  let paths = rec.frame_paths;
  const tokens = rec.frame_tokens;
  // A benchmark-layout record's frames as `run` reads them (one place: clipMedia): files or a video.
  let video: string | null = null;
  if (c.part.source === '') {
    try {
      const media = clipMedia(c.part.dir, rec, id, where);
      if ('video' in media) video = media.video;
    } catch (e) {
      emit('record', where, firstLine(e).replace(`${where}: `, ''), id);
      paths = undefined;
    }
  }
  if (video !== null) checkVideo(video, tokens);
  else if (Array.isArray(paths)) {
    if (Array.isArray(tokens) && tokens.length !== paths.length) emit('frames', where, `${tokens.length} frame_tokens but ${paths.length} frame_paths`, id);
    if (paths.length < MIN_FRAMES) emit('frames', where, `${paths.length} frames, expected at least ${MIN_FRAMES}`, id);
    if (c.part.frameRoot !== null) {
      const bad: string[] = [];
      for (const p of paths) {
        ctx.counted.frames++;
        const problem = typeof p === 'string' && p ? imageProblem(p.startsWith('/') ? p : join(c.part.frameRoot, p)) : 'not a path';
        if (problem) bad.push(`${p} (${problem})`);
      }
      if (bad.length) emit('frames', where, `${bad.length} of ${paths.length} frames unreadable: ${bad.slice(0, 2).join(', ')}${bad.length > 2 ? ', …' : ''}`, id);
    }
    // Frame times: the record's, else nuScenes file names' microseconds.
    let ts: number[] | null = Array.isArray(rec.frame_timestamps) ? (rec.frame_timestamps as unknown[]).map(Number) : null;
    if (!ts && paths.every((p) => typeof p === 'string' && /__\d{10,}\.\w+$/.test(p))) ts = (paths as string[]).map((p) => Number(/__(\d+)\.\w+$/.exec(p)![1]) / 1e6);
    if (ts && ts.length === paths.length && ts.length > 1) {
      const back = ts.findIndex((t, i) => i > 0 && !(t > ts![i - 1]));
      if (back > 0) emit('timestamps', where, `frame times not increasing at frame ${back} (${ts[back - 1]} then ${ts[back]})`, id);
      else if (Math.abs(ts[ts.length - 1] - ts[0] - duration) > FRAME_TOL) emit('timestamps', where, `frames span ${(ts[ts.length - 1] - ts[0]).toFixed(3)} s of a ${duration.toFixed(3)} s window`, id);
      else if (isNum(t0) && Math.abs(ts[0] - t0) > FRAME_TOL && Math.abs(ts[0]) > FRAME_TOL) emit('timestamps', where, `first frame at ${ts[0]}, window starts at ${t0}`, id);
    }
  } else if (c.part.source === 'carla') {
    for (const vd of c.part.videoDirs) checkVideo(join(vd, `${id}.mp4`));
  }
}

/** Arrays: structure, values, timestamps, conventions; null when they fail (then no answer is checked against them). */
function checkArrays(c: IndexedClip, duration: number, emit: Emit): DynamicsArrays | null {
  const { rec, where } = c.line;
  const id = c.id;
  let arrays: DynamicsArrays | null = null;
  const ref = rec.array_ref;
  if (typeof ref !== 'string' || !ref) emit('record', where, "missing field 'array_ref'", id);
  else if (!existsSync(join(c.part.dir, ref))) emit('arrays', where, `${join(c.part.dir, ref)}: missing`, id);
  else arrays = readArrays(join(c.part.dir, ref), where, emit, id);
  if (arrays) {
    const t = arrays.timestamps;
    const back = t.findIndex((v, i) => i > 0 && !(v > t[i - 1]));
    if (back > 0) {
      emit('timestamps', where, `${ref}: timestamps not strictly increasing at sample ${back} (${t[back - 1]} then ${t[back]})`, id);
      arrays = null;
    } else if (Math.abs(t[0]) > TOL || Math.abs(t[t.length - 1] - t[0] - duration) > TOL) {
      emit('timestamps', where, `${ref}: timestamps run ${t[0].toFixed(3)}…${t[t.length - 1].toFixed(3)} s, expected 0…${duration.toFixed(3)} s`, id);
      arrays = null;
    } else {
      const sign = signProblem(arrays);
      if (sign) {
        emit('signs', where, `${ref}: ${sign}`, id);
        arrays = null;
      }
    }
  }
  return arrays;
}

/** Features: present, finite, equal to the arrays' (and selected_clips.json's). Arrays whose features are not finite are a finding and not used further (null). */
function checkFeatures(c: IndexedClip, arrays: DynamicsArrays | null, ctx: ClipContext): { arrays: DynamicsArrays | null; computed: Record<string, number> | null } {
  const { rec, where } = c.line;
  const { emit } = ctx;
  const id = c.id, ref = rec.array_ref;
  const feats = rec.features && typeof rec.features === 'object' ? (rec.features as Record<string, unknown>) : null;
  let computed: Record<string, number> | null = null;
  try {
    computed = arrays ? (summaryFeatures(arrays, ref as string) as unknown as Record<string, number>) : null;
  } catch (e) {
    emit('finite', where, firstLine(e), id);
    arrays = null;
  }
  if (!feats) emit('record', where, "missing field 'features'", id);
  else {
    const missing = REQUIRED_FEATURES.filter((f) => feats[f] === undefined);
    const nonFinite = Object.entries(feats).filter(([, v]) => !(isNum(v) && Number.isFinite(v)));
    if (missing.length) emit('record', where, `features lack ${missing.map((f) => `'${f}'`).join(', ')}`, id);
    if (nonFinite.length) emit('finite', where, `features not finite: ${nonFinite.map(([f, v]) => `${f} = ${v}`).join(', ')}`, id);
    else if (computed) {
      const off = Object.keys(feats).filter((f) => f in computed && !close(feats[f] as number, computed[f]));
      if (off.length) emit('features', where, `features unlike those of ${ref}: ${off.map((f) => `${f} ${feats[f]} vs ${computed[f]}`).slice(0, 3).join(', ')}`, id);
    }
  }
  const sel = ctx.selected.get(id);
  if (sel && feats && sel.entry.features && typeof sel.entry.features === 'object') {
    const sf = sel.entry.features as Record<string, unknown>;
    const off = Object.keys(sf).filter((f) => !(isNum(sf[f]) && isNum(feats[f]) && close(sf[f] as number, feats[f] as number, 1e-12, 0)));
    if (off.length) emit('features', sel.where, `clip '${id}': features ${off.slice(0, 3).join(', ')} unlike ${where}'s`, id);
  }
  return { arrays, computed };
}

/** QA: choices, duplicates, completeness, answers against the oracle over the arrays. */
function checkClipQa(c: IndexedClip, arrays: DynamicsArrays | null, computed: Record<string, number> | null, ctx: ClipContext): void {
  const { where } = c.line;
  const { emit, o, qaOf, qids } = ctx;
  const id = c.id, ref = c.line.rec.array_ref;
  const sel = ctx.selected.get(id);
  const items = qaOf.get(id) ?? [];
  const labels = arrays && computed ? labelClip(clipData(arrays, computed as never), o.questions) : null;
  const asked = new Map<string, string>();
  for (const { rec: q, where: qw } of items) {
    const qid = String(q.question_id);
    const question = o.questions.byId.get(qid);
    if (!question) {
      emit('reference', qw, `unknown question_id '${qid}' (not in the question file)`, id);
      continue;
    }
    if (asked.has(qid)) emit('duplicate', qw, `clip '${id}' question '${qid}' is also at ${asked.get(qid)}`, id);
    asked.set(qid, qw);
    const ans = answerText(q.answer);
    const choices = Array.isArray(q.choices) ? q.choices.map(answerText) : question.choices;
    if (question.answerType !== 'numeric' && choices && !choices.includes(ans)) emit('answer', qw, `answer '${q.answer}' is not one of ${choices.join(', ')}`, id);
    else if (labels && labels[qid] !== undefined && labels[qid] !== ans) emit('answer', qw, `answer '${q.answer}' but the oracle over ${ref} says '${labels[qid]}'`, id);
    const sa = sel?.entry.answers as Record<string, unknown> | undefined;
    if (sa && sa[qid] !== undefined && answerText(sa[qid]) !== ans) emit('answer', sel!.where, `clip '${id}' question '${qid}': '${sa[qid]}' here, '${q.answer}' at ${qw}`, id);
  }
  if (qaOf.size > 0 || items.length > 0) {
    if (items.length === 0) emit('reference', where, `clip '${id}' has no QA items`, id);
    else {
      const absent = qids.filter((q) => !asked.has(q));
      if (absent.length) emit('reference', where, `clip '${id}' lacks question${absent.length > 1 ? 's' : ''} ${absent.join(', ')}`, id);
    }
  }
}
