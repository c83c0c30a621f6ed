/**
 * Datasets in the benchmark's layout, made by the tests: from the KITTI windows of ../shared when
 * it exists (frame paths point into it, nothing is copied), and from frames the in-test renderer
 * draws (test/helpers/render.ts) otherwise. Plus the compiled CLI the spawn tests run.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeNpz } from '../../src/io/npz.js';
import { writeMp4 as nativeWriteMp4 } from '../../src/native/index.js';
import { computeDynamics } from '../../src/oracle/index.js';
import { drivingClip } from '../helpers/render.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

export { needsShared, sharedPath };

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin/egogeo.js');
export const NATIVE_BUILT = existsSync(join(ROOT, 'build/Release/egogeo_native.node')) || !!process.env.EGOGEO_NATIVE;
export const EGODYN_KITTI = sharedPath('data/egodyn_kitti');
export const HAS_EGODYN_KITTI = needsShared('the KITTI-window tests (the synthetic ones still run)', 'data/egodyn_kitti/clips_index.jsonl', 'data/egodyn_kitti/qa.jsonl');

if (!NATIVE_BUILT) console.warn('[egogeo tests] the native engine is not built: the run/report tests that need VO are skipped (npm run build:native).');

const newest = (dir: string): number => {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
};

/**
 * The spawn tests run `node bin/egogeo.js`, i.e. dist/ through its bundle (scripts/bundle.mjs, as
 * `npm run build` leaves it): compile and bundle it when src/ is newer. One test file at a time
 * builds (a lock directory); the others wait for it.
 */
export function ensureDist(): void {
  const stamp = join(ROOT, 'dist/run/worker.js');
  const bundle = join(ROOT, 'dist/bundle/main.js');
  const fresh = () =>
    existsSync(stamp) && existsSync(join(ROOT, 'dist/cli/main.js')) && existsSync(bundle) && statSync(stamp).mtimeMs >= newest(join(ROOT, 'src')) - 1 && statSync(bundle).mtimeMs >= statSync(join(ROOT, 'dist/cli/main.js')).mtimeMs;
  if (fresh()) return;
  const lock = join(ROOT, 'dist/.egogeo-test-build.lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${lock}: another test run holds the build lock`);
      spawnSync('sleep', ['0.2']);
      if (fresh()) return;
    }
  }
  try {
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.json')], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tsc failed:\n${r.stdout}${r.stderr}`);
    const b = spawnSync(process.execPath, [join(ROOT, 'scripts/bundle.mjs')], { cwd: ROOT, encoding: 'utf8' });
    if (b.status !== 0) throw new Error(`scripts/bundle.mjs failed:\n${b.stdout}${b.stderr}`);
  } finally {
    rmdirSync(lock);
  }
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `node bin/egogeo.js ARGS`; `env` adds to (or, with undefined values, removes from) the environment. */
export function cli(args: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}): CliResult {
  const env: Record<string, string | undefined> = { ...process.env, FORCE_COLOR: '0', ...opts.env };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? ROOT, encoding: 'utf8', env });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const jsonl = (rows: unknown[]): string => rows.map((r) => `${JSON.stringify(r)}\n`).join('');
export const readJsonl = <T = Record<string, unknown>>(p: string): T[] =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);

/**
 * A copy of ../shared/data/egodyn_kitti restricted to `ids` (in that order), frame paths made
 * absolute (the frames stay where they are); arrays and QA items copied.
 */
export function kittiSubset(dir: string, ids: string[]): string {
  mkdirSync(join(dir, 'arrays'), { recursive: true });
  const recs = new Map(readJsonl<{ clip_id: string; frame_paths: string[]; array_ref: string }>(join(EGODYN_KITTI, 'clips_index.jsonl')).map((r) => [r.clip_id, r]));
  const out = ids.map((id) => {
    const r = recs.get(id);
    if (!r) throw new Error(`${id}: not in egodyn_kitti`);
    copyFileSync(join(EGODYN_KITTI, r.array_ref), join(dir, r.array_ref));
    return { ...r, frame_paths: r.frame_paths.map((p) => resolve(EGODYN_KITTI, p)) };
  });
  writeFileSync(join(dir, 'clips_index.jsonl'), jsonl(out));
  const want = new Set(ids);
  writeFileSync(join(dir, 'qa.jsonl'), jsonl(readJsonl<{ clip_id: string }>(join(EGODYN_KITTI, 'qa.jsonl')).filter((q) => want.has(q.clip_id))));
  return dir;
}

