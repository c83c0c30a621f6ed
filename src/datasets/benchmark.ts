/**
 * The benchmark's on-disk layout (EgoDyn-Bench's own writers; `egogeo synth` writes the same):
 *
 *   DIR/clips_index.jsonl   one record per clip: `clip_id`, optional `source`, and either
 *                           `frame_paths` (nuScenes/KITTI style: image files, relative to DIR) with
 *                           `frame_timestamps`, or `video_path` (CARLA style: one mp4 per clip,
 *                           relative to DIR; default `videos/<clip_id>.mp4` when neither is given);
 *                           optional `array_ref` (`arrays/<clip_id>.npz`), `intrinsics`
 *                           ({fx, fy, cx, cy} or a 3×3 `camera_intrinsic`), `camera_height`, `fps`
 *   DIR/metadata.json       optional (`egogeo synth`): the camera of each clip (intrinsics, mount
 *                           height) for records that do not carry their own
 *   DIR/qa.jsonl            the QA items (`qa_id`, `clip_id`, `question_id`, `category`, `answer`)
 *   DIR/arrays/*.npz        the oracle's ground-truth arrays on the 10 Hz grid (timestamps,
 *                           position (N×2), yaw, speed, accel, yaw_rate, jerk)
 *
 * plus an optional clip list in the shape of the reference's `selected_clips.json` (a list of
 * `{id, source, ...}` objects or of ids) that filters and orders the clips.
 *
 * Every clip gets its source (label override > record `source` > the list's `source` > inferred
 * from the id like the reference: `clip_*` is nuScenes, `kitti*` KITTI, anything else CARLA), its
 * intrinsics (record > metadata.json > KITTI `calib.txt` when the frames are a KITTI sequence's >
 * none, which the engine reads as core/clip.ts `defaultIntrinsics`) and its camera height
 * (record > metadata.json > KITTI's 1.65 m under KITTI frames > known rig for the source > the
 * engine's default). Parsing only: nothing is decoded here. May import: core/, io/, datasets/.
 */
import { sourceFromClipId } from '../core/prediction.js';
import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { Camera, Clip, Intrinsics } from '../core/clip.js';
import { InputError } from '../core/errors.js';
import { readInputText } from '../io/safety.js';
import { type CameraOverrides, overrideCamera, readCamerasFile } from './cameras.js';
import { type KittiCache, kittiTrajectory } from './groundtruth.js';
import { KITTI_CAMERA_HEIGHT, kittiClips, readCalib, readKittiSequence } from './kitti.js';
import { readPublished } from './published.js';
import { detectLayout } from './layout.js';
import { arrange, type Benchmark, type BenchmarkOptions, type QaItem, readJsonlRecords, readQa } from './records.js';

// The shared record types and readers, re-exported for this module's importers.
export {
  arrange,
  type Benchmark,
  type BenchmarkOptions,
  CARLA_DOMAINS,
  type CarlaDomain,
  type Clip,
  ClipDataError,
  type QaItem,
  readClipList,
  readJsonlRecords,
  readQa,
} from './records.js';

/** Camera heights above the road (metres) of the known rigs; others use the engine's default. */
export const CAMERA_HEIGHTS: Readonly<Record<string, number>> = {
  kitti: KITTI_CAMERA_HEIGHT,
  // nuScenes CAM_FRONT: calibrated_sensor translation z ≈ 1.51 m above the ego frame on the ground.
  nuscenes: 1.51,
};

