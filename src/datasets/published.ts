/**
 * EgoDyn-Bench as it is published (its Hugging Face dataset; SPEC.md, "The benchmark as
 * published"):
 *
 *   ROOT/selected_clips.json                 [{id, source, answers, features}] — the clips, in order
 *   ROOT/nuscenes_clips/clips_index.jsonl    frame_tokens, frame_paths (relative to the nuScenes
 *                                            data root); no timestamps, no intrinsics, no source
 *   ROOT/carla_clips/clips_index.jsonl       clip_id, scene, behavior, …, maybe a video_path on the
 *                                            authors' machine; frame time = index / 10
 *   ROOT/{nuscenes,carla}_clips/qa.jsonl, arrays/<clip_id>.npz
 *   ROOT/carla_videos_{simulation,transferred}/<clip_id>.mp4
 *
 * nuScenes clips get their timestamps (µs → s from the first frame), intrinsics, camera height
 * (calibrated sensor translation z) and road normal (mount rotation) from the nuScenes tables
 * through `frame_tokens` (src/datasets/nuscenes.ts, streamed and cached). CARLA clips read the
 * chosen domain's video; a record's `video_path` is used only when that folder lacks the clip.
 * A folder holding only one of nuscenes_clips/ or carla_clips/ works too. May import: core/,
 * io/, datasets/.
 */
import { PUBLISHED_PARTS } from './layout.js';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { InputError } from '../core/errors.js';
import {
  arrange,
  type Benchmark,
  type BenchmarkOptions,
  type Clip,
  type CarlaDomain,
  type QaItem,
  readJsonlRecords,
  readQa,
} from './records.js';
import { CARLA_DEFAULT_CAMERA } from './cameras.js';
import { joinNuscenes, mountedCamera } from './nuscenes.js';

const PARTS = PUBLISHED_PARTS;
/** CARLA's published videos are 10 fps: frame time = index / 10 (the reference's writer). */
export const CARLA_FPS = 10;


interface Part {
  source: 'nuscenes' | 'carla';
  dir: string;
  records: { rec: Record<string, unknown>; line: number }[];
  qa: Map<string, QaItem[]>;
}

export function readPublished(root: string, opts: BenchmarkOptions): Benchmark {
  const log = opts.log ?? (() => {});
  const parts: Part[] = [];
  for (const [source, name] of Object.entries(PARTS) as ['nuscenes' | 'carla', string][]) {
    const dir = join(root, name);
    const index = join(dir, 'clips_index.jsonl');
    if (!existsSync(index)) continue;
    const qaPath = join(dir, 'qa.jsonl');
    parts.push({ source, dir, records: readJsonlRecords(index), qa: existsSync(qaPath) ? readQa(qaPath) : new Map() });
  }

  const byId = new Map<string, Clip>();
  const order: string[] = [];
  const where = new Map<string, string>();
  for (const p of parts) {
    for (const { rec, line } of p.records) {
      const w = `${join(p.dir, 'clips_index.jsonl')}:${line}`;
      const id = rec.clip_id;
      if (typeof id !== 'string' || !id) throw new InputError(`${w}: field 'clip_id' must be a non-empty string`);
      if (byId.has(id)) throw new InputError(`${w}: clip '${id}' is also at ${where.get(id)}`);
      where.set(id, w);
      const clip: Clip = { index: 0, id, source: typeof rec.source === 'string' && rec.source ? rec.source : p.source, camera: {}, qa: p.qa.get(id) ?? [] };
      if (typeof rec.array_ref === 'string' && rec.array_ref) clip.arrays = join(p.dir, rec.array_ref);
      if (rec.features && typeof rec.features === 'object' && !Array.isArray(rec.features)) clip.features = rec.features as Record<string, unknown>;
      byId.set(id, clip);
      order.push(id);
    }
  }
  // selected_clips.json decides the clips and their order (an explicit --clips list wins).
  const listed = join(root, 'selected_clips.json');
  const selected = opts.selected ?? (existsSync(listed) ? listed : undefined);
  const present = parts.map((p) => `${PARTS[p.source]}/`).join(' or ');
  const clips = arrange(byId, order, { ...opts, selected }, new Set(order), present, new Map(parts.flatMap((p) => [...p.qa])));
  const wanted = new Set(clips.filter((c) => !c.problem).map((c) => c.id));

  const needFrames = opts.needFrames ?? true;
  const recordOf = new Map(parts.flatMap((p) => p.records.map((r) => [r.rec.clip_id as string, { ...r, part: p }] as const)));
  const nus = clips.filter((c) => wanted.has(c.id) && recordOf.get(c.id)!.part.source === 'nuscenes');
  const carla = clips.filter((c) => wanted.has(c.id) && recordOf.get(c.id)!.part.source === 'carla');

  if (needFrames && nus.length > 0) {
    if (!opts.nuscenesRoot) throw new InputError(`${root}: ${nus.length} nuScenes clip(s) selected; give --nuscenes-root DIR (the nuScenes data root with samples/, sweeps/ and v1.0-trainval/)`);
    resolveNuscenes(nus, recordOf, opts.nuscenesRoot, opts.cacheDir, log);
  }
  if (carla.length > 0) resolveCarla(root, carla, recordOf, opts.carlaDomain ?? 'simulation', log);
  return { dir: root, clips, hasQa: parts.some((p) => p.qa.size > 0) };
}

