/**
 * Writes a synthetic dataset in the benchmark's on-disk layout (the same as
 * `../shared/data/egodyn_kitti`, written by the reference's own writers):
 *
 *   DIR/clips_index.jsonl       one record per clip, the reference's fields and key order
 *                               (clip_id, source "synthetic", scene_token, sample_token, t_start,
 *                               t_end, camera, frame_tokens, frame_paths, frame_timestamps,
 *                               num_frames, array_ref, split, features) + video_path with --video
 *   DIR/arrays/<clip_id>.npz    the oracle's arrays (timestamps, position N×2, yaw, speed, accel,
 *                               yaw_rate, jerk; float64), as np.savez_compressed writes them
 *   DIR/qa.jsonl                14 QA items per clip (qa.ts), answers from the oracle
 *   DIR/frames/<clip_id>/NNNNNN.jpg   or, with --video, DIR/videos/<clip_id>.mp4
 *   DIR/metadata.json           dataset-level metadata (as the reference's extractors write):
 *                               seed, presets, camera intrinsics and height, answer distribution
 *
 * Rendering runs one clip per pool worker (src/pool). Everything is written into a staging
 * folder next to DIR and renamed into place at the end, so DIR is either complete or untouched.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../core/errors.js';
import { publishDir, stageDir } from '../io/atomic.js';
import { writeNpz } from '../io/npz.js';
import { native } from '../native/index.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions, type QuestionSet } from '../oracle/index.js';
import { runPool } from '../pool/index.js';
import { labelDistribution, planDataset, type SynthClip } from './plan.js';
import { PRESETS, CLIP_SECONDS, type PresetName } from './presets.js';
import type { ProfileName } from './profiles.js';
import type { SpeedRange } from './scenarios.js';
import { qaRecords } from './qa.js';
import type { JpegEncoder, RenderTask, RenderTaskResult } from './task.js';

export interface SynthOptions {
  /** Output folder (created; must be absent or empty unless `force`). */
  out: string;
  clips: number;
  seed: number;
  preset: PresetName | 'mixed';
  profile?: ProfileName;
  /** Cruise speeds (m/s, `--speed MIN:MAX`): the cruising scenarios only, at these speeds. */
  speed?: SpeedRange;
  /** One mp4 per clip instead of JPEG frames. */
  video?: boolean;
  workers?: number;
  progress?: boolean;
  jpegQuality?: number;
  /** JPEG encoder (default 'opencv', the faster; see worker.ts). */
  encoder?: JpegEncoder;
  /** Replace a non-empty `out`. */
  force?: boolean;
  questionsPath?: string;
  /** Overrides the presets' photometric defaults. */
  photometric?: { noise?: number; exposure?: number; blurSamples?: number };
}

export interface SynthSummary {
  dir: string;
  clips: SynthClip[];
  frames: number;
  bytes: number;
  seconds: number;
  /** Summed native timings (ms) over all clips. */
  timing: { world: number; render: number; encode: number; video: number };
  questions: QuestionSet;
}

/**
 * The worker module: next to this file when compiled, its bundled entry when this is the bundle
 * (dist/bundle/, scripts/bundle.mjs), else the compiled copy in dist/ (tests).
 */
export function workerUrl(): URL {
  const here = new URL('./worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  const bundled = new URL('./synth-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(bundled))) return bundled;
  const dist = new URL('../../dist/synth/worker.js', import.meta.url);
  if (existsSync(fileURLToPath(dist))) return dist;
  throw new Error(`the synth worker is not compiled (looked for ${fileURLToPath(here)} and ${fileURLToPath(dist)}); run \`npm run build\``);
}

export const framePath = (id: string, k: number): string => `frames/${id}/${String(k).padStart(6, '0')}.jpg`;
export const videoPath = (id: string): string => `videos/${id}.mp4`;

/** The clips_index.jsonl record of a clip, keys in the reference's order. */
export function clipRecord(c: SynthClip, video: boolean): Record<string, unknown> {
  const rec: Record<string, unknown> = {
    clip_id: c.id,
    source: 'synthetic',
    scene_token: `synth_scene_${c.worldSeed.toString(16).padStart(8, '0')}`,
    sample_token: c.id,
    t_start: c.timestamps[0],
    t_end: c.timestamps[0] + CLIP_SECONDS,
    camera: 'CAM_FRONT',
    frame_tokens: c.timestamps.map((_, k) => `${c.id}_${String(k).padStart(6, '0')}`),
    frame_paths: video ? [] : c.timestamps.map((_, k) => framePath(c.id, k)),
    frame_timestamps: c.timestamps,
    num_frames: c.timestamps.length,
    array_ref: `arrays/${c.id}.npz`,
    split: 'unsplit',
    features: c.oracle.features,
  };
  if (video) rec.video_path = videoPath(c.id);
  return rec;
}

/** The npz arrays of a clip under the reference's keys (position is N×2). */
export function clipArrays(c: SynthClip): Record<string, { shape: number[]; data: Float64Array }> {
  const a = c.oracle.arrays;
  const n = a.timestamps.length;
  const pos = new Float64Array(2 * n);
  for (let i = 0; i < n; i++) {
    pos[2 * i] = a.x[i];
    pos[2 * i + 1] = a.y[i];
  }
  const v = (d: Float64Array) => ({ shape: [n], data: d });
  return {
    timestamps: v(a.timestamps),
    position: { shape: [n, 2], data: pos },
    yaw: v(a.yaw),
    speed: v(a.speed),
    accel: v(a.accel),
    yaw_rate: v(a.yaw_rate),
    jerk: v(a.jerk),
  };
}

