/**
 * io/trajectories — every trajectory file format egogeo reads or writes, in one place. Everything
 * returns the one `Trajectory` type (planar oracle frame: X forward, Y left, yaw counter-clockwise
 * positive). Every error is an `InputError` whose one-line message names `file:line` and the field.
 *
 * Formats
 * - JSONL, one trajectory a line: `{id, timestamps, x, y, yaw}` or the golden-file form
 *   `{id, input: {timestamps, x, y, yaw}}`. Blank lines are skipped; other keys are ignored.
 * - KITTI odometry: `poses.txt` (a 3×4 row-major camera-to-world matrix [R | t] per line) plus
 *   `times.txt` (one timestamp per line, same folder unless given). The camera frame is x right,
 *   y down, z forward; planar X = t_z, Y = −t_x, yaw = atan2(−R[0,2], R[2,2]) (SPEC.md). A sequence
 *   directory gives either one trajectory (id `kitti{SEQ}`) or the benchmark's 31-frame windows
 *   every 5 frames (id `kitti{SEQ}_{START:06d}`, START the frame index).
 * - TUM (`timestamp tx ty tz qx qy qz qw`, `#` comments): a camera-to-world pose per line, quaternion
 *   Hamilton (x, y, z, w). Frame `camera` (default) reads it exactly like KITTI: the camera
 *   convention x right, y down, z forward, so X = tz, Y = −tx and yaw = atan2(−R[0,2], R[2,2]) with R
 *   the quaternion's rotation. Frame `world-flu` reads body poses in a world with x forward, y left,
 *   z up: X = tx, Y = ty, yaw = atan2(R[1,0], R[0,0]) (the heading of the rotated x axis). The
 *   writer emits the same conventions (the pose is planar: no height, rotation about the vertical).
 */
import { statSync } from 'node:fs';
import { writeFileAtomic } from './atomic.js';
import { readInputText } from './safety.js';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { makeTrajectory, type Trajectory } from '../core/trajectory.js';
import { InputError } from '../core/errors.js';

export type TumFrame = 'camera' | 'world-flu';
export type TrajectoryFormat = 'jsonl' | 'kitti' | 'tum';

/** The benchmark's clip windows over a KITTI sequence: 31 frames (≈3.0 s) every 5 frames. */
export const KITTI_WINDOW = { length: 31, stride: 5 } as const;

// ---------------------------------------------------------------------------------------------
// JSONL
// ---------------------------------------------------------------------------------------------

const JSON_FIELDS = ['timestamps', 'x', 'y', 'yaw'] as const;

/** Reads a JSONL trajectory file (see the module comment). */
export function readTrajectoriesJsonl(path: string): Trajectory[] {
  return parseTrajectoriesJsonl(readText(path), path);
}

/** Parses JSONL text; `file` names the source in error messages. Ids must be unique. */
export function parseTrajectoriesJsonl(text: string, file = '<jsonl>'): Trajectory[] {
  const out: Trajectory[] = [];
  const seen = new Map<string, number>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const where = `${file}:${i + 1}`;
    const rec = parseJsonLine(line, where);
    const id = recordId(rec, where);
    const prev = seen.get(id);
    if (prev !== undefined) throw new InputError(`${where}: field 'id' '${id}' repeats the id of line ${prev}`);
    seen.set(id, i + 1);
    out.push(trajectoryFromRecord(rec, id, where));
  }
  return out;
}

/** One JSONL record → trajectory (flat or golden `input` form). */
export function trajectoryFromRecord(rec: Record<string, unknown>, id: string, where: string): Trajectory {
  const input = rec.input;
  if (input !== undefined && input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const r = input as Record<string, unknown>;
    return makeTrajectory(id, { t: r.timestamps, x: r.x, y: r.y, yaw: r.yaw }, where, {
      t: 'input.timestamps', x: 'input.x', y: 'input.y', yaw: 'input.yaw',
    });
  }
  if (input !== undefined) throw new InputError(`${where}: field 'input' must be an object with timestamps, x, y, yaw`);
  return makeTrajectory(id, { t: rec.timestamps, x: rec.x, y: rec.y, yaw: rec.yaw }, where);
}

