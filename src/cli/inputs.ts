/**
 * The trajectory input of oracle, calibrate and sensitivity: the options every trajectory-reading
 * command accepts, loading (JSONL, KITTI, TUM, a dataset folder) and labelling.
 */
import type { Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { guardOutputs, type OutputSpec } from '../io/safety.js';
import { type Trajectory } from '../core/trajectory.js';
import { InputError } from '../core/errors.js';
import { readTrajectories, type ReadOptions, type TumFrame } from '../io/trajectories.js';
import { clipData, labelClip, runOracle, summaryFeatures, type OracleResult, type QuestionSet } from '../oracle/index.js';
import { readDataset } from '../datasets/benchmark.js';
import { groundTruthArrays } from '../datasets/groundtruth.js';
import { detectLayout } from '../datasets/layout.js';
import { parseLimit } from './options.js';

/** The options every trajectory-reading command accepts. */
export interface InputOpts {
  /** The input as a dataset folder (`--dataset DIR`); the positional FILE is its shorthand. */
  dataset?: string;
  kitti?: boolean;
  tum?: boolean;
  tumFrame: string;
  times?: string;
  windows?: boolean;
  config?: string;
  duration: string;
  limit?: string;
}

export const INPUT_HELP = `
Input formats (auto-detected; force with --kitti or --tum):
  JSONL       one trajectory a line: {id, timestamps, x, y, yaw} or {id, input: {timestamps, x, y, yaw}};
              planar oracle frame (X forward, Y left, yaw counter-clockwise, metres, seconds, radians)
  KITTI       a sequence directory (poses.txt + times.txt) or a poses.txt; camera-to-world 3x4 poses,
              camera x right, y down, z forward: X = t_z, Y = -t_x, yaw = atan2(-R[0,2], R[2,2]);
              id kitti{SEQ}, with --windows kitti{SEQ}_{START:06d} (31 frames every 5 frames)
  TUM         .txt/.tum with 8 columns "timestamp tx ty tz qx qy qz qw" (# comments allowed);
              --tum-frame camera (default): poses in the KITTI camera convention (x right, y down,
              z forward), X = tz, Y = -tx, yaw = atan2(-R[0,2], R[2,2]);
              --tum-frame world-flu: x forward, y left, z up, X = tx, Y = ty, yaw = atan2(R[1,0], R[0,0])
A dataset folder (EgoDyn-Bench as published: selected_clips.json with nuscenes_clips/ and
carla_clips/; or the benchmark layout: clips_index.jsonl) gives its clips, labelled from their
ground truth as the benchmark stores it: arrays/<clip>.npz as they are, else the KITTI poses
under the clip's frames. No nuScenes data root is needed.
The oracle resamples each trajectory to 10 Hz over --duration seconds from its first timestamp
(default 3.0, the benchmark's clip length; "span" uses each trajectory's own span).`;

/** The positional input's help (oracle, calibrate, sensitivity). */
export const INPUT_ARG_HELP = "trajectories (JSONL, a KITTI sequence directory or poses.txt, a TUM file) or a dataset folder (EgoDyn-Bench as published, the benchmark layout); a folder may be given as --dataset DIR instead";

/**
 * The input of oracle, calibrate and sensitivity: the positional FILE, or `--dataset DIR` as every
 * command that reads a dataset takes it (the positional is its shorthand). One of the two, once.
 */
export function inputPath(file: string | undefined, o: InputOpts): string {
  if (file !== undefined && o.dataset !== undefined) throw new InputError(`give the input once: FILE '${file}' or --dataset '${o.dataset}'`);
  if (o.dataset !== undefined) {
    if (!isDirectory(o.dataset)) throw new InputError(`--dataset ${o.dataset}: not a folder (EgoDyn-Bench as published, a benchmark layout folder or a KITTI sequence; a trajectory file is given as FILE)`);
    return o.dataset;
  }
  if (file === undefined) throw new InputError('missing input: a trajectory FILE or --dataset DIR');
  return file;
}

/** Adds the shared input options to a command. */
export function addInputOptions(cmd: Command): Command {
  return cmd
    .option('--dataset <dir>', 'the input as a dataset folder: EgoDyn-Bench as published, the benchmark layout (clips_index.jsonl), or a KITTI sequence (the same as giving it as FILE)')
    .option('--kitti', 'read FILE as KITTI odometry (a sequence directory or poses.txt)')
    .option('--times <path>', 'KITTI times.txt (default: next to poses.txt)')
    .option('--tum', 'read FILE as a TUM trajectory (timestamp tx ty tz qx qy qz qw)')
    .option('--tum-frame <frame>', 'TUM pose convention: camera (x right, y down, z forward, like KITTI) or world-flu (x forward, y left, z up)', 'camera')
    .option('--windows', "split each trajectory into the benchmark's 31-frame windows every 5 frames (the default for a KITTI sequence folder, as egogeo run reads it)")
    .option('--config <yaml>', 'question file (rules and thresholds; default: the published EgoDyn-Bench thresholds)')
    .option('--duration <S|span>', 'clip duration in seconds, or "span" for each trajectory\'s own span', '3.0')
    .option('--limit <n>', 'only the first n trajectories or clips');
}

/** The files a trajectory-reading command reads (a KITTI folder: its poses and times). */
export function inputFiles(file: string, o: InputOpts): string[] {
  const files = [file, o.times, o.config];
  if (isDatasetDir(file)) return files.filter((f): f is string => !!f);
  try {
    if (existsSync(file) && statSync(file).isDirectory()) files.push(join(file, 'poses.txt'), join(file, 'times.txt'));
    else if (/poses\.txt$/.test(file)) files.push(join(file, '..', 'times.txt'));
  } catch {
    /* reported when read */
  }
  return files.filter((f): f is string => !!f);
}

/** Refuses outputs that are inputs (or not replaceable files) before any work. */
export function guardInputOutputs(file: string, o: InputOpts, outputs: (OutputSpec | undefined)[], more: string[] = []): void {
  guardOutputs(outputs, [...inputFiles(file, o), ...more]);
}

/** Reads the trajectories the input options describe. */
export function loadInput(file: string, o: InputOpts): Trajectory[] {
  if (o.kitti && o.tum) throw new InputError('--kitti and --tum exclude each other');
  if (o.tumFrame !== 'camera' && o.tumFrame !== 'world-flu') {
    throw new InputError(`--tum-frame must be camera or world-flu, got '${o.tumFrame}'`);
  }
  const ro: ReadOptions = {
    format: o.kitti ? 'kitti' : o.tum ? 'tum' : undefined,
    // A KITTI sequence folder is read as `egogeo run` reads it: its benchmark windows (a poses.txt
    // path stays one trajectory).
    windows: o.windows ?? isDirectory(file),
    tumFrame: o.tumFrame as TumFrame,
    times: o.times,
  };
  const trajs = readTrajectories(file, ro);
  if (trajs.length === 0) throw new InputError(`${file}: no trajectories`);
  return trajs.slice(0, parseLimit(o.limit));
}

/**
 * A dataset folder rather than a trajectory file: EgoDyn-Bench as published (nuscenes_clips/,
 * carla_clips/) or the benchmark layout (clips_index.jsonl). A KITTI sequence folder is a
 * trajectory input: its poses, split into the benchmark's windows as `egogeo run` reads them.
 */
function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}