export const CAMERA = { width: 320, height: 180, fx: 288, fy: 288, cx: 159.5, cy: 89.5 };

export interface SynthClipSpec {
  id: string;
  speed: number;
  yawRate: number;
  seed?: number;
  source?: string;
  frames?: number;
}

const pgm = (f: { data: Uint8Array; width: number; height: number }): Buffer =>
  Buffer.concat([Buffer.from(`P5\n${f.width} ${f.height}\n255\n`), Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength)]);

/**
 * A benchmark-layout dataset of rendered clips (frames as PGM, 10 Hz, intrinsics and camera height
 * in the record, two QA items per clip: the turn direction and the speed regime, labelled from the
 * known motion). No ground-truth arrays.
 */
export function syntheticDataset(dir: string, specs: SynthClipSpec[], o: { arrays?: boolean } = {}): string {
  const index: unknown[] = [];
  const qa: unknown[] = [];
  let q = 0;
  for (const s of specs) {
    const clip = drivingClip({ frames: s.frames ?? 16, speed: s.speed, yawRate: s.yawRate, seed: s.seed ?? 1, camera: CAMERA, supersample: 1 });
    const fdir = join(dir, 'frames', s.id);
    mkdirSync(fdir, { recursive: true });
    const paths = clip.frames.map((f, i) => {
      const rel = `frames/${s.id}/${String(i).padStart(4, '0')}.pgm`;
      writeFileSync(join(dir, rel), pgm(f));
      return rel;
    });
    index.push({
      clip_id: s.id,
      source: s.source ?? 'synthetic',
      frame_paths: paths,
      frame_timestamps: Array.from(clip.timestamps),
      num_frames: paths.length,
      intrinsics: clip.intrinsics,
      camera_height: clip.cameraHeight,
      ...(o.arrays ? { array_ref: `arrays/${s.id}.npz` } : {}),
    });
    if (o.arrays) {
      // The oracle's arrays of the rendered truth (camera centre (−Y, 0, X) → planar X forward, Y left).
      const truth = { id: s.id, t: clip.timestamps, x: Float64Array.from(clip.poses, (p) => p.C[2]), y: Float64Array.from(clip.poses, (p) => -p.C[0]), yaw: Float64Array.from(clip.yaw) };
      const a = computeDynamics(truth);
      const n = a.timestamps.length;
      const position = new Float64Array(2 * n);
      for (let i = 0; i < n; i++) [position[2 * i], position[2 * i + 1]] = [a.x[i], a.y[i]];
      mkdirSync(join(dir, 'arrays'), { recursive: true });
      const v = (d: Float64Array) => ({ shape: [n], data: d });
      writeNpz(join(dir, 'arrays', `${s.id}.npz`), { timestamps: v(a.timestamps), position: { shape: [n, 2], data: position }, yaw: v(a.yaw), speed: v(a.speed), accel: v(a.accel), yaw_rate: v(a.yaw_rate), jerk: v(a.jerk) });
    }
    const turn = s.yawRate > 0.04 ? 'left' : s.yawRate < -0.04 ? 'right' : 'straight';
    qa.push({ qa_id: `qa_${String(q++).padStart(8, '0')}`, clip_id: s.id, question_id: 'yaw_rate_turn_direction', category: 'direct_dynamics', answer: turn });
    const regime = s.speed < 0.5 ? 'stopped' : s.speed < 5 ? 'slow' : s.speed < 13.9 ? 'urban' : 'highway';
    qa.push({ qa_id: `qa_${String(q++).padStart(8, '0')}`, clip_id: s.id, question_id: 'speed_regime', category: 'direct_dynamics', answer: regime });
  }
  writeFileSync(join(dir, 'clips_index.jsonl'), jsonl(index));
  writeFileSync(join(dir, 'qa.jsonl'), jsonl(qa));
  return dir;
}