function recordId(rec: Record<string, unknown>, where: string): string {
  const id = rec.id;
  if (id === undefined || id === null) throw new InputError(`${where}: missing field 'id'`);
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  if (typeof id !== 'string' || id === '') throw new InputError(`${where}: field 'id' must be a non-empty string, got ${JSON.stringify(id)}`);
  return id;
}

const BAD_NUMBER = /\b(NaN|-?Infinity)\b/;

function parseJsonLine(line: string, where: string): Record<string, unknown> {
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch (e) {
    // JSON has no NaN/Infinity; Python's json.dumps writes them anyway. Name the field if we can.
    const field = BAD_NUMBER.test(line) ? locateNonFinite(line) : null;
    if (field) throw new InputError(`${where}: field ${field} is not valid JSON (JSON has no NaN or Infinity; write a finite number)`);
    const msg = (e as Error).message.split('\n')[0];
    throw new InputError(`${where}: invalid JSON (${msg.length > 120 ? `${msg.slice(0, 117)}...` : msg})`);
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
    throw new InputError(`${where}: expected a JSON object with id, timestamps, x, y, yaw`);
  }
  return rec as Record<string, unknown>;
}

/** Re-parses a line with bare NaN/Infinity tokens (outside strings) marked, to name the field. */
function locateNonFinite(line: string): string | null {
  const MARK = '\u0000nonfinite:';
  let s = '';
  let inStr = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (inStr) {
      s += c;
      if (c === '\\') s += line[++i] ?? '';
      else if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') {
      inStr = true;
      s += c;
      continue;
    }
    const m = /^(-?Infinity|NaN)/.exec(line.slice(i, i + 9));
    if (m && !/[A-Za-z0-9_]/.test(line[i - 1] ?? '')) {
      s += JSON.stringify(MARK + m[1]);
      i += m[1].length - 1;
      continue;
    }
    s += c;
  }
  let rec: unknown;
  try {
    rec = JSON.parse(s);
  } catch {
    return null;
  }
  const find = (v: unknown, path: string): string | null => {
    if (typeof v === 'string' && v.startsWith(MARK)) return `${path} = ${v.slice(MARK.length)}`;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const r = find(v[i], `${path}[${i}]`);
        if (r) return r;
      }
    } else if (v && typeof v === 'object') {
      for (const [k, e] of Object.entries(v)) {
        const r = find(e, path ? `${path}.${k}` : k);
        if (r) return r;
      }
    }
    return null;
  };
  const hit = find(rec, '');
  if (!hit) return null;
  // "x[3] = NaN" → "'x'[3] (NaN)"
  const m = /^([^[ ]*)(.*) = (.*)$/.exec(hit)!;
  return `'${m[1]}'${m[2]} (${m[3]})`;
}

/**
 * An estimated trajectory's per-frame speed profile with its uncertainty (the engine's posterior:
 * m/s and m/s²; null in JSON where unknown). Written as extra JSONL fields `speed`, `speed_sigma`,
 * `accel`, `accel_sigma`, which readers ignore.
 */
export interface SpeedProfile {
  speed: ArrayLike<number>;
  speed_sigma: ArrayLike<number>;
  accel: ArrayLike<number>;
  accel_sigma: ArrayLike<number>;
}

/**
 * An estimate's quality verdict (vo/quality.ts): 'ok'; 'weak' (the engine's own uncertainty says
 * the speeds may be off: the smoother's relative speed sigma, or the two tracking sizes disagreeing);
 * 'failed' (the scale collapsed: most moving pairs have no metric distance, or most pairs no pose).
 * It rides along in the estimate's TUM file as one comment line, so a resumed run, a report and
 * the viewer read it where the trajectory is.
 */
