/**
 * Every option string a command receives is parsed and checked here, once, at the CLI's edge: the
 * library below cli/ takes typed values (numbers, lists, CarlaDomain, QueueTarget, EngineConfig)
 * and never splits or validates a flag string (test/cli/options-edge.test.ts holds it so).
 *
 * The engine's flags come from one table (ENGINE_OPTIONS): their names, help and defaults, the
 * defaults formatted from the library's own (vo/config.ts ENGINE_DEFAULTS), so `run`, `baseline`
 * and `demo` cannot drift from what a library caller or a run record gets.
 */
import { type Command, Option } from 'commander';
import { InputError } from '../core/errors.js';
import type { Level, NoiseLevel, SourceLevelSpec } from '../audit/labels.js';
import { CARLA_DOMAINS, type CarlaDomain } from '../datasets/records.js';
import { MAX_WORKERS } from '../io/safety.js';
import { DEVICES, PHOTOMETRIC, type DeviceChoice } from '../native/index.js';
import { DEFAULT_QUEUE_NAME, type QueueTarget } from '../queue/connection.js';
import type { PathMap } from '../queue/codec.js';
import type { Shard } from '../run/record.js';
import type { Question, QuestionSet } from '../oracle/index.js';
import { isPresetName, PRESET_NAMES } from '../synth/presets.js';
import { ENGINE_DEFAULTS, type EngineChoice, type EngineConfig, engineConfig, METHODS, RESOLUTIONS, SCALES } from '../vo/config.js';

// ---------------------------------------------------------------------------------------------
// Single values
// ---------------------------------------------------------------------------------------------

/** A positive integer (`--limit`, `--attempts`, …). */
export function positiveInt(flag: string, s: string): number {
  const v = Number(s);
  if (s.trim() === '' || !Number.isInteger(v) || v < 1) throw new InputError(`${flag} must be a positive integer, got '${s}'`);
  return v;
}

/** `--limit N`: the first N clips (absent: all). */
export function parseLimit(s: string | undefined, flag = '--limit'): number | undefined {
  return s === undefined ? undefined : positiveInt(flag, s);
}

/** `--workers N`: an integer in [1, MAX_WORKERS]. */
export function parseWorkers(s: string, flag = '--workers'): number {
  const v = Number(s);
  if (s.trim() === '' || !Number.isInteger(v) || v < 1 || v > MAX_WORKERS) {
    throw new InputError(`${flag} must be an integer in [1, ${MAX_WORKERS}] (4 per core on this machine), got '${s}'`);
  }
  return v;
}

/** `--shard i/n` → the shard; InputError otherwise. */
export function parseShard(s: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(s.trim());
  if (!m) throw new InputError(`--shard must be i/n (e.g. 0/4), got '${s}'`);
  const index = Number(m[1]), count = Number(m[2]);
  if (count < 1 || index >= count) throw new InputError(`--shard ${s}: need 0 <= i < n`);
  return { index, count };
}

/** A comma-separated list (`a,b`, spaces around items ignored, empty items dropped). */
export function parseList(s: string): string[] {
  return s.split(',').map((x) => x.trim()).filter(Boolean);
}

/** `--carla-domain simulation|transferred`: one domain. */
export function parseCarlaDomain(s: string): CarlaDomain {
  if (!(CARLA_DOMAINS as readonly string[]).includes(s)) throw new InputError(`--carla-domain must be ${CARLA_DOMAINS.join(' or ')}, got '${s}'`);
  return s as CarlaDomain;
}

/** `--carla-domain a[,b]`: one domain or both, each once. */
export function parseCarlaDomains(s: string | undefined): CarlaDomain[] {
  const list = parseList(s ?? 'simulation').map(parseCarlaDomain);
  if (list.length === 0 || list.length > CARLA_DOMAINS.length || new Set(list).size !== list.length) {
    throw new InputError(`--carla-domain: one domain, or both (simulation,transferred), got '${s}'`);
  }
  return list;
}

