/**
 * EgoDyn-Bench in its published layout, made by the tests from rendered clips: a nuScenes-shaped
 * data root (frames under samples/ and sweeps/, `v1.0-trainval/` tables pretty-printed the way
 * nuScenes ships them; records carry frame_tokens and frame_paths only) and CARLA-shaped clips
 * (records with a `video_path` that does not exist, mp4s in carla_videos_<domain>/).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { drivingClip } from './render.js';
import { CAMERA, writeMp4 } from '../run/fixtures.js';
import { GEOMETRIC_SUBSET } from '../../src/baseline/baseline.js';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { loadQuestions, runOracle } from '../../src/oracle/index.js';

export interface PublishedSpec {
  id: string;
  source: 'nuscenes' | 'carla';
  speed: number;
  yawRate: number;
  seed?: number;
  frames?: number;
  /** The road below the horizon one flat grey: nothing to measure the metric scale on (the engine's verdict 'failed'). */
  flatRoad?: boolean;
}

const jsonl = (rows: unknown[]): string => rows.map((r) => `${JSON.stringify(r)}\n`).join('');
/** nuScenes writes its tables as indented JSON lists. */
const table = (rows: unknown[]): string => JSON.stringify(rows, null, 0).replace(/},{/g, '},\n{');
const pgm = (f: { data: Uint8Array; width: number; height: number }): Buffer =>
  Buffer.concat([Buffer.from(`P5\n${f.width} ${f.height}\n255\n`), Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength)]);
const hex = (n: number, salt: string): string => (salt + n.toString(16)).padStart(32, '0').slice(-32);

/** Camera→ego quaternion (w, x, y, z) of nuScenes' level front camera, times a pitch about camera x. */
export function mountQuaternion(pitchUp = 0): [number, number, number, number] {
  const [aw, ax, ay, az] = [0.5, -0.5, 0.5, -0.5];
  const [bw, bx] = [Math.cos(pitchUp / 2), Math.sin(pitchUp / 2)];
  // (a ⊗ b) with b = (bw, bx, 0, 0)
  return [aw * bw - ax * bx, aw * bx + ax * bw, ay * bw + az * bx, az * bw - ay * bx];
}

export interface Published {
  root: string;
  nuscenes: string;
  /** Every frame's timestamp (µs) per nuScenes clip, for checks. */
  timestamps: Map<string, number[]>;
  /** False when no mp4 could be written (the addon not built): CARLA clips have no videos. */
  videos: boolean;
}

/**
 * `qa`: 'turn' (default) one QA item per clip, the turn direction; 'subset': one per question of the
 * 6-question subset, labelled by the oracle over the clip's true trajectory.
 */
