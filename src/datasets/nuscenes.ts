/**
 * The nuScenes tables a published EgoDyn-Bench clip needs, joined once and cached.
 *
 * A nuScenes record gives `frame_tokens` (sample_data tokens) and `frame_paths` relative to the
 * nuScenes data root, but no timestamps and no camera. Those come from the tables in `<root>/v1.0-trainval/`:
 * `sample_data` (timestamp in µs, calibrated_sensor_token, size), `calibrated_sensor` (intrinsics,
 * translation in the ego frame whose origin is on the ground — so z is the camera height — and the
 * camera→ego rotation) and `sensor` (channel).
 *
 * The real `sample_data.json` is ~1 GB (2.6M rows): more than one V8 string can hold, and the
 * official devkit needs ~13 GB to load the database. `scanTable` reads a table as a byte stream in
 * fixed chunks, finds each top-level row by bracket depth (strings and escapes respected), reads its
 * `"token"` without building a string for the row, and parses only the rows asked for: memory stays
 * at one chunk plus the kept rows. The join (rows per wanted token, and which tokens no table
 * has) is cached in a small JSON file keyed by the tables' paths, sizes and mtimes, so the next run
 * over the same tables starts at once. May import: core/, io/.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../core/errors.js';
import { writeFileAtomic } from '../io/atomic.js';
import type { Intrinsics } from '../native/index.js';

/** One camera frame: the sample_data row's fields a clip needs. */
export interface NuscenesFrame {
  token: string;
  filename: string;
  /** Microseconds. */
  timestamp: number;
  calibrated_sensor_token: string;
  width?: number;
  height?: number;
}

/** One calibrated sensor: where the camera sits on the ego vehicle and its intrinsics. */
export interface NuscenesSensor {
  token: string;
  sensor_token: string;
  /** Metres in the ego frame (x forward, y left, z up; origin on the ground). */
  translation: [number, number, number];
  /** Camera→ego quaternion (w, x, y, z). */
  rotation: [number, number, number, number];
  camera_intrinsic: number[][];
  channel?: string;
}

export interface NuscenesJoin {
  frames: Map<string, NuscenesFrame>;
  sensors: Map<string, NuscenesSensor>;
  /** Frame tokens no sample_data table has. */
  missing: Set<string>;
  /** The table folder the rows came from. */
  tables: string;
  /** True when the join came from the cache file. */
  cached: boolean;
  cacheFile: string | null;
}

const CACHE_VERSION = 1;
const CHUNK = 4 << 20;
const TOKEN_KEY = Buffer.from('"token"');

/**
 * The table folder of a nuScenes root: `v1.0-trainval` first (the benchmark's clips come from it),
 * then any other `v1.0-*` holding `sample_data.json`; or the root itself when it holds the tables.
 */
export function tableDir(root: string): string {
  if (!existsSync(root)) throw new InputError(`--nuscenes-root ${root}: no such directory`);
  const has = (d: string) => existsSync(join(d, 'sample_data.json'));
  const names = readdirSync(root).filter((n) => n.startsWith('v1.0-')).sort((a, b) => Number(b === 'v1.0-trainval') - Number(a === 'v1.0-trainval'));
  for (const n of names) if (has(join(root, n))) return join(root, n);
  if (has(root)) return root;
  throw new InputError(`--nuscenes-root ${root}: no v1.0-*/sample_data.json (expected the nuScenes data root with its tables)`);
}

/**
 * Streams a table (a JSON list of flat objects) and calls `keep` with each row whose `"token"` is
 * in `wanted`, parsed. Returns the number of rows seen. Errors name the file.
 */