/** `--queue URL` (`redis://[user:password@]host[:port][/db]`, `rediss://` for TLS) and `--queue-name` → BullMQ's target. */
export function parseQueueUrl(url: string, name = DEFAULT_QUEUE_NAME): QueueTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InputError(`--queue must be a Redis URL such as redis://127.0.0.1:6379/0, got '${url}'`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new InputError(`--queue must be a redis:// or rediss:// URL, got '${url}'`);
  if (!u.hostname) throw new InputError(`--queue ${url}: no host`);
  const port = u.port ? Number(u.port) : 6379;
  const path = u.pathname.replace(/^\//, '');
  const db = path === '' ? 0 : Number(path);
  if (!Number.isInteger(db) || db < 0) throw new InputError(`--queue ${url}: the database must be a number (redis://host:port/0), got '${path}'`);
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(name)) throw new InputError(`--queue-name must be letters, digits, '_', '.', '-', got '${name}'`);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  const connection: QueueTarget['connection'] = {
    host,
    port,
    db,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  const shown = u.password ? url.replace(`:${u.password}@`, ':***@') : url;
  return { shown, connection, name };
}

/** `--path-map FROM=TO` → a path prefix mapping (FROM and TO absolute). */
export function parsePathMap(s: string): PathMap {
  const i = s.indexOf('=');
  const from = i < 0 ? '' : s.slice(0, i);
  const to = i < 0 ? '' : s.slice(i + 1);
  if (!from.startsWith('/') || !to.startsWith('/')) throw new InputError(`--path-map must be FROM=TO with absolute paths (/data/egodyn=/mnt/egodyn), got '${s}'`);
  return { from: from.replace(/\/+$/, '') || '/', to: to.replace(/\/+$/, '') || '/' };
}

/**
 * `--frames`: 'all' (every frame: null) or a count of at least 2 spread evenly. One parser for
 * every command that takes the option.
 */
export function parseFrames(s: string | undefined, flag = '--frames', min = 2): number | null {
  if (s === undefined || s === 'all') return null;
  const n = Number(s);
  if (s.trim() === '' || !Number.isInteger(n) || n < min) throw new InputError(`${flag} must be 'all' or an integer >= ${min}, got '${s}'`);
  return n;
}

/** A value that must be one of `list` (absent stays absent). */
export function parseChoice<T extends string>(flag: string, list: readonly T[], s: string | undefined): T | undefined {
  if (s === undefined) return undefined;
  if (!(list as readonly string[]).includes(s)) throw new InputError(`${flag}: expected one of ${list.join(', ')}, got '${s}'`);
  return s as T;
}

/** `--device`: one of DEVICES. */
export function parseDevice(s: string, flag = '--device'): DeviceChoice {
  if (!(DEVICES as readonly string[]).includes(s)) throw new InputError(`${flag} must be one of ${DEVICES.join(', ')}, got '${s}'`);
  return s as DeviceChoice;
}

// ---------------------------------------------------------------------------------------------
// Deprecated names
// ---------------------------------------------------------------------------------------------

/**
 * A flag renamed so that one name means one thing across commands: the old name still works,
 * hidden from --help, and prints one deprecation line. `take` reads the new name's value, else the
 * old one's (both given: an error).
 */
export interface Renamed {
  /** The old flag as commander spells it ('--scale <alpha>'). */
  old: string;
  /** The new flag's long name ('--threshold-scale'). */
  now: string;
}

/** Adds the old name as a hidden option (no default: a given value is seen). */
export function addDeprecated(cmd: Command, r: Renamed): Command {
  return cmd.addOption(new Option(r.old, `deprecated: ${r.now}`).hideHelp());
}

const attr = (flag: string) => flag.replace(/^--/, '').split(' ')[0].replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * The value under the new name, else the old name's (with one line on stderr); `dflt` when
 * neither was given. Both given is an error (they would mean one thing twice).
 */
export function takeRenamed(o: Record<string, unknown>, r: Renamed, dflt?: string): string | undefined {
  const oldName = r.old.split(' ')[0];
  const oldV = o[attr(oldName)] as string | undefined;
  const newV = o[attr(r.now)] as string | undefined;
  if (oldV === undefined) return newV ?? dflt;
  if (newV !== undefined) throw new InputError(`${oldName} is the deprecated name of ${r.now}: give ${r.now} only`);
  process.stderr.write(`egogeo: ${oldName} is deprecated here; use ${r.now}\n`);
  return oldV;
}

// ---------------------------------------------------------------------------------------------
// The engine's flags: one table
// ---------------------------------------------------------------------------------------------

/** The engine flags as a command receives them (strings; absent = default). */
export interface EngineFlags {
  method?: string;
  frames?: string;
  scale?: string;
  photometric?: string;
  resolution?: string;
}

type Field = keyof EngineFlags;

/** An EngineConfig value as a flag spells it (frames null: 'all'). */
export function flagValue(field: Field | 'device', v: EngineChoice[Field | 'device']): string {
  return field === 'frames' && v === null ? 'all' : String(v);
}

/** --method's help. */
export const METHOD_HELP =
  "how clips are answered: 'egogeo' (this engine: metric ego-motion, all 14 questions), or a published geometric baseline computed as the reference's Python computes it, answering its 6 questions from 10 evenly spaced frames: 'vo-proxy' (baselines/vo_proxy_baseline.py), 'flow-heuristic' (baselines/flow_heuristic.py). The learned baselines (raft-flow-heuristic, tartanvo) need network weights downloaded at run time and are not offered";
export const RESOLUTION_HELP = `the tracker's resolution for frames far apart (the published 10 frames): ${RESOLUTIONS.join(', ')} (auto: full size, and half size too where full size doubts itself (its quality verdict not ok, or the tracked road measured fewer than half its moving pairs and its direct road alignments do not bear its level out), then full size's estimate kept unless its scale failed or the sizes disagree grossly on the distance: about twice the time of half alone on such clips; half: half size, the fastest; full: the frames' own size; see the README)`;
export const PROTOCOL_HELP = "'published': what the leaderboard's geometric rows used, for any method: 10 evenly spaced frames and the 6-question subset (overrides --frames and --questions); the run record, manifest and report name it";
/** --device's help (run and baseline). */
export const DEVICE_HELP = `where pyramids, FAST and KLT run: ${DEVICES.join(', ')} (auto: the GPU when libegogeo_gpu loads, sees a device and its tracks pass a self-check against the CPU's, else the CPU with a note; gpu: the same check, an error when it fails); pose and scale always run on the CPU (default: ${ENGINE_DEFAULTS.device}; with --queue: cpu, and auto is refused, since the GPUs are the workers')`;

/** Each engine flag: its spelling, its help; its default is the library's (ENGINE_DEFAULTS). */
export const ENGINE_OPTIONS: Readonly<Record<Field, { flags: string; help: string; values: readonly string[] | null }>> = {
  method: { flags: '--method <m>', help: METHOD_HELP, values: METHODS },
  frames: { flags: '--frames <n>', help: "frames per clip the estimator sees: 'all' or a count spread evenly (published baselines: 10)", values: null },
  scale: { flags: '--scale <mode>', help: "metric scale: 'road' (camera height), 'gt' (ground-truth speeds from KITTI poses, diagnosis) or 'none'", values: SCALES },
  photometric: { flags: '--photometric <mode>', help: `the tracker's photometric stage: ${PHOTOMETRIC.join(', ')} (pair: gain-compensated KLT per frame pair)`, values: PHOTOMETRIC },
  resolution: { flags: '--resolution <r>', help: RESOLUTION_HELP, values: RESOLUTIONS },
};

/**
 * Adds the engine flags `fields` to a command, each defaulting to the library's value
 * (ENGINE_DEFAULTS, as a flag spells it). `--device` is not among them: its absence means 'auto'
 * locally and 'cpu' with --queue (run.ts queueDevice), so it has no single commander default.
 */
export function addEngineOptions(cmd: Command, fields: readonly Field[] = Object.keys(ENGINE_OPTIONS) as Field[]): Command {
  for (const f of fields) cmd.option(ENGINE_OPTIONS[f].flags, ENGINE_OPTIONS[f].help, flagValue(f, ENGINE_DEFAULTS[f]));
  return cmd;
}

/** Command-line flags → a configuration; a bad value is one line naming the flag. `device` as decided (the CLI resolves `auto` itself, to print its note). */
export function engineFromFlags(f: EngineFlags, device: DeviceChoice = ENGINE_DEFAULTS.device): EngineConfig {
  const flag = <T extends string>(field: Exclude<Field, 'frames'>, v: string | undefined): T | undefined => {
    if (v === undefined) return undefined;
    const list = ENGINE_OPTIONS[field].values!;
    if (!list.includes(v)) throw new InputError(`--${field} must be one of ${list.join(', ')}, got '${v}'`);
    return v as T;
  };
  return engineConfig({
    method: flag('method', f.method),
    frames: parseFrames(f.frames),
    scale: flag('scale', f.scale),
    photometric: flag('photometric', f.photometric),
    resolution: flag('resolution', f.resolution),
    device,
  });
}

// egogeo audit labels

/**
 * `--noise POS_M:YAW_DEG[@TAU_S],…`: σ per pose of position (0–100 m) and yaw (0–180°), white, or
 * with `@TAU_S` a Gauss-Markov drift of that correlation time (seconds, > 0).
 */
export function parseNoise(spec: string, flag = '--noise'): NoiseLevel[] {
  return spec.split(',').map((s) => s.trim()).filter(Boolean).map((s) => {
    const m = /^([^:@]+):([^:@]+)(?:@([^:@]+))?$/.exec(s);
    const pos = m ? Number(m[1]) : NaN, yaw = m ? Number(m[2]) : NaN, tau = m?.[3] === undefined ? 0 : Number(m[3]);
    if (!m || !(pos >= 0 && pos <= 100) || !(yaw >= 0 && yaw <= 180) || !(tau >= 0 && tau <= 1e6) || (m[3] !== undefined && !(tau > 0))) {
      throw new InputError(`${flag}: expected POS_M:YAW_DEG or POS_M:YAW_DEG@TAU_S (σ of position 0–100 m, of yaw 0–180°, a correlation time > 0 s; e.g. 0.02:0.1 or 0.02:0.1@10), got '${s}'`);
    }
    return tau > 0 ? { kind: 'noise', posM: pos, yawDeg: yaw, tauS: tau } : { kind: 'noise', posM: pos, yawDeg: yaw };
  });
}

/** `--smooth W,…`: odd windows of at least 3 poses ('none' or '' for none). */
export function parseSmooth(spec: string): Level[] {
  if (spec.trim() === 'none') return [];
  return spec.split(',').map((s) => s.trim()).filter(Boolean).map((s) => {
    const w = Number(s);
    if (!Number.isInteger(w) || w < 3 || w % 2 === 0 || w > 101) throw new InputError(`--smooth: expected odd window lengths from 3 to 101 poses (or 'none'), got '${s}'`);
    return { kind: 'smooth', window: w };
  });
}

/**
 * `--source-level SRC=measured|literature|exact|POS_M:YAW_DEG[@TAU_S],…`: how each named source's
 * level is chosen (audit/labels.ts; unnamed sources keep `defaultSourceLevel`).
 */
export function parseSourceLevels(spec: string | undefined): Record<string, SourceLevelSpec> {
  const out: Record<string, SourceLevelSpec> = {};
  for (const s of (spec ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
    const eq = s.indexOf('=');
    if (eq <= 0) throw new InputError(`--source-level: expected SOURCE=measured, SOURCE=literature, SOURCE=exact or SOURCE=POS_M:YAW_DEG[@TAU_S], got '${s}'`);
    const v = s.slice(eq + 1).trim();
    out[s.slice(0, eq).trim()] = v === 'measured' || v === 'literature' || v === 'exact' ? v : parseNoise(v, `--source-level ${s.slice(0, eq).trim()}`)[0];
  }
  return out;
}

/** A list of `--frames` values ('10,all'): each as parseFrames reads it, 'all' kept as the word. */
export function parseFrameCounts(spec: string, flag = '--frames'): (number | 'all')[] {
  const out = parseList(spec).map((s) => parseFrames(s, flag) ?? ('all' as const));
  if (out.length === 0) throw new InputError(`${flag}: expected 'all' or a count of frames, or several comma-separated`);
  return [...new Set(out)];
}

export const intIn = (name: string, s: string, lo: number, hi: number): number => {
  const v = Number(s);
  if (s.trim() === '' || !Number.isInteger(v) || v < lo || v > hi) throw new InputError(`${name} must be an integer in [${lo}, ${hi}], got '${s}'`);
  return v;
};

export const numIn = (name: string, s: string | undefined, lo: number, hi: number): number | undefined => {
  if (s === undefined) return undefined;
  const v = Number(s);
  if (s.trim() === '' || !Number.isFinite(v) || v < lo || v > hi) throw new InputError(`${name} must be a number in [${lo}, ${hi}], got '${s}'`);
  return v;
};

/** `--speed MIN:MAX` (m/s): 0 <= MIN <= MAX <= 60. */
export function parseSpeedRange(s: string): [number, number] {
  const m = /^\s*([0-9.]+)\s*:\s*([0-9.]+)\s*$/.exec(s);
  const lo = m ? Number(m[1]) : NaN, hi = m ? Number(m[2]) : NaN;
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo >= 0 && lo <= hi && hi <= 60)) throw new InputError(`--speed must be MIN:MAX in m/s with 0 <= MIN <= MAX <= 60 (e.g. 20:33), got '${s}'`);
  return [lo, hi];
}