function checkOut(out: string, force: boolean): void {
  if (!existsSync(out)) return;
  if (!statSync(out).isDirectory()) throw new InputError(`${out} exists and is not a folder`);
  if (readdirSync(out).length > 0 && !force) throw new InputError(`${out} exists and is not empty (use --force to replace it)`);
  // --force replaces a folder whole: only one that egogeo synth wrote (its metadata.json says so).
  if (readdirSync(out).length > 0 && !isSynthFolder(out)) throw new InputError(`${out} exists and is not a dataset egogeo synth wrote; --force replaces only those (give a new folder)`);
}

function isSynthFolder(dir: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(dir, 'metadata.json'), 'utf8')) as { generator?: unknown }).generator === 'egogeo synth';
  } catch {
    return false;
  }
}

/** Plans, renders and writes a dataset (see the module comment). */
export async function synthesize(o: SynthOptions): Promise<SynthSummary> {
  if (!Number.isInteger(o.clips) || o.clips < 1) throw new InputError(`--clips must be a positive integer, got ${o.clips}`);
  const out = resolve(o.out);
  checkOut(out, !!o.force);
  try {
    native(); // one clear line before any work when the engine is not built
  } catch (e) {
    throw new InputError((e as Error).message);
  }
  const qpath = o.questionsPath ?? DEFAULT_QUESTIONS_PATH;
  const questions = loadQuestions(qpath);
  const t0 = Date.now();
  const clips = planDataset({ clips: o.clips, seed: o.seed, preset: o.preset, profile: o.profile, speed: o.speed, questions });

  // Removed on SIGINT/SIGTERM; a killed run's is removed by the next run (io/atomic.ts).
  const staged = stageDir(out);
  const { stage } = staged;
  const timing = { world: 0, render: 0, encode: 0, video: 0 };
  let frames = 0;
  let bytes = 0;
  try {
    mkdirSync(join(stage, 'arrays'));
    const video = !!o.video;
    const tasks: RenderTask[] = clips.map((c) => ({
      id: c.id,
      request: { ...c.render, photometric: { ...c.render.photometric, ...o.photometric } },
      stage,
      video,
      framePaths: c.timestamps.map((_, k) => framePath(c.id, k)),
      videoPath: videoPath(c.id),
      fps: PRESETS[c.preset].hz,
      jpegQuality: o.jpegQuality ?? 90,
      encoder: o.encoder ?? 'opencv',
    }));
    await runPool<RenderTask, RenderTaskResult>({
      worker: workerUrl(),
      tasks,
      workers: o.workers,
      label: 'synth',
      progress: o.progress,
      onResult: (r) => {
        frames += r.frames;
        bytes += r.bytes;
        timing.world += r.timing.world;
        timing.render += r.timing.render;
        timing.encode += r.timing.encode;
        timing.video += r.timing.video;
      },
    });

    const index: string[] = [];
    const qa: string[] = [];
    clips.forEach((c, i) => {
      writeNpz(join(stage, 'arrays', `${c.id}.npz`), clipArrays(c));
      const rec = clipRecord(c, video);
      index.push(JSON.stringify(rec));
      for (const q of qaRecords(c.id, c.oracle, questions, i * questions.questions.length, rec.t_end as number)) qa.push(JSON.stringify(q));
    });
    writeFileSync(join(stage, 'qa.jsonl'), `${qa.join('\n')}\n`);
    const presets = [...new Set(clips.map((c) => c.preset))];
    const meta = {
      source: 'synthetic',
      generator: 'egogeo synth',
      seed: o.seed,
      num_clips: clips.length,
      clip_seconds: CLIP_SECONDS,
      sampling_hz: 10,
      preset: o.preset,
      profile: o.profile ?? 'mixed',
      ...(o.speed ? { speed: o.speed } : {}),
      media: video ? 'mp4' : 'jpeg',
      cameras: Object.fromEntries(presets.map((p) => [p, { ...PRESETS[p].camera, fps: PRESETS[p].hz }])),
      clip_presets: Object.fromEntries(clips.map((c) => [c.id, c.preset])),
      scenarios: Object.fromEntries(clips.map((c) => [c.id, { scenario: c.scenario, profile: c.profile, environment: c.environment }])),
      answer_distribution: labelDistribution(clips, questions),
    };
    writeFileSync(join(stage, 'metadata.json'), `${JSON.stringify(meta, null, 2)}\n`);
    // The index last: a reader that finds it finds everything it names.
    writeFileSync(join(stage, 'clips_index.jsonl'), `${index.join('\n')}\n`);
    publishDir(stage, out);
  } catch (e) {
    staged.remove();
    // A write that failed in a render worker (full disk) reaches here as a message: name the output.
    const m = /^(E[A-Z]+): ([^,]+)/.exec((e as Error)?.message ?? '');
    if (m && !(e instanceof InputError)) throw new InputError(`${o.out}: cannot write (${m[1]}: ${m[2]}); nothing was written`);
    throw e;
  } finally {
    staged.done();
  }
  return { dir: out, clips, frames, bytes, seconds: (Date.now() - t0) / 1000, timing, questions };
}