/** Reads a benchmark dataset directory (see the module comment). */
export function readBenchmark(dir: string, opts: BenchmarkOptions = {}): Benchmark {
  const root = resolve(dir);
  const indexPath = join(root, 'clips_index.jsonl');
  if (!existsSync(root)) throw new InputError(`${dir}: no such dataset directory`);
  if (!existsSync(indexPath)) throw new InputError(`${dir}: missing clips_index.jsonl (not a benchmark dataset directory)`);
  const records = readJsonlRecords(indexPath);

  const qaPath = join(root, 'qa.jsonl');
  const hasQa = existsSync(qaPath);
  const qaByClip = hasQa ? readQa(qaPath) : new Map<string, QaItem[]>();

  const byId = new Map<string, Clip>();
  const order: string[] = [];
  const calibCache = new Map<string, Intrinsics | undefined>();
  const cameras = readCameras(root);
  const recordSource = new Set<string>();
  for (const { rec, line } of records) {
    const where = `${indexPath}:${line}`;
    const id = rec.clip_id;
    if (typeof id !== 'string' || !id) throw new InputError(`${where}: field 'clip_id' must be a non-empty string`);
    if (byId.has(id)) throw new InputError(`${where}: clip '${id}' appears twice in clips_index.jsonl`);
    byId.set(id, clipFromRecord(root, rec, id, where, qaByClip.get(id) ?? [], calibCache, cameras.get(id)));
    if (typeof rec.source === 'string' && rec.source) recordSource.add(id);
    order.push(id);
  }

  const clips = arrange(byId, order, opts, recordSource, basename(indexPath), qaByClip);
  // Ground truth under KITTI frames: each sequence's poses read once for all its clips.
  const cache: KittiCache = new Map();
  for (const c of clips) if (c.frames) c.groundTruth = kittiTrajectory(c.id, c.frames as string[], cache) ?? undefined;
  return { dir: root, clips, hasQa };
}

/**
 * A dataset directory: the benchmark layout (clips_index.jsonl), or a KITTI odometry sequence
 * (image_0/, times.txt, calib.txt, poses.txt) read as its benchmark windows — 31 frames every 5,
 * ids `kitti{SEQ}_{START:06d}`, no QA items (labels come from the poses).
 */
export function readDataset(dir: string, opts: BenchmarkOptions = {}): Benchmark {
  const b = readLayout(dir, opts);
  if (opts.cameras) applyCameraOverrides(b.clips, readCamerasFile(opts.cameras), opts.cameras, opts.log ?? (() => {}));
  return b;
}

/**
 * `--cameras` overrides, per source, over what the dataset says. A source that differs from one of
 * the dataset's only in case is a typo (an error); one the dataset does not have gets a note.
 */
function applyCameraOverrides(clips: Clip[], overrides: CameraOverrides, file: string, log: (line: string) => void): void {
  const sources = [...new Set(clips.map((c) => c.source))];
  for (const key of overrides.keys()) {
    if (sources.includes(key)) continue;
    const near = sources.find((s) => s.toLowerCase() === key.toLowerCase());
    if (near) throw new InputError(`${file}: source '${key}' is not a source of this dataset; did you mean '${near}'? (sources are case-sensitive)`);
    log(`note: ${file}: no clip has source '${key}' (sources here: ${sources.join(', ')}); its camera is not used`);
  }
  for (const c of clips) {
    const o = overrides.get(c.source);
    if (o) c.camera = overrideCamera(c.camera, o, '--cameras');
  }
}

function readLayout(dir: string, opts: BenchmarkOptions): Benchmark {
  const root = resolve(dir);
  const layout = detectLayout(root);
  if (layout === 'published') return readPublished(root, opts);
  if (layout !== 'kitti') return readBenchmark(dir, opts); // null: readBenchmark names what is missing
  const byId = new Map<string, Clip>();
  const order: string[] = [];
  for (const c of kittiClips(readKittiSequence(root))) {
    byId.set(c.id, c);
    order.push(c.id);
  }
  if (order.length === 0) throw new InputError(`${dir}: fewer than 31 frames, no benchmark window`);
  return { dir: root, clips: arrange(byId, order, opts, new Set(order), `the windows of ${basename(root)}`), hasQa: false };
}