export function isDatasetDir(file: string): boolean {
  const layout = detectLayout(file);
  return layout === 'published' || layout === 'benchmark';
}

/**
 * What the oracle says of every input: trajectories (JSONL, KITTI, TUM) through the whole oracle,
 * or a dataset's clips from their ground truth as the benchmark stores it — the clip's npz arrays
 * (the reference's dynamics, on its 10 Hz grid: labelled as they are, as the reference labels them),
 * else the KITTI poses under its frames. Clips without ground truth are skipped with one note.
 */
export function labelInput(file: string, o: InputOpts, questions: QuestionSet, duration: number | null): { ids: string[]; results: OracleResult[] } {
  if (!isDatasetDir(file)) {
    const trajs = loadInput(file, o);
    return { ids: trajs.map((t) => t.id), results: runAll(trajs, questions, duration) };
  }
  // Ground truth only: the CARLA domains' videos differ, their clips' ground truth does not.
  const clips = readDataset(file, { needFrames: false }).clips.slice(0, parseLimit(o.limit));
  const ids: string[] = [], results: OracleResult[] = [];
  let missing = 0;
  for (const c of clips) {
    const g = c.problem ? null : groundTruthArrays(c);
    if (!g) {
      missing++;
      continue;
    }
    const features = summaryFeatures(g.arrays, `${file}: clip '${c.id}'`);
    ids.push(c.id);
    results.push({ arrays: g.arrays, features, labels: labelClip(clipData(g.arrays, features), questions) });
  }
  if (missing > 0) process.stderr.write(`egogeo: note: ${missing} clip${missing === 1 ? '' : 's'} of ${file} ${missing === 1 ? 'has' : 'have'} no ground truth here (no arrays/<clip>.npz, no KITTI poses): skipped\n`);
  if (ids.length === 0) throw new InputError(`${file}: no clip with ground truth`);
  return { ids, results };
}

/** Runs the oracle on every trajectory; a rule failure names the trajectory. */
export function runAll(trajs: Trajectory[], questions: QuestionSet, duration: number | null): OracleResult[] {
  const out: OracleResult[] = new Array(trajs.length);
  let long = 0;
  for (let i = 0; i < trajs.length; i++) {
    const tr = trajs[i];
    if (duration !== null && tr.t[tr.t.length - 1] - tr.t[0] > duration + 0.5) long++;
    try {
      out[i] = runOracle(tr, questions, { duration });
    } catch (e) {
      if (e instanceof InputError) throw e;
      throw new InputError(`trajectory '${tr.id}': ${(e as Error).message}`);
    }
  }
  if (long > 0) {
    process.stderr.write(
      `egogeo: note: ${long} trajector${long === 1 ? 'y spans' : 'ies span'} more than ${duration} s; only the first ${duration} s ` +
        'are labelled (use --windows or --duration span)\n',
    );
  }
  return out;
}


/** One output record: `{id, features, labels}` and, if asked, the arrays in the golden layout. */
export function oracleRecord(id: string, r: OracleResult, withArrays: boolean): Record<string, unknown> {
  const rec: Record<string, unknown> = { id, features: r.features, labels: r.labels };
  if (withArrays) {
    const a = r.arrays;
    rec.arrays = {
      timestamps: Array.from(a.timestamps),
      position: { x: Array.from(a.x), y: Array.from(a.y) },
      yaw: Array.from(a.yaw),
      speed: Array.from(a.speed),
      accel: Array.from(a.accel),
      yaw_rate: Array.from(a.yaw_rate),
      jerk: Array.from(a.jerk),
    };
  }
  return rec;
}