export function parsePreset(s: string, allowMixed: boolean): 'carla' | 'nuscenes' | 'mixed' {
  if (isPresetName(s) || (allowMixed && s === 'mixed')) return s as 'carla' | 'nuscenes' | 'mixed';
  throw new InputError(`--preset must be one of ${[...PRESET_NAMES, ...(allowMixed ? ['mixed'] : [])].join(', ')}, got '${s}'`);
}

/** The longest clip the oracle resamples (10 Hz): one day. */
export const MAX_DURATION_S = 86_400;

/** `--duration`: seconds, or null for "span". */
export function parseDuration(s: string): number | null {
  if (s === 'span') return null;
  const v = Number(s);
  if (s.trim() === '' || !Number.isFinite(v) || v <= 0 || v > MAX_DURATION_S) {
    throw new InputError(`--duration must be a positive number of seconds up to ${MAX_DURATION_S} or 'span', got '${s}'`);
  }
  return v;
}

/** `--scale` and similar: a positive finite number. */
export function parsePositive(name: string, s: string | undefined, dflt: number): number {
  if (s === undefined) return dflt;
  const v = Number(s);
  if (s.trim() === '' || !Number.isFinite(v) || v <= 0) throw new InputError(`${name} must be a positive number, got '${s}'`);
  return v;
}