/**
 * Where a benchmark record's frames are, as `run` reads them (and `validate` checks them): a
 * non-empty `frame_paths` (image files), else `video_path`, else `videos/<clip_id>.mp4`; paths
 * relative to the dataset folder. An empty `frame_paths` beside a video is the video's clip.
 */
export function clipMedia(root: string, rec: Record<string, unknown>, id: string, where: string): { frames: string[] } | { video: string } {
  const abs = (p: string) => (isAbsolute(p) ? p : join(root, p));
  const fp = rec.frame_paths;
  if (Array.isArray(fp) && fp.length > 0) {
    if (fp.some((p) => typeof p !== 'string' || !p)) throw new InputError(`${where}: field 'frame_paths' must be a list of paths`);
    return { frames: (fp as string[]).map(abs) };
  }
  if (typeof rec.video_path === 'string' && rec.video_path) return { video: abs(rec.video_path) };
  return { video: join(root, 'videos', `${id}.mp4`) };
}

function clipFromRecord(
  root: string,
  rec: Record<string, unknown>,
  id: string,
  where: string,
  qa: QaItem[],
  calibCache: Map<string, Intrinsics | undefined>,
  meta?: MetadataCamera,
): Clip {
  const source = typeof rec.source === 'string' && rec.source ? rec.source : sourceFromClipId(id);
  const camera: Camera = {};
  const clip: Clip = { index: 0, id, source, camera, qa };
  const abs = (p: string) => (isAbsolute(p) ? p : join(root, p));

  const media = clipMedia(root, rec, id, where);
  if ('frames' in media) clip.frames = media.frames;
  else clip.video = media.video;

  const ts = rec.frame_timestamps;
  if (Array.isArray(ts) && ts.length > 0) {
    if (ts.some((t) => typeof t !== 'number' || !Number.isFinite(t))) throw new InputError(`${where}: field 'frame_timestamps' must be a list of finite numbers`);
    for (let i = 1; i < ts.length; i++) {
      if (!((ts[i] as number) > (ts[i - 1] as number))) throw new InputError(`${where}: field 'frame_timestamps' must be strictly increasing (index ${i})`);
    }
    if (clip.frames && ts.length !== clip.frames.length) {
      throw new InputError(`${where}: ${clip.frames.length} frame_paths but ${ts.length} frame_timestamps`);
    }
    clip.timestamps = Float64Array.from(ts as number[]);
  } else if (clip.frames) {
    throw new InputError(`${where}: field 'frame_paths' needs 'frame_timestamps' (one per frame)`);
  }
  if (rec.fps !== undefined) {
    if (typeof rec.fps !== 'number' || !(rec.fps > 0)) throw new InputError(`${where}: field 'fps' must be a positive number`);
    clip.fps = rec.fps;
  }

  const kittiK = clip.frames ? kittiCalibFor(clip.frames[0] as string, calibCache) : undefined;
  const recK = recordIntrinsics(rec, where);
  camera.intrinsics = recK ?? meta?.intrinsics ?? kittiK;
  camera.from = recK ? 'the record' : meta?.intrinsics ? 'metadata.json' : kittiK ? 'KITTI calib.txt' : 'default';
  const ch = rec.camera_height;
  if (ch !== undefined) {
    if (typeof ch !== 'number' || !(ch > 0)) throw new InputError(`${where}: field 'camera_height' must be a positive number (metres)`);
    camera.height = ch;
  } else {
    camera.height = meta?.height ?? (kittiK ? KITTI_CAMERA_HEIGHT : CAMERA_HEIGHTS[source]);
  }

  if (typeof rec.array_ref === 'string' && rec.array_ref) clip.arrays = abs(rec.array_ref);
  else if (rec.array_ref !== undefined && rec.array_ref !== null) throw new InputError(`${where}: field 'array_ref' must be a path`);
  if (rec.features && typeof rec.features === 'object' && !Array.isArray(rec.features)) clip.features = rec.features as Record<string, unknown>;
  return clip;
}