export interface ClipQuality {
  verdict: 'ok' | 'weak' | 'failed';
  reasons: string[];
  /** Pairs with a pose and parallax (the camera moved), of them with a metric distance, and with a tracked road fit. */
  moving_pairs: number;
  measured_pairs: number;
  road_pairs: number;
  /**
   * The smoother's mean relative speed sigma over the moving pairs (vo/quality.ts
   * `speedUncertainty`; null: nothing moved, or no metric scale). Absent in files written before it.
   */
  speed_uncertainty?: number | null;
  /** `--resolution auto`: the first size's distance travelled over the second's (null: not finite). */
  size_ratio?: number | null;
}

const QUALITY_PREFIX = '# quality ';

/** The TUM comment line that carries a verdict. */
export function formatQualityLine(q: ClipQuality): string {
  return `${QUALITY_PREFIX}${JSON.stringify(q)}\n`;
}

/** The verdict a TUM file carries, or null (an estimate written before verdicts, or another tool's file). */
export function qualityFromTum(text: string): ClipQuality | null {
  const i = text.lastIndexOf(`\n${QUALITY_PREFIX}`);
  const start = i >= 0 ? i + 1 : text.startsWith(QUALITY_PREFIX) ? 0 : -1;
  if (start < 0) return null;
  const end = text.indexOf('\n', start);
  try {
    const q = JSON.parse(text.slice(start + QUALITY_PREFIX.length, end < 0 ? undefined : end)) as ClipQuality;
    return q && typeof q.verdict === 'string' && Array.isArray(q.reasons) ? q : null;
  } catch {
    return null;
  }
}

/** A trajectory as one JSONL line `{id, timestamps, x, y, yaw}` (no trailing newline), plus its speed profile when it carries one. */
export function formatTrajectoryJsonl(traj: Trajectory & { speedProfile?: SpeedProfile }): string {
  const sp = traj.speedProfile;
  const nums = (a: ArrayLike<number>) => Array.from(a, (v) => (Number.isFinite(v) ? v : null));
  return JSON.stringify({
    id: traj.id,
    timestamps: Array.from(traj.t),
    x: Array.from(traj.x),
    y: Array.from(traj.y),
    yaw: Array.from(traj.yaw),
    ...(sp ? { speed: nums(sp.speed), speed_sigma: nums(sp.speed_sigma), accel: nums(sp.accel), accel_sigma: nums(sp.accel_sigma) } : {}),
  });
}

// ---------------------------------------------------------------------------------------------
// KITTI odometry
// ---------------------------------------------------------------------------------------------

export interface KittiOptions {
  /** times.txt; default: next to poses.txt. */
  times?: string;
  /** Trajectory id; default `kitti{SEQ}` with SEQ the name of the folder holding poses.txt. */
  id?: string;
}

const KITTI_COLUMNS = ['R00', 'R01', 'R02', 't_x', 'R10', 'R11', 'R12', 't_y', 'R20', 'R21', 'R22', 't_z'];
const TUM_COLUMNS = ['timestamp', 'tx', 'ty', 'tz', 'qx', 'qy', 'qz', 'qw'];

/** Resolves a sequence directory or a poses file to [poses, times]. */
export function kittiPaths(path: string, times?: string): { poses: string; times: string; seq: string } {
  const poses = isDirectory(path) ? join(path, 'poses.txt') : path;
  const dir = dirname(poses);
  return { poses, times: times ?? join(dir, 'times.txt'), seq: basename(resolve(dir)) };
}

