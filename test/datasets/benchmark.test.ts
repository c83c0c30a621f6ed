/**
 * The benchmark layout reader (frames or mp4, clip lists, sources, intrinsics, camera height, QA),
 * the ground truth under KITTI frames, and mp4 decoding.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CAMERA_HEIGHTS, readBenchmark, readClipList } from '../../src/datasets/benchmark.js';
import { sourceFromClipId } from '../../src/core/prediction.js';
import { groundTruthArrays, kittiTrajectory, readNpzArrays, relativeToFirst } from '../../src/datasets/groundtruth.js';
import { writeNpz } from '../../src/io/npz.js';
import { decodeVideo, decodeVideoAsync } from '../../src/datasets/video.js';
import { KITTI_CAMERA_HEIGHT } from '../../src/datasets/kitti.js';
import { clipData, labelClip, loadQuestions, summaryFeatures } from '../../src/oracle/index.js';
import { drivingClip } from '../helpers/render.js';
import { CAMERA, EGODYN_KITTI, HAS_EGODYN_KITTI, HAS_OPENCV4NODEJS, needsShared, readJsonl, sharedPath, writeMp4 } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-datasets-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
function layout(index: unknown[], qa: unknown[] = [], extra: Record<string, string> = {}): string {
  const dir = join(tmp, `ds${n++}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'clips_index.jsonl'), index.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
  if (qa.length) writeFileSync(join(dir, 'qa.jsonl'), qa.map((r) => JSON.stringify(r)).join('\n') + '\n');
  for (const [p, text] of Object.entries(extra)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  return dir;
}

const frames = (k: number) => ({ frame_paths: Array.from({ length: k }, (_, i) => `img/${i}.png`), frame_timestamps: Array.from({ length: k }, (_, i) => i / 10) });

describe('readBenchmark', () => {
  it('resolves frames and videos against the folder, sources, intrinsics, camera heights and QA', () => {
    const dir = layout(
      [
        { clip_id: 'clip_00001', ...frames(3), array_ref: 'arrays/clip_00001.npz' },
        { clip_id: 'DEU_Town-1__w0', video_path: 'vid/a.mp4', fps: 10 },
        { clip_id: 'kitti07_000005', source: 'kitti', ...frames(2), intrinsics: { fx: 700, fy: 701, cx: 600, cy: 180 } },
        { clip_id: 'no_video_given', camera_intrinsic: [[500, 0, 320], [0, 500, 240], [0, 0, 1]], camera_height: 1.4 },
      ],
      [
        { qa_id: 'qa_1', clip_id: 'clip_00001', question_id: 'speed_trend', category: 'direct_dynamics', answer: 'steady' },
        { qa_id: 'qa_0', clip_id: 'clip_00001', question_id: 'yaw_rate_turn_direction', category: 'direct_dynamics', answer: 'left' },
      ],
    );
    const b = readBenchmark(dir);
    expect(b.hasQa).toBe(true);
    const [ns, carla, kitti, plain] = b.clips;
    expect(b.clips.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    expect(ns).toMatchObject({ id: 'clip_00001', source: 'nuscenes', frames: [join(dir, 'img/0.png'), join(dir, 'img/1.png'), join(dir, 'img/2.png')], timestamps: Float64Array.of(0, 0.1, 0.2) });
    expect(ns.arrays).toBe(join(dir, 'arrays/clip_00001.npz'));
    expect(ns.camera.intrinsics).toBeUndefined(); // the engine's default: fx = fy = 0.9 W at the centre
    expect(ns.camera.height).toBe(CAMERA_HEIGHTS.nuscenes);
    expect(ns.qa.map((q) => q.qa_id)).toEqual(['qa_1', 'qa_0']); // file order
    expect(carla).toMatchObject({ source: 'carla', video: join(dir, 'vid/a.mp4'), fps: 10, qa: [] });
    expect(carla.camera.height).toBeUndefined();
    expect(kitti).toMatchObject({ source: 'kitti', camera: { intrinsics: { fx: 700, fy: 701, cx: 600, cy: 180 }, from: 'the record' } });
    expect(plain).toMatchObject({ video: join(dir, 'videos/no_video_given.mp4'), camera: { intrinsics: { fx: 500, fy: 500, cx: 320, cy: 240 }, height: 1.4 }, source: 'carla' });
  });

  it('a clip list filters and orders; its sources fill in; unknown ids become clips with a problem; --source-label wins', () => {
    const dir = layout([{ clip_id: 'a', ...frames(2) }, { clip_id: 'b', source: 'carla-sim', ...frames(2) }, { clip_id: 'c', ...frames(2) }]);
    const list = join(dir, 'sel.json');
    writeFileSync(list, JSON.stringify([{ id: 'c', source: 'carla-transferred' }, { id: 'b', source: 'nuscenes' }, { id: 'zzz', source: 'nuscenes' }]));
    const b = readBenchmark(dir, { selected: list });
    expect(b.clips.map((c) => [c.index, c.id, c.source, c.problem])).toEqual([
      [0, 'c', 'carla-transferred', undefined],
      [1, 'b', 'carla-sim', undefined], // the record's own source beats the list's
      [2, 'zzz', 'nuscenes', 'not in clips_index.jsonl'],
    ]);
    expect(readBenchmark(dir, { selected: list, sourceLabel: 'synthetic' }).clips.map((c) => c.source)).toEqual(['synthetic', 'synthetic', 'synthetic']);
    writeFileSync(list, JSON.stringify(['a', 'a']));
    expect(() => readClipList(list)).toThrow(/entry 1: clip 'a' is listed twice/);
  });

  it("takes cameras from metadata.json (egogeo synth's) for records without their own", () => {
    const meta = {
      cameras: { carla: { fx: 1152, fy: 1152, cx: 640, cy: 360, mountHeight: 1.5 }, nuscenes: { fx: 1266.4, fy: 1266.4, cx: 816.3, cy: 491.5, mountHeight: 1.51 } },
      clip_presets: { a: 'carla', clip_b: 'nuscenes', c: 'carla' },
    };
    const dir = layout(
      [{ clip_id: 'a', ...frames(2) }, { clip_id: 'clip_b', ...frames(2) }, { clip_id: 'c', ...frames(2), intrinsics: { fx: 10, fy: 10, cx: 5, cy: 5 }, camera_height: 2 }, { clip_id: 'd', ...frames(2) }],
      [],
      { 'metadata.json': JSON.stringify(meta) },
    );
    const [a, b, c, d] = readBenchmark(dir).clips;
    expect([a.camera.intrinsics, a.camera.height]).toEqual([{ fx: 1152, fy: 1152, cx: 640, cy: 360 }, 1.5]);
    expect([b.camera.intrinsics!.fx, b.camera.height]).toEqual([1266.4, 1.51]);
    expect([c.camera.intrinsics!.fx, c.camera.height]).toEqual([10, 2]); // the record wins
    expect([d.camera.intrinsics, d.camera.height]).toEqual([undefined, undefined]);
  });

  it('infers the source like the reference (clip_ → nuScenes, else CARLA) and knows KITTI ids', () => {
    expect([sourceFromClipId('clip_19765'), sourceFromClipId('DEU_Memmingen-97_1_T-3__Comfort__w0'), sourceFromClipId('kitti00_000005')]).toEqual(['nuscenes', 'carla', 'kitti']);
  });

  it('names the file, line and field of bad records', () => {
    expect(() => readBenchmark(layout(['{"clip_id": "a", ', '']))).toThrow(/clips_index\.jsonl:1: invalid JSON/);
    expect(() => readBenchmark(layout([{ clip_id: 'a', ...frames(2) }, { clip_id: 'a', ...frames(2) }]))).toThrow(/clips_index\.jsonl:2: clip 'a' appears twice/);
    expect(() => readBenchmark(layout([{ clip_id: 'a', frame_paths: ['x.png', 'y.png'], frame_timestamps: [0] }]))).toThrow(/:1: 2 frame_paths but 1 frame_timestamps/);
    expect(() => readBenchmark(layout([{ clip_id: 'a', frame_paths: ['x.png', 'y.png'] }]))).toThrow(/needs 'frame_timestamps'/);
    expect(() => readBenchmark(layout([{ clip_id: 'a', ...frames(2), frame_timestamps: [0.1, 0.1] }]))).toThrow(/strictly increasing/);
    expect(() => readBenchmark(layout([{ clip_id: 'a', ...frames(2), intrinsics: { fx: 0, fy: 1, cx: 0, cy: 0 } }]))).toThrow(/'intrinsics' must be/);
    expect(() => readBenchmark(layout([{ clip_id: 'a', ...frames(2) }], [{ qa_id: 'q', clip_id: 'a', question_id: 'x' }]))).toThrow(/qa\.jsonl:1: missing field 'answer'/);
    expect(() => readBenchmark(join(tmp, 'nope'))).toThrow(/no such dataset directory/);
    expect(() => readBenchmark(tmp)).toThrow(/missing clips_index\.jsonl/);
  });
});

describe.skipIf(!HAS_EGODYN_KITTI)('egodyn_kitti (../shared)', () => {
  it('reads 64 KITTI windows: calib.txt intrinsics, 1.65 m camera, 31 frames, 14 QA items each', () => {
    const b = readBenchmark(EGODYN_KITTI);
    expect(b.clips).toHaveLength(64);
    for (const c of b.clips) {
      expect(c.source).toBe('kitti');
      expect(c.frames).toHaveLength(31);
      expect(c.timestamps).toHaveLength(31);
      expect(c.qa).toHaveLength(14);
      expect(c.camera.height).toBe(KITTI_CAMERA_HEIGHT);
      expect(c.camera.intrinsics!.fx).toBeGreaterThan(700);
    }
    expect(b.clips[0].camera.intrinsics).toEqual({ fx: 718.856, fy: 718.856, cx: 607.1928, cy: 185.2157 });
  });

  it.skipIf(!needsShared('egodyn_kitti against selected_clips.json', 'reference/selected_clips.json'))('selected_clips.json (the real benchmark list) finds none of its clips here: every one is named', () => {
    const b = readBenchmark(EGODYN_KITTI, { selected: sharedPath('reference/selected_clips.json') });
    expect(b.clips).toHaveLength(1000);
    expect(b.clips.every((c) => c.problem === 'not in clips_index.jsonl')).toBe(true);
    expect(new Set(b.clips.map((c) => c.source))).toEqual(new Set(['nuscenes', 'carla']));
  });

  it('the KITTI poses under the frames give the oracle labels of qa.jsonl for every window', () => {
    const questions = loadQuestions();
    const b = readBenchmark(EGODYN_KITTI);
    const cache = new Map();
    for (const c of b.clips) {
      const gt = groundTruthArrays(c, null, cache)!;
      expect(gt.from).toBe('kitti-poses');
      expect(gt.arrays.x[0]).toBeCloseTo(0, 12); // clip-relative, like the npz arrays
      const labels = labelClip(clipData(gt.arrays, summaryFeatures(gt.arrays)), questions);
      for (const q of c.qa) expect([c.id, q.question_id, labels[q.question_id]]).toEqual([c.id, q.question_id, q.answer]);
    }
  });

  it('the npz arrays and the KITTI poses agree (rates to 1e-9), and give the same labels', () => {
    const questions = loadQuestions();
    for (const c of readBenchmark(EGODYN_KITTI).clips.filter((_, i) => i % 7 === 0)) {
      const npz = groundTruthArrays(c)!;
      const poses = groundTruthArrays(c, null)!;
      expect([npz.from, poses.from]).toEqual(['npz', 'kitti-poses']);
      for (const k of ['speed', 'accel', 'yaw_rate', 'jerk'] as const) {
        for (let i = 0; i < npz.arrays[k].length; i++) expect(Math.abs(npz.arrays[k][i] - poses.arrays[k][i])).toBeLessThan(1e-9);
      }
      const lab = (a: typeof npz.arrays) => labelClip(clipData(a, summaryFeatures(a)), questions);
      expect(lab(npz.arrays)).toEqual(lab(poses.arrays));
    }
  });

  it('relativeToFirst puts the first pose at the origin, heading 0, and keeps distances', () => {
    const c = readBenchmark(EGODYN_KITTI).clips[40];
    const t = kittiTrajectory(c.id, c.frames!)!;
    const r = relativeToFirst(t);
    expect([r.x[0], r.y[0], r.yaw[0]]).toEqual([0, 0, 0]);
    const d = (a: typeof t, i: number) => Math.hypot(a.x[i] - a.x[0], a.y[i] - a.y[0]);
    expect(d(r, 30)).toBeCloseTo(d(t, 30), 9);
  });
});

describe('readNpzArrays', () => {
  const n = 4;
  const v = Float64Array.from({ length: n }, (_, i) => i / 10);
  const full = { timestamps: v, position: { shape: [n, 2], data: new Float64Array(2 * n).map((_, i) => i) }, yaw: v, speed: v, accel: v, yaw_rate: v, jerk: v };

  it('reads position (N×2) into x and y', () => {
    const p = join(tmp, 'ok.npz');
    writeNpz(p, full);
    const a = readNpzArrays(p);
    expect(Array.from(a.x)).toEqual([0, 2, 4, 6]);
    expect(Array.from(a.y)).toEqual([1, 3, 5, 7]);
    expect(Array.from(a.speed)).toEqual(Array.from(v));
  });

  it('names what is missing or misshapen', () => {
    const p = join(tmp, 'bad.npz');
    const { jerk: _, ...noJerk } = full;
    writeNpz(p, noJerk);
    expect(() => readNpzArrays(p)).toThrow(/bad\.npz: no array 'jerk'/);
    writeNpz(p, { ...full, position: v });
    expect(() => readNpzArrays(p)).toThrow(/'position' has shape \(4\), expected \(4, 2\)/);
    writeFileSync(p, 'not a zip');
    expect(() => readNpzArrays(p)).toThrow(/bad\.npz/);
  });
});

describe.skipIf(!HAS_OPENCV4NODEJS)('mp4 decoding (opencv4nodejs)', () => {
  const clip = drivingClip({ frames: 12, speed: 5, yawRate: 0.2, camera: CAMERA, supersample: 1 });
  const mp4 = join(tmp, 'clip.mp4');

  it('decodes every frame to greyscale at the video size, close to the rendered frames', async () => {
    expect(writeMp4(mp4, clip.frames, 10)).toBe(true);
    const v = decodeVideo(mp4);
    expect(v.fps).toBe(10);
    expect(v.frames).toHaveLength(12);
    expect(v.frames[0]).toMatchObject({ width: CAMERA.width, height: CAMERA.height });
    expect(v.frames[0].data).toHaveLength(CAMERA.width * CAMERA.height);
    let diff = 0;
    for (let i = 0; i < v.frames[5].data.length; i++) diff += Math.abs(v.frames[5].data[i] - clip.frames[5].data[i]);
    expect(diff / v.frames[5].data.length).toBeLessThan(12); // lossy codec, same picture
    const a = await decodeVideoAsync(mp4);
    expect(a.frames.map((f) => Buffer.from(f.data).equals(Buffer.from(v.frames[a.frames.indexOf(f)].data)))).toEqual(Array(12).fill(true));
  });

  it('names missing and unreadable videos', async () => {
    expect(() => decodeVideo(join(tmp, 'none.mp4'))).toThrow(/missing video/);
    writeFileSync(join(tmp, 'junk.mp4'), 'junk');
    expect(() => decodeVideo(join(tmp, 'junk.mp4'))).toThrow(/unreadable video/);
    await expect(decodeVideoAsync(join(tmp, 'junk.mp4'))).rejects.toThrow(/unreadable video/);
  });
});

it('reads the shared layout fixtures helper', () => {
  // The helper the run tests use parses JSONL the same way the reader does.
  const p = join(tmp, 'x.jsonl');
  writeFileSync(p, '{"a":1}\n\n{"a":2}\n');
  expect(readJsonl(p)).toEqual([{ a: 1 }, { a: 2 }]);
});

describe.skipIf(!HAS_EGODYN_KITTI || !needsShared('readDataset on a KITTI sequence directory', 'data/kitti/01'))('readDataset on a KITTI sequence directory', () => {
  it('gives the benchmark windows as clips, same frames, intrinsics and ids as egodyn_kitti', async () => {
    const { readDataset } = await import('../../src/datasets/benchmark.js');
    const seq = readDataset(sharedPath('data/kitti/01'));
    const bench = readBenchmark(EGODYN_KITTI).clips.filter((c) => c.id.startsWith('kitti01_'));
    expect(seq.hasQa).toBe(false);
    expect(seq.clips.map((c) => c.id)).toEqual(bench.map((c) => c.id));
    for (let i = 0; i < bench.length; i++) {
      expect(seq.clips[i].frames).toEqual(bench[i].frames);
      expect(seq.clips[i].timestamps).toEqual(bench[i].timestamps);
      expect(seq.clips[i].camera.intrinsics).toEqual(bench[i].camera.intrinsics);
      expect(seq.clips[i]).toMatchObject({ source: 'kitti', camera: { height: KITTI_CAMERA_HEIGHT, from: 'KITTI calib.txt' }, qa: [] });
    }
    // ... and its ground truth is the KITTI poses (no npz here).
    expect(groundTruthArrays(seq.clips[0])!.from).toBe('kitti-poses');
  });
});