export function scanTable(path: string, wanted: ReadonlySet<string>, keep: (row: Record<string, unknown>) => void): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new InputError(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const bad = (what: string) => new InputError(`${path}: not a nuScenes table (${what}; expected a JSON list of objects)`);
  let buf = Buffer.allocUnsafe(CHUNK);
  let len = 0; // bytes of `buf` in use (a partial row carried over + the new chunk)
  let depth = 0, inString = false, escaped = false, started = false;
  let rowStart = -1, rows = 0, offset = 0;
  try {
    for (;;) {
      if (len === buf.length) {
        // One row larger than the buffer: grow (rows are small; this only guards odd files).
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, len);
        buf = bigger;
      }
      const n = readSync(fd, buf, len, buf.length - len, null);
      if (n === 0) break;
      const end = len + n;
      for (let i = len; i < end; i++) {
        const b = buf[i];
        if (inString) {
          if (escaped) escaped = false;
          else if (b === 0x5c) escaped = true;
          else if (b === 0x22) inString = false;
          continue;
        }
        if (b === 0x22) inString = true;
        else if (b === 0x7b || b === 0x5b) {
          if (depth === 0 && b !== 0x5b) throw bad('it does not start with [');
          if (depth === 1 && b === 0x7b) rowStart = i;
          if (depth === 0) started = true;
          depth++;
        } else if (b === 0x7d || b === 0x5d) {
          depth--;
          if (depth < 0) throw bad(`unbalanced brackets near byte ${offset + i}`);
          if (depth === 1 && b === 0x7d) {
            rows++;
            const tok = tokenOf(buf, rowStart, i + 1);
            if (tok !== null && wanted.has(tok)) {
              let row: unknown;
              try {
                row = JSON.parse(buf.toString('utf8', rowStart, i + 1));
              } catch (e) {
                throw bad(`row ${rows}: ${(e as Error).message.split('\n')[0]}`);
              }
              keep(row as Record<string, unknown>);
            }
            rowStart = -1;
          }
        } else if (depth === 0 && b > 0x20) {
          throw bad('it does not start with [');
        }
      }
      // Carry the unfinished row (if any) to the front of the buffer.
      const carry = rowStart >= 0 ? rowStart : end;
      buf.copy(buf, 0, carry, end);
      offset += carry;
      len = end - carry;
      if (rowStart >= 0) rowStart = 0;
    }
  } finally {
    closeSync(fd);
  }
  if (!started || depth !== 0 || inString) throw bad(started ? 'it ends before its closing ]' : 'it is empty');
  return rows;
}

/** The string value of the row's top-level `"token"` key, read from the bytes; null if absent. */
function tokenOf(buf: Buffer, start: number, end: number): string | null {
  let k = buf.indexOf(TOKEN_KEY, start);
  if (k < 0 || k >= end) return null;
  k += TOKEN_KEY.length;
  while (k < end && (buf[k] === 0x20 || buf[k] === 0x0a || buf[k] === 0x0d || buf[k] === 0x09 || buf[k] === 0x3a)) k++;
  if (buf[k] !== 0x22) return null;
  const close = buf.indexOf(0x22, k + 1);
  return close < 0 || close >= end ? null : buf.toString('latin1', k + 1, close);
}

/** The default cache folder: $EGOGEO_CACHE_DIR, else $XDG_CACHE_HOME/egogeo, else ~/.cache/egogeo. */
export function defaultCacheDir(): string {
  return process.env.EGOGEO_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'egogeo');
}

interface CacheFile {
  egogeo_nuscenes_join: number;
  tables: { path: string; size: number; mtimeMs: number }[];
  frames: NuscenesFrame[];
  sensors: NuscenesSensor[];
  missing: string[];
}

const TABLES = ['sample_data.json', 'calibrated_sensor.json', 'sensor.json'] as const;

/**
 * The rows of `frameTokens` and their calibrated sensors, from the cache when it has them all,
 * else by streaming the tables (then cached). `log` receives one line per slow step.
 */