/** A whole KITTI sequence (directory with poses.txt and times.txt, or the poses file) as one trajectory. */
export function readKitti(path: string, opts: KittiOptions = {}): Trajectory {
  const p = kittiPaths(path, opts.times);
  const poses = parseNumberRows(readText(p.poses), p.poses, 12, 'a 3x4 pose (12 numbers)', false, KITTI_COLUMNS);
  const times = parseNumberRows(readText(p.times), p.times, 1, 'one timestamp', false, ['timestamp']);
  if (poses.rows.length !== times.rows.length) {
    throw new InputError(
      `${p.poses}: ${poses.rows.length} poses but ${p.times} has ${times.rows.length} timestamps (counts must match)`,
    );
  }
  const n = poses.rows.length;
  if (n < 2) throw new InputError(`${p.poses}: needs at least 2 poses, got ${n}`);
  const t = new Float64Array(n), x = new Float64Array(n), y = new Float64Array(n), yaw = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const r = poses.rows[i];
    t[i] = times.rows[i][0];
    if (i > 0 && !(t[i] > t[i - 1])) {
      throw new InputError(`${p.times}:${times.lines[i]}: timestamps must be strictly increasing (${t[i]} after ${t[i - 1]})`);
    }
    // Row-major [R | t]: R[0,2] = r[2], R[2,2] = r[10]; t = (r[3], r[7], r[11]).
    x[i] = r[11];
    y[i] = -r[3] + 0; // no -0
    yaw[i] = Math.atan2(-r[2], r[10]) + 0;
  }
  return makeTrajectory(opts.id ?? `kitti${p.seq}`, { t, x, y, yaw }, p.poses);
}

/** The benchmark's windows over a KITTI sequence, ids `kitti{SEQ}_{START:06d}`. */
export function readKittiWindows(path: string, opts: KittiOptions = {}): Trajectory[] {
  return windows(readKitti(path, opts));
}

/**
 * Consecutive windows of `length` samples starting every `stride` samples (only complete windows),
 * id `{id}_{START:06d}`. With the defaults this is the benchmark's KITTI clip windowing.
 */
export function windows(traj: Trajectory, length: number = KITTI_WINDOW.length, stride: number = KITTI_WINDOW.stride): Trajectory[] {
  const out: Trajectory[] = [];
  for (let s = 0; s + length <= traj.t.length; s += stride) {
    out.push({
      id: `${traj.id}_${String(s).padStart(6, '0')}`,
      t: traj.t.slice(s, s + length),
      x: traj.x.slice(s, s + length),
      y: traj.y.slice(s, s + length),
      yaw: traj.yaw.slice(s, s + length),
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// TUM
// ---------------------------------------------------------------------------------------------

export interface TumOptions {
  frame?: TumFrame;
  /** Default: the file name without extension. */
  id?: string;
}

/** Reads a TUM trajectory file as a planar trajectory (see the module comment for the frames). */
export function readTum(path: string, opts: TumOptions = {}): Trajectory {
  return parseTum(readText(path), path, opts);
}

export function parseTum(text: string, file = '<tum>', opts: TumOptions = {}): Trajectory {
  const frame = opts.frame ?? 'camera';
  const rows = parseNumberRows(text, file, 8, 'timestamp tx ty tz qx qy qz qw (8 numbers)', true, TUM_COLUMNS);
  const n = rows.rows.length;
  if (n < 2) throw new InputError(`${file}: needs at least 2 poses, got ${n}`);
  const t = new Float64Array(n), x = new Float64Array(n), y = new Float64Array(n), yaw = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const [ts, tx, ty, tz, qx, qy, qz, qw] = rows.rows[i];
    const where = `${file}:${rows.lines[i]}`;
    if (i > 0 && !(ts > t[i - 1])) throw new InputError(`${where}: field 'timestamp' must be strictly increasing (${ts} after ${t[i - 1]})`);
    t[i] = ts;
    const norm = Math.hypot(qx, qy, qz, qw);
    if (!(norm > 1e-12)) throw new InputError(`${where}: field 'quaternion' (qx qy qz qw) has zero length`);
    const R = quatToMatrix(qx / norm, qy / norm, qz / norm, qw / norm);
    if (frame === 'camera') {
      x[i] = tz;
      y[i] = -tx + 0;
      yaw[i] = Math.atan2(-R[2], R[8]) + 0;
    } else {
      x[i] = tx;
      y[i] = ty;
      yaw[i] = Math.atan2(R[3], R[0]) + 0;
    }
  }
  return makeTrajectory(opts.id ?? basename(file, extname(file)), { t, x, y, yaw }, file);
}

/** Row-major 3×3 rotation of a unit quaternion (Hamilton, x y z w). */
export function quatToMatrix(qx: number, qy: number, qz: number, qw: number): number[] {
  return [
    1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw),
    2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw),
    2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy),
  ];
}