/** A clip's camera as metadata.json gives it. */
interface MetadataCamera {
  intrinsics?: Intrinsics;
  height?: number;
}

/**
 * Per-clip cameras from `metadata.json` when the dataset has one (`egogeo synth` writes
 * `cameras: {preset: {fx, fy, cx, cy, mountHeight}}` and `clip_presets: {clip_id: preset}`);
 * an unusable file gives none (it is optional, and the benchmark's own layout has none).
 */
function readCameras(root: string): Map<string, MetadataCamera> {
  const out = new Map<string, MetadataCamera>();
  const p = join(root, 'metadata.json');
  if (!existsSync(p)) return out;
  let meta: { cameras?: Record<string, Record<string, unknown>>; clip_presets?: Record<string, string> };
  try {
    meta = JSON.parse(readInputText(p, 'metadata file'));
  } catch (e) {
    throw new InputError(`${p}: invalid JSON (${(e as Error).message.split('\n')[0]})`);
  }
  const cams = meta?.cameras, presets = meta?.clip_presets;
  if (!cams || typeof cams !== 'object' || !presets || typeof presets !== 'object') return out;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  for (const [clip, preset] of Object.entries(presets)) {
    const c = cams[preset];
    if (!c || typeof c !== 'object') continue;
    const [fx, fy, cx, cy] = [c.fx, c.fy, c.cx, c.cy].map(num);
    const height = num(c.mountHeight ?? c.camera_height);
    out.set(clip, {
      intrinsics: fx && fy && fx > 0 && fy > 0 && cx !== undefined && cy !== undefined ? { fx, fy, cx, cy } : undefined,
      height: height && height > 0 ? height : undefined,
    });
  }
  return out;
}

/** `intrinsics: {fx, fy, cx, cy}` or a 3×3 `camera_intrinsic` / `K` (nuScenes' calibrated_sensor). */
function recordIntrinsics(rec: Record<string, unknown>, where: string): Intrinsics | undefined {
  const o = rec.intrinsics;
  if (o !== undefined && o !== null) {
    const k = o as Record<string, unknown>;
    const v = ['fx', 'fy', 'cx', 'cy'].map((f) => k[f]);
    if (v.some((e) => typeof e !== 'number' || !Number.isFinite(e)) || (v[0] as number) <= 0 || (v[1] as number) <= 0) {
      throw new InputError(`${where}: field 'intrinsics' must be {fx, fy, cx, cy} with positive focal lengths`);
    }
    return { fx: v[0] as number, fy: v[1] as number, cx: v[2] as number, cy: v[3] as number };
  }
  const m = rec.camera_intrinsic ?? rec.K;
  if (m !== undefined && m !== null) {
    const flat = Array.isArray(m) ? (m as unknown[]).flat() : [];
    if (flat.length !== 9 || flat.some((e) => typeof e !== 'number' || !Number.isFinite(e)) || !((flat[0] as number) > 0)) {
      throw new InputError(`${where}: field '${rec.camera_intrinsic !== undefined ? 'camera_intrinsic' : 'K'}' must be a 3×3 matrix`);
    }
    const f = flat as number[];
    return { fx: f[0], fy: f[4], cx: f[2], cy: f[5] };
  }
  return undefined;
}

/** KITTI intrinsics when `frame` lies in a KITTI sequence (`<seq>/image_N/` next to calib.txt). */
function kittiCalibFor(frame: string, cache: Map<string, Intrinsics | undefined>): Intrinsics | undefined {
  if (!/^image_\d$/.test(basename(dirname(frame)))) return undefined;
  const seq = dirname(dirname(frame));
  if (cache.has(seq)) return cache.get(seq);
  const calib = join(seq, 'calib.txt');
  const k = existsSync(calib) ? readCalib(calib) : undefined;
  cache.set(seq, k);
  return k;
}