export function joinNuscenes(root: string, frameTokens: Iterable<string>, opts: { cacheDir?: string | null; log?: (line: string) => void } = {}): NuscenesJoin {
  const dir = tableDir(root);
  const stamp = TABLES.map((t) => {
    const p = join(dir, t);
    let st;
    try {
      st = statSync(p);
    } catch {
      throw new InputError(`${p}: missing (the nuScenes tables need ${TABLES.join(', ')})`);
    }
    if (!st.isFile()) throw new InputError(`${p}: not a regular file`);
    return { path: realpathSync(p), size: st.size, mtimeMs: st.mtimeMs };
  });
  const wanted = new Set(frameTokens);
  const cacheDir = opts.cacheDir === undefined ? defaultCacheDir() : opts.cacheDir;
  const cacheFile = cacheDir ? join(cacheDir, `nuscenes-${createHash('sha1').update(realpathSync(dir)).digest('hex').slice(0, 16)}.json`) : null;

  const prev = cacheFile ? readCache(cacheFile, stamp) : null;
  const frames = new Map<string, NuscenesFrame>(prev?.frames.map((f) => [f.token, f]));
  const sensors = new Map<string, NuscenesSensor>(prev?.sensors.map((s) => [s.token, s]));
  const missing = new Set(prev?.missing);
  const todo = [...wanted].filter((t) => !frames.has(t) && !missing.has(t));
  if (prev && todo.length === 0) {
    return { frames, sensors, missing: new Set([...wanted].filter((t) => missing.has(t))), tables: dir, cached: true, cacheFile };
  }

  const t0 = Date.now();
  const want = new Set(todo);
  const sdPath = join(dir, 'sample_data.json');
  opts.log?.(`reading ${sdPath} (${(stamp[0].size / 1e6).toFixed(0)} MB) for ${want.size} frames`);
  scanTable(sdPath, want, (r) => frames.set(r.token as string, frameRow(r, sdPath)));
  for (const t of want) if (!frames.has(t)) missing.add(t);
  const needSensors = new Set<string>();
  for (const f of frames.values()) if (!sensors.has(f.calibrated_sensor_token)) needSensors.add(f.calibrated_sensor_token);
  if (needSensors.size > 0) {
    const csPath = join(dir, 'calibrated_sensor.json');
    const found: NuscenesSensor[] = [];
    scanTable(csPath, needSensors, (r) => found.push(sensorRow(r, csPath)));
    const channels = new Map<string, string>();
    const snPath = join(dir, 'sensor.json');
    scanTable(snPath, new Set(found.map((s) => s.sensor_token)), (r) => {
      if (typeof r.channel === 'string') channels.set(r.token as string, r.channel);
    });
    for (const s of found) sensors.set(s.token, { ...s, channel: channels.get(s.sensor_token) });
  }
  opts.log?.(`joined ${frames.size} frames and ${sensors.size} cameras in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  if (cacheFile) {
    const doc: CacheFile = { egogeo_nuscenes_join: CACHE_VERSION, tables: stamp, frames: [...frames.values()], sensors: [...sensors.values()], missing: [...missing] };
    try {
      mkdirSync(cacheDir!, { recursive: true });
      writeFileAtomic(cacheFile, JSON.stringify(doc));
    } catch (e) {
      opts.log?.(`cannot cache the nuScenes join (${(e as Error).message.split('\n')[0]}); the next run reads the tables again`);
    }
  }
  return { frames, sensors, missing: new Set([...wanted].filter((t) => missing.has(t))), tables: dir, cached: false, cacheFile };
}

function readCache(path: string, stamp: CacheFile['tables']): CacheFile | null {
  if (!existsSync(path)) return null;
  try {
    const doc = JSON.parse(readFileSync(path, 'utf8')) as CacheFile;
    if (doc.egogeo_nuscenes_join !== CACHE_VERSION || JSON.stringify(doc.tables) !== JSON.stringify(stamp)) return null;
    if (!Array.isArray(doc.frames) || !Array.isArray(doc.sensors) || !Array.isArray(doc.missing)) return null;
    return doc;
  } catch {
    return null; // unreadable cache: read the tables again (and rewrite it)
  }
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isStr = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

function frameRow(r: Record<string, unknown>, file: string): NuscenesFrame {
  const where = `${file}: row '${String(r.token)}'`;
  if (!isStr(r.filename)) throw new InputError(`${where}: field 'filename' must be a path`);
  if (!isNum(r.timestamp)) throw new InputError(`${where}: field 'timestamp' must be a number (µs)`);
  if (!isStr(r.calibrated_sensor_token)) throw new InputError(`${where}: field 'calibrated_sensor_token' must be a token`);
  return {
    token: r.token as string,
    filename: r.filename,
    timestamp: r.timestamp,
    calibrated_sensor_token: r.calibrated_sensor_token,
    width: isNum(r.width) ? r.width : undefined,
    height: isNum(r.height) ? r.height : undefined,
  };
}

function sensorRow(r: Record<string, unknown>, file: string): NuscenesSensor {
  const where = `${file}: row '${String(r.token)}'`;
  const vec = (v: unknown, n: number) => Array.isArray(v) && v.length === n && v.every(isNum);
  if (!vec(r.translation, 3)) throw new InputError(`${where}: field 'translation' must be [x, y, z] in metres`);
  if (!vec(r.rotation, 4)) throw new InputError(`${where}: field 'rotation' must be a quaternion [w, x, y, z]`);
  const k = r.camera_intrinsic;
  if (!Array.isArray(k) || k.length !== 3 || !k.every((row) => vec(row, 3))) {
    throw new InputError(`${where}: field 'camera_intrinsic' must be a 3×3 matrix (is this sensor a camera?)`);
  }
  if (!isStr(r.sensor_token)) throw new InputError(`${where}: field 'sensor_token' must be a token`);
  return {
    token: r.token as string,
    sensor_token: r.sensor_token,
    translation: r.translation as [number, number, number],
    rotation: r.rotation as [number, number, number, number],
    camera_intrinsic: k as number[][],
  };
}

/** What the engine needs of a calibrated camera. */
export interface MountedCamera {
  intrinsics: Intrinsics;
  /** Metres above the ground (translation z). */
  height: number;
  /** The road's downward normal in camera coordinates (x right, y down, z forward). */
  roadNormal: [number, number, number];
}

/**
 * A calibrated sensor → intrinsics, height and the road normal in the camera frame: the ego
 * frame's down axis (0, 0, −1) rotated into the camera by the inverse of the camera→ego rotation,
 * i.e. minus the third row of R(q). Level mount (nuScenes' usual (½, −½, ½, −½)): (0, 1, 0).
 */
export function mountedCamera(s: NuscenesSensor): MountedCamera {
  const [w, x, y, z] = s.rotation;
  const n = Math.hypot(w, x, y, z);
  if (!(n > 0)) throw new InputError(`calibrated_sensor '${s.token}': rotation is not a unit quaternion`);
  const [qw, qx, qy, qz] = [w / n, x / n, y / n, z / n];
  // Third row of the rotation matrix of q.
  const r20 = 2 * (qx * qz - qw * qy), r21 = 2 * (qy * qz + qw * qx), r22 = 1 - 2 * (qx * qx + qy * qy);
  const k = s.camera_intrinsic;
  if (!(k[0][0] > 0 && k[1][1] > 0)) throw new InputError(`calibrated_sensor '${s.token}': camera_intrinsic needs positive focal lengths`);
  if (!(s.translation[2] > 0)) throw new InputError(`calibrated_sensor '${s.token}': translation z (camera height above the ground) must be positive`);
  return {
    intrinsics: { fx: k[0][0], fy: k[1][1], cx: k[0][2], cy: k[1][2] },
    height: s.translation[2],
    roadNormal: [-r20 + 0, -r21 + 0, -r22 + 0],
  };
}