/**
 * A planar trajectory as TUM text (a `#` header line, then one pose a line). `camera`: position
 * (−Y, 0, X), rotation about the camera's y (down) axis by −yaw; `world-flu`: position (X, Y, 0),
 * rotation about z (up) by yaw. `readTum` with the same frame gives the trajectory back.
 *
 * `measured`: the times of the frames the poses were measured at. Given, two comment lines after the
 * header say which poses are the frames' own and which are grid points interpolated between them
 * (vo/densify.ts: with frames sparser than the oracle's 10 Hz, most poses are): `# measured <t> …`
 * lists the timestamps of the measured poses, written exactly as their pose lines write them
 * (`measuredFromTum` reads it back); TUM readers (evo, readTum) skip `#` lines.
 */
export function formatTum(traj: Trajectory & { speedProfile?: SpeedProfile }, frame: TumFrame = 'camera', measured?: ArrayLike<number>): string {
  const lines = ['# timestamp tx ty tz qx qy qz qw'];
  if (measured) {
    const at = new Set(Array.from(measured));
    const ts = Array.from(traj.t).filter((t) => at.has(t));
    lines.push(
      `# ${ts.length} of ${traj.t.length} poses measured at frames (timestamps below); the other ${traj.t.length - ts.length} are grid points interpolated between frames`,
      `${MEASURED_PREFIX}${ts.map(fmtNum).join(' ')}`,
    );
  }
  const sp = traj.speedProfile;
  for (let i = 0; i < traj.t.length; i++) {
    const h = traj.yaw[i] / 2;
    const pose =
      frame === 'camera'
        ? [-traj.y[i], 0, traj.x[i], 0, Math.sin(-h), 0, Math.cos(h)]
        : [traj.x[i], traj.y[i], 0, 0, 0, Math.sin(h), Math.cos(h)];
    lines.push([traj.t[i], ...pose].map(fmtNum).join(' '));
  }
  // An estimate's speed profile with its uncertainty rides along as comment lines (TUM readers,
  // evo and readTum skip them): '# speed <timestamp> <m/s> <sigma> <m/s²> <sigma>' per frame.
  if (sp) {
    lines.push('# speed timestamp speed_m_s speed_sigma accel_m_s2 accel_sigma');
    for (let i = 0; i < traj.t.length; i++) {
      lines.push(`# speed ${[traj.t[i], sp.speed[i], sp.speed_sigma[i], sp.accel[i], sp.accel_sigma[i]].map((v) => (Number.isFinite(v) ? fmtNum(v) : 'nan')).join(' ')}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

const MEASURED_PREFIX = '# measured ';

/**
 * The timestamps a TUM file marks as measured at frames (`formatTum`'s `measured`), or null when it
 * marks none (an estimate written before the marks, a ground truth from elsewhere, another tool's file).
 */
export function measuredFromTum(text: string): number[] | null {
  const i = text.startsWith(MEASURED_PREFIX) ? 0 : text.indexOf(`\n${MEASURED_PREFIX}`) + 1;
  if (i <= 0 && !text.startsWith(MEASURED_PREFIX)) return null;
  const end = text.indexOf('\n', i);
  const body = text.slice(i + MEASURED_PREFIX.length, end < 0 ? undefined : end).trim();
  const ts = body === '' ? [] : body.split(/\s+/).map(Number);
  return ts.every(Number.isFinite) ? ts : null;
}

/** Writes `formatTum(traj, frame)` to `path`. */
export function writeTum(path: string, traj: Trajectory, frame: TumFrame = 'camera'): void {
  writeText(path, formatTum(traj, frame));
}

/** Writes trajectories as JSONL (`formatTrajectoryJsonl`, one a line). */
export function writeTrajectoriesJsonl(path: string, trajs: readonly Trajectory[]): void {
  writeText(path, trajs.map((t) => `${formatTrajectoryJsonl(t)}\n`).join(''));
}

function writeText(path: string, text: string): void {
  writeFileAtomic(path, text);
}

/** Shortest round-trip decimal; −0 as 0. */
function fmtNum(v: number): string {
  return Object.is(v, -0) ? '0' : String(v);
}

// ---------------------------------------------------------------------------------------------
// Any format
// ---------------------------------------------------------------------------------------------

export interface ReadOptions {
  /** Forces a format; default: `detectFormat`. */
  format?: TrajectoryFormat;
  /** Split each trajectory into the benchmark's 31-sample windows every 5 samples. */
  windows?: boolean;
  tumFrame?: TumFrame;
  /** KITTI times.txt when not next to poses.txt. */
  times?: string;
}

/**
 * Format of `path`: a directory or a file named poses.txt → KITTI; a `.txt`/`.tum` file whose first
 * data line has 8 numeric columns → TUM (12 columns → KITTI poses); anything else → JSONL.
 */
export function detectFormat(path: string): TrajectoryFormat {
  if (isDirectory(path) || basename(path) === 'poses.txt') return 'kitti';
  const ext = extname(path).toLowerCase();
  if (ext === '.txt' || ext === '.tum') {
    const first = readText(path).split('\n').map((l) => l.trim()).find((l) => l && !l.startsWith('#'));
    const cols = first ? first.split(/[\s,]+/) : [];
    if (cols.length > 0 && cols.every((c) => Number.isFinite(Number(c)))) {
      if (cols.length === 8) return 'tum';
      if (cols.length === 12) return 'kitti';
    }
    if (ext === '.tum') return 'tum';
  }
  return 'jsonl';
}

/** Reads trajectories from any supported file (one or many), optionally windowed. */
export function readTrajectories(path: string, opts: ReadOptions = {}): Trajectory[] {
  const format = opts.format ?? detectFormat(path);
  let trajs: Trajectory[];
  if (format === 'kitti') trajs = [readKitti(path, { times: opts.times })];
  else if (format === 'tum') trajs = [readTum(path, { frame: opts.tumFrame })];
  else trajs = readTrajectoriesJsonl(path);
  if (!opts.windows) return trajs;
  const out: Trajectory[] = [];
  for (const tr of trajs) {
    const w = windows(tr);
    if (w.length === 0) {
      throw new InputError(`${path}: trajectory '${tr.id}' has ${tr.t.length} samples, fewer than one ${KITTI_WINDOW.length}-sample window`);
    }
    out.push(...w);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function readText(path: string): string {
  return readInputText(path, 'trajectory file');
}

/** Whitespace-separated numeric rows with a fixed column count; blank (and, if asked, `#`) lines skipped. */
function parseNumberRows(
  text: string,
  file: string,
  cols: number,
  what: string,
  comments = false,
  names?: readonly string[],
): { rows: Float64Array[]; lines: number[] } {
  const rows: Float64Array[] = [];
  const lines: number[] = [];
  const src = text.split('\n');
  for (let i = 0; i < src.length; i++) {
    const line = src[i].trim();
    if (!line || (comments && line.startsWith('#'))) continue;
    const where = `${file}:${i + 1}`;
    const parts = line.split(/\s+/);
    if (parts.length !== cols) throw new InputError(`${where}: expected ${what}, got ${parts.length} column${parts.length === 1 ? '' : 's'}`);
    const row = new Float64Array(cols);
    for (let c = 0; c < cols; c++) {
      const v = Number(parts[c]);
      if (!Number.isFinite(v)) {
        const field = names ? `field '${names[c]}' (column ${c + 1})` : `column ${c + 1}`;
        throw new InputError(`${where}: ${field} must be a finite number, got '${parts[c]}'`);
      }
      row[c] = v;
    }
    rows.push(row);
    lines.push(i + 1);
  }
  return { rows, lines };
}
