/**
 * `synthesize` writes the benchmark's layout exactly as the reference does (checked against
 * ../shared/data/egodyn_kitti when present, else against the reference's field lists): the index
 * records, the npz arrays (keys, dtypes, shapes), the QA items, the frames or mp4s; the oracle
 * over each clip's arrays reproduces its QA answers; the same seed gives the same bytes; the
 * output folder is written atomically. Needs the built addon and `npm run build` (pool worker).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBenchmark } from '../../src/datasets/benchmark.js';
import { readNpz } from '../../src/io/npz.js';
import { clipData, labelClip, loadQuestions, summaryFeatures } from '../../src/oracle/index.js';
import { synthesize, type SynthSummary } from '../../src/synth/dataset.js';
import { PRESETS } from '../../src/synth/presets.js';
import { hasShared, sharedPath } from '../helpers/shared.js';
import { dynamicsFromNpz } from './helpers.js';

const ADDON = fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const WORKER = fileURLToPath(new URL('../../dist/synth/worker.js', import.meta.url));
const READY = existsSync(ADDON) && existsSync(WORKER);
if (!READY) console.warn('[egogeo tests] the addon or dist/synth/worker.js is missing (npm run build:native && npm run build): synth dataset tests are skipped.');

// The reference's fields (extract_nuscenes_clips.py + frame_timestamps/source as in egodyn_kitti).
const INDEX_KEYS = ['clip_id', 'source', 'scene_token', 'sample_token', 't_start', 't_end', 'camera', 'frame_tokens', 'frame_paths', 'frame_timestamps', 'num_frames', 'array_ref', 'split', 'features'];
const QA_KEYS = ['qa_id', 'clip_id', 'question_id', 'category', 'question', 'answer', 'answer_type', 'choices', 'units', 'label_source', 'rule_name', 'split', 't_end', 'evidence', 'metadata'];
const NPZ_KEYS = ['timestamps', 'position', 'yaw', 'speed', 'accel', 'yaw_rate', 'jerk'];

const jsonl = (p: string) => readFileSync(p, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-synth-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Every file under dir → sha256, by relative path. */
function digest(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

describe.skipIf(!READY)('synthesize: the benchmark layout', () => {
  let s: SynthSummary;
  const dir = join(tmp, 'mixed');
  beforeAll(async () => {
    s = await synthesize({ out: dir, clips: 3, seed: 21, preset: 'mixed', workers: 2, progress: false });
  });

  it('writes clips_index.jsonl with the reference fields in the reference order', () => {
    const recs = jsonl(join(dir, 'clips_index.jsonl'));
    expect(recs).toHaveLength(3);
    const ref = hasShared('data/egodyn_kitti/clips_index.jsonl') ? Object.keys(jsonl(sharedPath('data/egodyn_kitti/clips_index.jsonl'))[0]) : INDEX_KEYS;
    const refFeatures = hasShared('data/egodyn_kitti/clips_index.jsonl') ? Object.keys(jsonl(sharedPath('data/egodyn_kitti/clips_index.jsonl'))[0].features as object) : null;
    for (const r of recs) {
      expect(Object.keys(r)).toEqual(ref);
      expect(r.source).toBe('synthetic');
      expect(r.camera).toBe('CAM_FRONT');
      expect(r.split).toBe('unsplit');
      expect(r.t_end).toBeCloseTo((r.t_start as number) + 3, 12);
      const paths = r.frame_paths as string[];
      expect(paths).toHaveLength(r.num_frames as number);
      expect(r.frame_timestamps as number[]).toHaveLength(r.num_frames as number);
      expect(r.frame_tokens as string[]).toHaveLength(r.num_frames as number);
      for (const p of paths) expect(existsSync(join(dir, p))).toBe(true);
      expect(r.array_ref).toBe(`arrays/${r.clip_id}.npz`);
      if (refFeatures) expect(Object.keys(r.features as object)).toEqual(refFeatures);
    }
    expect(recs.map((r) => r.num_frames)).toEqual([31, s.clips[1].timestamps.length, 31]);
  });

  it('writes npz arrays with the reference keys, dtypes and shapes', async () => {
    for (const c of s.clips) {
      const path = join(dir, 'arrays', `${c.id}.npz`);
      const a = readNpz(path);
      expect(Object.keys(a)).toEqual(NPZ_KEYS);
      expect(a.position.shape).toEqual([31, 2]);
      for (const k of NPZ_KEYS.filter((k) => k !== 'position')) expect(a[k].shape).toEqual([31]);
      const members = unzipSync(readFileSync(path));
      const ref = hasShared('data/egodyn_kitti/arrays/kitti00_000000.npz') ? unzipSync(readFileSync(sharedPath('data/egodyn_kitti/arrays/kitti00_000000.npz'))) : null;
      for (const k of NPZ_KEYS) {
        const head = (b: Uint8Array) => new TextDecoder('latin1').decode(b.subarray(0, 128)).split('\n')[0];
        expect(head(members[`${k}.npy`])).toContain("'descr': '<f8', 'fortran_order': False");
        if (ref) expect(head(members[`${k}.npy`])).toBe(head(ref[`${k}.npy`])); // same header bytes (same shapes)
      }
    }
  });

  it('writes 14 QA items per clip with the reference fields; the oracle over the arrays reproduces the answers', () => {
    const questions = loadQuestions();
    const qa = jsonl(join(dir, 'qa.jsonl'));
    expect(qa).toHaveLength(3 * 14);
    const ref = hasShared('data/egodyn_kitti/qa.jsonl') ? Object.keys(jsonl(sharedPath('data/egodyn_kitti/qa.jsonl'))[0]) : QA_KEYS;
    qa.forEach((q, i) => {
      expect(Object.keys(q)).toEqual(ref);
      expect(q.qa_id).toBe(`qa_${String(i).padStart(8, '0')}`);
      expect(q.choices as string[]).toContain(q.answer);
      expect(q.evidence).not.toBeNull();
    });
    for (const c of s.clips) {
      const arrays = dynamicsFromNpz(join(dir, 'arrays', `${c.id}.npz`));
      const labels = labelClip(clipData(arrays, summaryFeatures(arrays)), questions);
      const answers = Object.fromEntries(qa.filter((q) => q.clip_id === c.id).map((q) => [q.question_id, q.answer]));
      expect(answers).toEqual(labels);
      const rec = jsonl(join(dir, 'clips_index.jsonl')).find((r) => r.clip_id === c.id)!;
      expect(rec.features).toEqual(JSON.parse(JSON.stringify(summaryFeatures(arrays))));
    }
  });

  it('writes greyscale JPEG frames at the preset resolution, and metadata.json', async () => {
    for (const c of s.clips) {
      const m = await sharp(join(dir, 'frames', c.id, '000000.jpg')).metadata();
      expect([m.width, m.height, m.channels, m.format]).toEqual([PRESETS[c.preset].camera.width, PRESETS[c.preset].camera.height, 1, 'jpeg']);
    }
    const meta = JSON.parse(readFileSync(join(dir, 'metadata.json'), 'utf8'));
    expect(meta.cameras.carla.fx).toBe(1152);
    expect(meta.num_clips).toBe(3);
    expect(readdirSync(tmp).filter((f) => f.includes('.tmp-'))).toEqual([]); // staging folder gone
  });

  it("reads back through egogeo's benchmark reader (frames, timestamps, QA)", () => {
    const b = readBenchmark(dir);
    expect(b.clips.map((c) => c.id)).toEqual(s.clips.map((c) => c.id));
    expect(b.clips[0].frames).toHaveLength(31);
    expect(b.clips[1].source).toBe('synthetic');
  });

  it('gives identical bytes for the same seed', async () => {
    const again = join(tmp, 'again');
    await synthesize({ out: again, clips: 3, seed: 21, preset: 'mixed', workers: 1, progress: false });
    expect(digest(again)).toEqual(digest(dir));
  });
});

describe.skipIf(!READY)('synthesize: mp4 per clip and the output folder', () => {
  it('with video: one mp4 per clip, video_path set, frame_paths empty', async () => {
    const dir = join(tmp, 'video');
    const s = await synthesize({ out: dir, clips: 2, seed: 3, preset: 'carla', video: true, workers: 2, progress: false });
    const recs = jsonl(join(dir, 'clips_index.jsonl'));
    for (const r of recs) {
      expect(Object.keys(r)).toEqual([...INDEX_KEYS, 'video_path']);
      expect(r.frame_paths).toEqual([]);
      expect(r.video_path).toBe(`videos/${r.clip_id}.mp4`);
      const mp4 = readFileSync(join(dir, r.video_path as string));
      expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');
    }
    expect(existsSync(join(dir, 'frames'))).toBe(false);
    expect(s.frames).toBe(62);
  });

  it('refuses a non-empty output folder unless forced, and leaves it untouched', async () => {
    const dir = join(tmp, 'busy');
    mkdirSync(dir);
    writeFileSync(join(dir, 'keep.txt'), 'x');
    await expect(synthesize({ out: dir, clips: 1, seed: 1, preset: 'carla', workers: 1, progress: false })).rejects.toThrow(/exists and is not empty \(use --force/);
    expect(readdirSync(dir)).toEqual(['keep.txt']);
    // --force replaces only a folder egogeo synth wrote (never someone's other files).
    await expect(synthesize({ out: dir, clips: 1, seed: 1, preset: 'carla', workers: 1, progress: false, force: true })).rejects.toThrow(/not a dataset egogeo synth wrote/);
    expect(readdirSync(dir)).toEqual(['keep.txt']);
    rmSync(join(dir, 'keep.txt'));
    await synthesize({ out: dir, clips: 1, seed: 1, preset: 'carla', workers: 1, progress: false });
    await synthesize({ out: dir, clips: 1, seed: 2, preset: 'carla', workers: 1, progress: false, force: true });
    expect(readdirSync(dir).sort()).toEqual(['arrays', 'clips_index.jsonl', 'frames', 'metadata.json', 'qa.jsonl']);
  });
});