type Records = ReadonlyMap<string, { rec: Record<string, unknown>; line: number; part: Part }>;

function resolveNuscenes(clips: Clip[], recordOf: Records, nuscenesRoot: string, cacheDir: string | null | undefined, log: (l: string) => void): void {
  const tokensOf = new Map<string, string[]>();
  const pathsOf = new Map<string, string[]>();
  for (const c of clips) {
    const { rec, line, part } = recordOf.get(c.id)!;
    const w = `${join(part.dir, 'clips_index.jsonl')}:${line}`;
    const tokens = rec.frame_tokens, paths = rec.frame_paths;
    if (!Array.isArray(tokens) || tokens.length === 0 || tokens.some((t) => typeof t !== 'string' || !t)) throw new InputError(`${w}: field 'frame_tokens' must be a list of sample_data tokens`);
    if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string' || !p)) throw new InputError(`${w}: field 'frame_paths' must be a list of paths relative to the nuScenes root`);
    if (paths.length !== tokens.length) throw new InputError(`${w}: ${paths.length} frame_paths but ${tokens.length} frame_tokens`);
    tokensOf.set(c.id, tokens as string[]);
    pathsOf.set(c.id, paths as string[]);
    c.frames = (paths as string[]).map((p) => join(nuscenesRoot, p));
  }
  const j = joinNuscenes(nuscenesRoot, [...tokensOf.values()].flat(), { cacheDir, log });
  if (j.cached) log(`nuScenes tables: ${j.frames.size} frames from the cache ${j.cacheFile}`);
  for (const c of clips) {
    const tokens = tokensOf.get(c.id)!;
    const miss = tokens.find((t) => j.missing.has(t) || !j.frames.has(t));
    if (miss) {
      c.problem = `frame token ${miss} is not in ${join(j.tables, 'sample_data.json')}`;
      continue;
    }
    const rows = tokens.map((t) => j.frames.get(t)!);
    // The tables name each token's file: frame_paths must name the same files in the same order
    // (a reordered list would be read backwards or shuffled in time without a word).
    const paths = pathsOf.get(c.id)!;
    const off = rows.findIndex((r, i) => basename(r.filename) !== basename(paths[i]));
    if (off >= 0) {
      c.problem = `frame ${off}: frame_paths names ${paths[off]} but its frame_token ${tokens[off]} is ${rows[off].filename} in ${join(j.tables, 'sample_data.json')} (the two lists disagree)`;
      continue;
    }
    const us = rows.map((r) => r.timestamp);
    const bad = us.findIndex((t, i) => i > 0 && !(t > us[i - 1]));
    if (bad > 0) {
      c.problem = `frame timestamps are not increasing at frame ${bad} (sample_data ${tokens[bad]})`;
      continue;
    }
    c.timestamps = Float64Array.from(us, (t) => (t - us[0]) / 1e6);
    c.timeOrigin = us[0] / 1e6;
    const sensor = j.sensors.get(rows[0].calibrated_sensor_token);
    if (!sensor) {
      c.problem = `calibrated_sensor ${rows[0].calibrated_sensor_token} is not in ${join(j.tables, 'calibrated_sensor.json')}`;
      continue;
    }
    try {
      const cam = mountedCamera(sensor);
      c.camera = { intrinsics: cam.intrinsics, height: cam.height, roadNormal: cam.roadNormal, from: `nuScenes calibrated_sensor ${sensor.token}${sensor.channel ? ` (${sensor.channel})` : ''}` };
    } catch (e) {
      c.problem = (e as Error).message;
    }
  }
}

function resolveCarla(root: string, clips: Clip[], recordOf: Records, domain: CarlaDomain, log: (l: string) => void): void {
  const folder = join(root, `carla_videos_${domain}`);
  let fellBack = 0, elsewhere = 0;
  for (const c of clips) {
    const { rec } = recordOf.get(c.id)!;
    const inFolder = join(folder, `${c.id}.mp4`);
    const named = typeof rec.video_path === 'string' && rec.video_path ? rec.video_path : null;
    const namedExists = named !== null && existsSync(named);
    if (named && !namedExists) fellBack++;
    if (!existsSync(inFolder) && namedExists) {
      c.video = named;
      elsewhere++;
    } else {
      c.video = inFolder; // when missing, the run names it in the errors file for this clip
    }
    c.fps = typeof rec.fps === 'number' && rec.fps > 0 ? rec.fps : CARLA_FPS;
    c.camera = { ...CARLA_DEFAULT_CAMERA };
  }
  if (fellBack > 0) log(`${fellBack} CARLA record(s) name a video_path that does not exist here; reading carla_videos_${domain}/<clip_id>.mp4 instead`);
  if (elsewhere > 0) log(`${elsewhere} CARLA clip(s) are not in carla_videos_${domain}/; reading the record's video_path`);
}