/** Appends records to a dataset's clips_index.jsonl / qa.jsonl. */
export function appendRecords(dir: string, index: unknown[], qa: unknown[] = []): void {
  writeFileSync(join(dir, 'clips_index.jsonl'), readFileSync(join(dir, 'clips_index.jsonl'), 'utf8') + jsonl(index));
  writeFileSync(join(dir, 'qa.jsonl'), readFileSync(join(dir, 'qa.jsonl'), 'utf8') + jsonl(qa));
}

/** Writes greyscale frames as an mp4 (MPEG-4 part 2, 'mp4v') with the addon's encoder; false when the addon is not built. */
export function writeMp4(path: string, frames: { data: Uint8Array; width: number; height: number }[], fps = 10): boolean {
  if (!NATIVE_BUILT) return false;
  nativeWriteMp4(path, frames, fps);
  return true;
}

/** The opencv4nodejs binding as src/datasets/video.ts loads it (one thread per process). */
type CvAny = Record<string, any>;

function opencvForTests(): CvAny {
  process.env.OPENCV4NODEJS_DISABLE_EXTERNAL_MEM_TRACKING = '1';
  const require = createRequire(import.meta.url);
  const main = require.resolve('@u4/opencv4nodejs');
  return require(join(dirname(main), '../../build/Release/opencv4nodejs.node'));
}

/** Whether opencv4nodejs loads here (video tests skip otherwise). */
export const HAS_OPENCV4NODEJS = (() => {
  try {
    opencvForTests();
    return true;
  } catch {
    return false;
  }
})();
if (!HAS_OPENCV4NODEJS) console.warn('[egogeo tests] @u4/opencv4nodejs is not built (npm run setup -- --with-opencv4nodejs): the tests of src/datasets/video.ts (JavaScript-side mp4 decoding) are skipped.');

/** `syntheticDataset` in the CARLA layout: one mp4 per clip (`video_path`), no frame files. */
export function syntheticVideoDataset(dir: string, specs: SynthClipSpec[]): string {
  const index: unknown[] = [];
  const qa: unknown[] = [];
  mkdirSync(join(dir, 'videos'), { recursive: true });
  let q = 0;
  for (const s of specs) {
    const clip = drivingClip({ frames: s.frames ?? 16, speed: s.speed, yawRate: s.yawRate, seed: s.seed ?? 1, camera: CAMERA, supersample: 1 });
    writeMp4(join(dir, 'videos', `${s.id}.mp4`), clip.frames);
    index.push({ clip_id: s.id, source: s.source ?? 'carla', video_path: `videos/${s.id}.mp4`, intrinsics: clip.intrinsics, camera_height: clip.cameraHeight });
    const turn = s.yawRate > 0.04 ? 'left' : s.yawRate < -0.04 ? 'right' : 'straight';
    qa.push({ qa_id: `qa_${String(q++).padStart(8, '0')}`, clip_id: s.id, question_id: 'yaw_rate_turn_direction', category: 'direct_dynamics', answer: turn });
  }
  writeFileSync(join(dir, 'clips_index.jsonl'), jsonl(index));
  writeFileSync(join(dir, 'qa.jsonl'), jsonl(qa));
  return dir;
}

/**
 * Flattens the road (the rows below the horizon) of a `syntheticDataset` clip's frames to one
 * grey: the scale then has nothing to rest on and the clip's verdict is 'failed' (vo/quality.ts),
 * its scale-dependent answers withheld.
 */
export function flattenRoad(dir: string, id: string): void {
  const fdir = join(dir, 'frames', id);
  const header = `P5\n${CAMERA.width} ${CAMERA.height}\n255\n`.length;
  for (const f of readdirSync(fdir)) {
    const b = readFileSync(join(fdir, f));
    b.fill(110, header + (Math.ceil(CAMERA.cy) + 4) * CAMERA.width);
    writeFileSync(join(fdir, f), b);
  }
}