/** `--questions a,b`: the named questions of the set, in the order given; unknown names fail. */
export function selectQuestions(set: QuestionSet, list: string | undefined): Question[] {
  if (list === undefined) return set.questions;
  const ids = list.split(',').map((s) => s.trim()).filter(Boolean);
  if (ids.length === 0) throw new InputError('--questions: expected a comma-separated list of question ids');
  return ids.map((id) => {
    const q = set.byId.get(id);
    if (!q) throw new InputError(`--questions: unknown question '${id}' (known: ${set.questions.map((x) => x.id).join(', ')})`);
    return q;
  });
}

/**
 * `--device` with --queue. A run is answered on one device (its record and manifest name it, and a
 * resume or merge across devices refuses), and the GPUs that would run it are the workers', which
 * this machine cannot check: so `auto` is refused with one line, and no --device means the CPU.
 * `gpu` ships as asked; each worker answers such jobs only after its own GPU passed the self-check.
 */
export function queueDevice(s: string | undefined): 'cpu' | 'gpu' {
  const d = s === undefined ? 'cpu' : parseDevice(s);
  if (d === 'auto') throw new InputError("--device auto cannot be decided for --queue: one run is answered on one device and the GPUs are the workers'; pass --device gpu (workers whose GPU fails its self-check fail those jobs) or --device cpu (the default with --queue)");
  return d;
}

/** --abstain's help. */
export const ABSTAIN_HELP = "leave a clip's scale-dependent answers null when its scale failed (the verdict 'failed'), instead of answering them from its estimate; the grader leaves null answers out, so grade and report show coverage and rank such a run with them counted as wrong; recorded in the run record and manifest";