export function publishedDataset(dir: string, specs: PublishedSpec[], opts: { height?: number; pitchUp?: number; qa?: 'turn' | 'subset' } = {}): Published {
  const root = join(dir, 'egodyn-bench');
  const nus = join(dir, 'nuscenes');
  const height = opts.height ?? 1.5;
  const sampleData: Record<string, unknown>[] = [];
  const calib = { token: 'c'.repeat(32), sensor_token: 's'.repeat(32), translation: [1.7, 0.01, height], rotation: mountQuaternion(opts.pitchUp ?? 0), camera_intrinsic: [[CAMERA.fx, 0, CAMERA.cx], [0, CAMERA.fy, CAMERA.cy], [0, 0, 1]] };
  const sensor = { token: 's'.repeat(32), channel: 'CAM_FRONT', modality: 'camera' };
  const parts = { nuscenes: { index: [] as unknown[], qa: [] as unknown[] }, carla: { index: [] as unknown[], qa: [] as unknown[] } };
  const timestamps = new Map<string, number[]>();
  let videos = true;
  let q = 0, tok = 0;
  for (const s of specs) {
    const clip = drivingClip({ frames: s.frames ?? 16, speed: s.speed, yawRate: s.yawRate, seed: s.seed ?? 1, camera: CAMERA, supersample: 1 });
    if (s.flatRoad) {
      const horizon = Math.ceil(clip.intrinsics.cy) + 4;
      clip.frames = clip.frames.map((f) => ({ ...f, data: Uint8Array.from(f.data).fill(110, horizon * f.width) }));
    }
    const part = parts[s.source];
    if (s.source === 'nuscenes') {
      // ~12 Hz with jitter, as nuScenes' camera: the engine must use these times, not a frame rate.
      const t0 = 1_532_402_927_000_000 + tok * 1_000_000;
      const us = Array.from(clip.timestamps, (t, i) => t0 + Math.round(t * 1e6) + (i % 3) * 1500);
      timestamps.set(s.id, us);
      const tokens: string[] = [], paths: string[] = [];
      clip.frames.forEach((f, i) => {
        const kind = i % 6 === 0 ? 'samples' : 'sweeps';
        const rel = `${kind}/CAM_FRONT/n015-2018-07-20-11-22-45+0800__CAM_FRONT__${us[i]}.pgm`;
        mkdirSync(join(nus, kind, 'CAM_FRONT'), { recursive: true });
        writeFileSync(join(nus, rel), pgm(f));
        const token = hex(tok++, 'a');
        tokens.push(token);
        paths.push(rel);
        sampleData.push({ token, sample_token: hex(0, 'b'), ego_pose_token: hex(tok, 'e'), calibrated_sensor_token: calib.token, timestamp: us[i], fileformat: 'jpg', is_key_frame: kind === 'samples', height: f.height, width: f.width, filename: rel, prev: '', next: '' });
      });
      part.index.push({ clip_id: s.id, scene_token: 'x', sample_token: 'y', t_start: us[0] / 1e6, t_end: us[0] / 1e6 + 3, camera: 'CAM_FRONT', frame_tokens: tokens, frame_paths: paths, num_frames: tokens.length, split: 'val', features: {} });
    } else {
      mkdirSync(join(root, 'carla_videos_simulation'), { recursive: true });
      mkdirSync(join(root, 'carla_videos_transferred'), { recursive: true });
      videos = writeMp4(join(root, 'carla_videos_simulation', `${s.id}.mp4`), clip.frames) && videos;
      // The "transferred" domain: the same frames, darker and with a different tone.
      const restyled = clip.frames.map((f, i) => ({ ...f, data: f.data.map((v) => Math.min(255, Math.round(255 * ((v / 255) ** (0.8 + 0.05 * (i % 3))) * 0.85))) }));
      writeMp4(join(root, 'carla_videos_transferred', `${s.id}.mp4`), restyled);
      part.index.push({ clip_id: s.id, scene: 'Town', behavior: 'Default', window_idx: 0, t_end: 3, split: 'unsplit', source: 'carla', features: {}, video_path: `/mnt/data/carla/${s.id}_fpv.mp4` });
    }
    if (opts.qa === 'subset') {
      // Planar truth: x forward = camera z, y left = −camera x.
      const truth = makeTrajectory(s.id, { t: Array.from(clip.timestamps), x: clip.poses.map((p) => p.C[2]), y: clip.poses.map((p) => -p.C[0]), yaw: clip.yaw });
      const questions = loadQuestions();
      const labels = runOracle(truth, questions).labels;
      for (const id of GEOMETRIC_SUBSET) part.qa.push({ qa_id: `qa_${String(q++).padStart(8, '0')}`, clip_id: s.id, question_id: id, category: questions.byId.get(id)!.category, answer: labels[id] });
      continue;
    }
    const turn = s.yawRate > 0.04 ? 'left' : s.yawRate < -0.04 ? 'right' : 'straight';
    part.qa.push({ qa_id: `qa_${String(q++).padStart(8, '0')}`, clip_id: s.id, question_id: 'yaw_rate_turn_direction', category: 'direct_dynamics', answer: turn });
  }
  for (const [source, p] of Object.entries(parts)) {
    if (p.index.length === 0) continue;
    const d = join(root, `${source}_clips`);
    mkdirSync(join(d, 'arrays'), { recursive: true });
    writeFileSync(join(d, 'clips_index.jsonl'), jsonl(p.index));
    writeFileSync(join(d, 'qa.jsonl'), jsonl(p.qa));
  }
  writeFileSync(join(root, 'selected_clips.json'), JSON.stringify(specs.map((s) => ({ id: s.id, source: s.source, answers: {}, features: {} })), null, 1));
  if (sampleData.length > 0) {
    const t = join(nus, 'v1.0-trainval');
    mkdirSync(t, { recursive: true });
    writeFileSync(join(t, 'sample_data.json'), table(sampleData));
    writeFileSync(join(t, 'calibrated_sensor.json'), table([calib]));
    writeFileSync(join(t, 'sensor.json'), table([sensor]));
  }
  return { root, nuscenes: nus, timestamps, videos };
}
