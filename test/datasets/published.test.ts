/**
 * EgoDyn-Bench as published: the nuScenes table scanner and its cached join, cameras from the
 * calibrated sensor, CARLA videos per domain, `--cameras`, bad input; on a layout the tests render
 * and, when ../shared is there, on its published copy.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.js';
import { readDataset } from '../../src/datasets/benchmark.js';
import { readCamerasFile } from '../../src/datasets/cameras.js';
import { joinNuscenes, mountedCamera, scanTable } from '../../src/datasets/nuscenes.js';
import { parseTum } from '../../src/io/trajectories.js';
import { associate, ate } from '../../src/vo/errors.js';
import { cli } from '../helpers/cli.js';
import { mountQuaternion, publishedDataset } from '../helpers/published.js';
import { needsShared, sharedPath } from '../helpers/shared.js';
import { CAMERA, NATIVE_BUILT, readJsonl } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-published-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const d = join(tmp, `t${n++}`);
  mkdirSync(d, { recursive: true });
  return d;
};

describe('scanTable', () => {
  it('finds the wanted rows whatever the whitespace, strings with brackets and escapes, nested lists', () => {
    const p = join(fresh(), 't.json');
    writeFileSync(
      p,
      '[\n{\n"token": "a1",\n"name": "x } ] { [ \\" \\\\",\n"v": [1, [2, 3]]\n},\n' +
        '{"sample_token":"a2","token" :  "b2","v":{"k":[{}]}},{"token":"c3","v":null}\n]\n',
    );
    const got: unknown[] = [];
    const rows = scanTable(p, new Set(['a1', 'c3', 'zz']), (r) => got.push(r));
    expect(rows).toBe(3);
    expect(got).toEqual([{ token: 'a1', name: 'x } ] { [ " \\', v: [1, [2, 3]] }, { token: 'c3', v: null }]);
  });

  it('reads rows that straddle chunk boundaries (a table larger than one chunk)', () => {
    const p = join(fresh(), 'big.json');
    const rows = Array.from({ length: 60_000 }, (_, i) => ({ token: `t${i}`, filename: `sweeps/CAM_FRONT/${'x'.repeat(40)}${i}.jpg`, timestamp: i }));
    writeFileSync(p, JSON.stringify(rows, null, 0));
    const want = new Set(['t0', 't12345', 't59999']);
    const got: Record<string, unknown>[] = [];
    expect(scanTable(p, want, (r) => got.push(r))).toBe(60_000);
    expect(got.map((r) => r.timestamp)).toEqual([0, 12345, 59999]);
  });

  it('names the file for what is not a table', () => {
    const d = fresh();
    const cases: [string, RegExp][] = [
      ['{"token": "a"}', /does not start with \[/],
      ['[{"token": "a"}', /ends before its closing \]/],
      ['', /is empty/],
      ['[{"token": "a", }]', /row 1/],
    ];
    for (const [i, [text, msg]] of cases.entries()) {
      const p = join(d, `bad${i}.json`);
      writeFileSync(p, text);
      expect(() => scanTable(p, new Set(['a']), () => {})).toThrow(msg);
      expect(() => scanTable(p, new Set(['a']), () => {})).toThrow(p);
    }
    expect(() => scanTable(join(d, 'none.json'), new Set(), () => {})).toThrow(/cannot read \(ENOENT\)/);
  });
});

describe('mountedCamera', () => {
  const sensor = (rotation: [number, number, number, number], z = 1.51) => ({
    token: 'c',
    sensor_token: 's',
    translation: [1.7, 0, z] as [number, number, number],
    rotation,
    camera_intrinsic: [[1266.4, 0, 816.3], [0, 1266.4, 491.5], [0, 0, 1]],
  });
  it('level front camera: road normal (0, 1, 0), height = translation z, intrinsics from the matrix', () => {
    const c = mountedCamera(sensor([0.5, -0.5, 0.5, -0.5]));
    expect(c.height).toBe(1.51);
    expect(c.intrinsics).toEqual({ fx: 1266.4, fy: 1266.4, cx: 816.3, cy: 491.5 });
    c.roadNormal.forEach((v, i) => expect(v).toBeCloseTo([0, 1, 0][i], 12));
  });
  it('a camera pitched up by θ sees the road normal at (0, cos θ, −sin θ)', () => {
    const th = 0.05;
    const c = mountedCamera(sensor(mountQuaternion(th)));
    c.roadNormal.forEach((v, i) => expect(v).toBeCloseTo([0, Math.cos(th), -Math.sin(th)][i], 12));
  });
  it('rejects a camera below the ground', () => {
    expect(() => mountedCamera(sensor([0.5, -0.5, 0.5, -0.5], -0.2))).toThrow(/height above the ground/);
  });
});

describe('published layout', () => {
  const specs = [
    { id: 'clip_00002', source: 'nuscenes' as const, speed: 8, yawRate: 0.2, seed: 3 },
    { id: 'Town01__Default__w0', source: 'carla' as const, speed: 7, yawRate: -0.2, seed: 4 },
    { id: 'clip_00001', source: 'nuscenes' as const, speed: 6, yawRate: 0, seed: 5 },
  ];
  const dir = fresh();
  const pub = publishedDataset(dir, specs, { height: 1.5, pitchUp: 0.02 });
  const cache = join(dir, 'cache');

  it('nuScenes clips: frames under the root, timestamps from sample_data (s from the first frame), camera from calibrated_sensor', () => {
    const logs: string[] = [];
    const b = readDataset(pub.root, { nuscenesRoot: pub.nuscenes, cacheDir: cache, log: (l) => logs.push(l) });
    expect(b.clips.map((c) => c.id)).toEqual(specs.map((s) => s.id)); // selected_clips.json's order
    const c = b.clips[0];
    expect(c.source).toBe('nuscenes');
    expect(c.frames![0].startsWith(join(pub.nuscenes, 'samples/CAM_FRONT/'))).toBe(true);
    const us = pub.timestamps.get(c.id)!;
    expect(Array.from(c.timestamps!)).toEqual(us.map((t) => (t - us[0]) / 1e6));
    expect(c.timeOrigin).toBe(us[0] / 1e6); // exported trajectories carry sample_data times in seconds
    expect(c.camera.intrinsics).toEqual({ fx: CAMERA.fx, fy: CAMERA.fy, cx: CAMERA.cx, cy: CAMERA.cy });
    expect(c.camera.height).toBe(1.5);
    expect(c.camera.roadNormal![1]).toBeCloseTo(Math.cos(0.02), 12);
    expect(c.camera.roadNormal![2]).toBeCloseTo(-Math.sin(0.02), 12);
    expect(c.camera.from).toMatch(/calibrated_sensor c+ \(CAM_FRONT\)/);
    expect(c.qa.map((q) => q.question_id)).toEqual(['yaw_rate_turn_direction']);
    expect(logs.some((l) => /reading .*sample_data\.json/.test(l))).toBe(true);
  });

  it('the join is cached: the second read does not open the tables; changed tables are read again', () => {
    const again: string[] = [];
    readDataset(pub.root, { nuscenesRoot: pub.nuscenes, cacheDir: cache, log: (l) => again.push(l) });
    expect(again.some((l) => /from the cache/.test(l))).toBe(true);
    expect(again.some((l) => /reading .*sample_data/.test(l))).toBe(false);
    const sd = join(pub.nuscenes, 'v1.0-trainval/sample_data.json');
    const later = new Date(Date.now() + 5000);
    utimesSync(sd, later, later);
    const third: string[] = [];
    readDataset(pub.root, { nuscenesRoot: pub.nuscenes, cacheDir: cache, log: (l) => third.push(l) });
    expect(third.some((l) => /reading .*sample_data/.test(l))).toBe(true);
  });

  it('CARLA clips read the chosen domain folder (video_path on the authors\u2019 machine is noted once), 10 fps, CARLA\u2019s default camera', () => {
    const logs: string[] = [];
    const sim = readDataset(pub.root, { nuscenesRoot: pub.nuscenes, cacheDir: null, log: (l) => logs.push(l) }).clips[1];
    expect(sim.video).toBe(join(pub.root, 'carla_videos_simulation', `${specs[1].id}.mp4`));
    expect([sim.fps, sim.camera.hfovDeg, sim.camera.height, sim.camera.intrinsics]).toEqual([10, 90, 1.65, undefined]);
    expect(logs.filter((l) => /video_path that does not exist/.test(l))).toHaveLength(1);
    const tr = readDataset(pub.root, { nuscenesRoot: pub.nuscenes, cacheDir: null, carlaDomain: 'transferred' }).clips[1];
    expect(tr.video).toBe(join(pub.root, 'carla_videos_transferred', `${specs[1].id}.mp4`));
  });

  it.skipIf(!NATIVE_BUILT)('egogeo run writes nuScenes estimates with the frames\' absolute sample_data times (s), CARLA with index / 10', async () => {
    const out = join(fresh(), 'p.jsonl');
    const r = await cli('run', '--dataset', pub.root, '--nuscenes-root', pub.nuscenes, '--no-cache', '-o', out, '--workers', '1', '--no-progress');
    expect([0, 1]).toContain(r.code); // CARLA clips fail without the addon (no mp4 written)
    const times = (id: string) => readFileSync(join(`${out}.trajectories`, `${id}.tum`), 'utf8').split('\n').filter((l) => l && !l.startsWith('#')).map((l) => Number(l.split(' ')[0]));
    const us = pub.timestamps.get('clip_00002')!;
    const t = times('clip_00002');
    expect(t).toHaveLength(us.length);
    t.forEach((v, i) => expect(Math.abs(v - us[i] / 1e6), `frame ${i}`).toBeLessThan(1e-6));
    if (pub.videos) expect(times(specs[1].id).slice(0, 3)).toEqual([0, 0.1, 0.2]);
  });

  it.skipIf(!NATIVE_BUILT || !pub.videos)('--carla-domain simulation,transferred: one output per domain, equal to two runs; the nuScenes clips computed once', async () => {
    const d = fresh();
    const both = await cli('run', '--dataset', pub.root, '--nuscenes-root', pub.nuscenes, '--no-cache', '--carla-domain', 'simulation,transferred', '-o', join(d, 'b.{domain}.jsonl'), '--workers', '1', '--no-progress');
    expect(both.code, both.err).toBe(0);
    expect(both.err).toMatch(/2 clips without a video taken over from .*b\.simulation\.jsonl/);
    for (const dom of ['simulation', 'transferred']) {
      const one = await cli('run', '--dataset', pub.root, '--nuscenes-root', pub.nuscenes, '--no-cache', '--carla-domain', dom, '-o', join(d, `s.${dom}.jsonl`), '--workers', '1', '--no-progress');
      expect(one.code, one.err).toBe(0);
      for (const f of ['', '.manifest.json', '.trajectories/clip_00002.tum']) expect(readFileSync(join(d, `b.${dom}.jsonl${f}`), 'utf8'), `${dom}${f}`).toBe(readFileSync(join(d, `s.${dom}.jsonl${f}`), 'utf8'));
    }
    expect((await cli('run', '--dataset', pub.root, '--carla-domain', 'simulation,transferred', '-o', join(d, 'x.jsonl'))).err).toMatch(/name both outputs with \{domain\}/);
  });

  it('--cameras overrides per source', () => {
    const p = join(dir, 'cams.json');
    writeFileSync(p, JSON.stringify({ carla: { hfov_deg: 100, height: 2.0 }, nuscenes: { height: 1.6 } }));
    const b = readDataset(pub.root, { nuscenesRoot: pub.nuscenes, cacheDir: null, cameras: p });
    expect([b.clips[1].camera.hfovDeg, b.clips[1].camera.height]).toEqual([100, 2.0]);
    expect([b.clips[0].camera.intrinsics!.fx, b.clips[0].camera.height]).toEqual([CAMERA.fx, 1.6]);
    expect(b.clips[1].camera.from).toMatch(/^--cameras over CARLA default/);
  });

  it('bad input: nuScenes clips without --nuscenes-root stop before any work; tables missing or malformed name the file; unknown tokens fail that clip only', () => {
    expect(() => readDataset(pub.root, {})).toThrow(/2 nuScenes clip\(s\) selected; give --nuscenes-root/);
    // Without frames (reports), no root is needed.
    expect(readDataset(pub.root, { needFrames: false }).clips).toHaveLength(3);
    expect(() => readDataset(pub.root, { nuscenesRoot: join(dir, 'nope') })).toThrow(/no such directory/);
    const d2 = fresh();
    const p2 = publishedDataset(d2, specs.slice(0, 1));
    rmSync(join(p2.nuscenes, 'v1.0-trainval/calibrated_sensor.json'));
    expect(() => readDataset(p2.root, { nuscenesRoot: p2.nuscenes, cacheDir: null })).toThrow(/calibrated_sensor\.json: missing/);
    writeFileSync(join(p2.nuscenes, 'v1.0-trainval/calibrated_sensor.json'), '[{"token": ');
    expect(() => readDataset(p2.root, { nuscenesRoot: p2.nuscenes, cacheDir: null })).toThrow(/calibrated_sensor\.json: not a nuScenes table/);
    // A token the tables do not have: that clip carries the reason, the rest is fine.
    const d3 = fresh();
    const p3 = publishedDataset(d3, specs);
    const idx = join(p3.root, 'nuscenes_clips/clips_index.jsonl');
    const recs = readJsonl<{ frame_tokens: string[] }>(idx);
    recs[0].frame_tokens[2] = 'f'.repeat(32);
    writeFileSync(idx, recs.map((r) => JSON.stringify(r)).join('\n'));
    const b = readDataset(p3.root, { nuscenesRoot: p3.nuscenes, cacheDir: null });
    expect(b.clips[0].problem).toMatch(/frame token f+ is not in .*sample_data\.json/);
    expect(b.clips[2].problem).toBeUndefined();
  });

  it('a folder with only carla_clips/ works without a nuScenes root; a clip listed but in neither part is named', () => {
    const d = fresh();
    const p = publishedDataset(d, [specs[1]]);
    writeFileSync(join(p.root, 'selected_clips.json'), JSON.stringify([{ id: specs[1].id, source: 'carla' }, { id: 'clip_404', source: 'nuscenes' }]));
    const b = readDataset(p.root, {});
    expect(b.clips[0].video).toMatch(/carla_videos_simulation/);
    expect(b.clips[1].problem).toBe('not in carla_clips/');
  });

  it('readCamerasFile: one line naming the file and field', () => {
    const d = fresh();
    const bad: [unknown, RegExp][] = [
      [[], /expected \{"<source>"/],
      [{ carla: { hfov_deg: 200 } }, /'carla'\.hfov_deg must be a number in \[1, 179\]/],
      [{ carla: { fx: 1, fy: 1 } }, /give all of fx, fy, cx, cy/],
      [{ carla: { hfov_deg: 90, fx: 1, fy: 1, cx: 1, cy: 1 } }, /not both/],
      [{ carla: { height: '1.6' } }, /height must be a number/],
      [{ carla: { focal: 3 } }, /unknown field 'focal'/],
    ];
    for (const [i, [doc, msg]] of bad.entries()) {
      const p = join(d, `c${i}.json`);
      writeFileSync(p, JSON.stringify(doc));
      expect(() => readCamerasFile(p)).toThrow(msg);
      expect(() => readCamerasFile(p)).toThrow(InputError);
    }
    expect(() => readCamerasFile(d)).toThrow(/is a folder, expected a cameras file/);
  });

  it.skipIf(!NATIVE_BUILT || !pub.videos)('egogeo run answers every clip, sources as the grader expects, the camera of each clip in the manifest, model per CARLA domain', async () => {
    const out = join(dir, 'sim.jsonl');
    const r = await cli('run', '--dataset', pub.root, '--nuscenes-root', pub.nuscenes, '--cache', cache, '--workers', '1', '--no-progress', '-o', out);
    expect(r.err).not.toMatch(/failed/);
    expect(r.code).toBe(0);
    const preds = readJsonl<{ clip_id: string; source: string; model_answer: string; oracle_label: string }>(out);
    expect(preds.map((p) => [p.clip_id, p.source])).toEqual(specs.map((s) => [s.id, s.source]));
    for (const p of preds) expect(p.model_answer).toBe(p.oracle_label);
    const m = JSON.parse(readFileSync(`${out}.manifest.json`, 'utf8'));
    expect(m.model).toBe('egogeo_simulation');
    expect(m.settings.carla_domain).toBe('simulation');
    expect(m.predictions[0].camera).toMatchObject({ fx: CAMERA.fx, height: 1.5 });
    expect(m.predictions[1].camera).toMatchObject({ hfov_deg: 90, height: 1.65 });
    const tr = join(dir, 'tr.jsonl');
    expect((await cli('run', '--dataset', pub.root, '--nuscenes-root', pub.nuscenes, '--cache', cache, '--carla-domain', 'transferred', '--workers', '1', '--no-progress', '--model', 'mine_{domain}', '-o', tr)).code).toBe(0);
    // --model with {domain}: the run's CARLA domain in its place (issue 53)
    expect(JSON.parse(readFileSync(`${tr}.manifest.json`, 'utf8')).model).toBe('mine_transferred');
  }, 120_000);

  it.skipIf(!NATIVE_BUILT)('egogeo run: a missing frame goes to the errors file and the run goes on', async () => {
    const d = fresh();
    const p = publishedDataset(d, [specs[0], specs[2]]);
    const rec = readJsonl<{ frame_paths: string[] }>(join(p.root, 'nuscenes_clips/clips_index.jsonl'))[0];
    rmSync(join(p.nuscenes, rec.frame_paths[4]));
    const out = join(d, 'o.jsonl');
    const r = await cli('run', '--dataset', p.root, '--nuscenes-root', p.nuscenes, '--no-cache', '--workers', '1', '--no-progress', '-o', out);
    expect(r.code).toBe(1);
    const errs = readJsonl<{ clip_id: string; reason: string }>(`${out}.errors.jsonl`);
    expect(errs).toHaveLength(1);
    expect(errs[0].clip_id).toBe(specs[0].id);
    expect(errs[0].reason).toMatch(/missing frame/);
    expect(readJsonl<{ clip_id: string }>(out).map((x) => x.clip_id)).toEqual([specs[2].id]);
    const none = await cli('run', '--dataset', p.root, '--no-progress', '-o', join(d, 'x.jsonl'));
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/give --nuscenes-root/);
    expect(existsSync(join(d, 'x.jsonl'))).toBe(false);
  }, 120_000);
});

const PUB = sharedPath('data/published');
describe.skipIf(!needsShared('the shared published copy', 'data/published/egodyn-bench', 'data/published/nuscenes'))('the shared published copy (../shared/data/published)', () => {
  it('reads all 45 selected clips: nuScenes from the tables, CARLA from the domain folders', () => {
    const b = readDataset(join(PUB, 'egodyn-bench'), { nuscenesRoot: join(PUB, 'nuscenes'), cacheDir: null });
    expect(b.clips).toHaveLength(45);
    const nus = b.clips.filter((c) => c.source === 'nuscenes'), carla = b.clips.filter((c) => c.source === 'carla');
    expect([nus.length, carla.length]).toEqual([27, 18]);
    for (const c of nus) {
      expect(c.problem).toBeUndefined();
      expect(c.frames!.every((f) => existsSync(f))).toBe(true);
      expect(c.timestamps![0]).toBe(0);
      expect(c.timestamps!.at(-1)!).toBeGreaterThan(2.9);
      expect(c.camera.intrinsics!.fx).toBeCloseTo(718.856, 6);
      expect(c.camera.height).toBe(1.65);
      c.camera.roadNormal!.forEach((v, i) => expect(v).toBeCloseTo([0, 1, 0][i], 9));
    }
    for (const c of carla) expect(existsSync(c.video!)).toBe(true);
    for (const c of nus) expect(c.timeOrigin).toBeGreaterThan(1.5e9); // the nuScenes clock, seconds
    if (!process.env.CI) console.log(`[published] ${nus.length} nuScenes + ${carla.length} CARLA clips`);
  });

  it.skipIf(!NATIVE_BUILT)('a nuScenes and a CARLA clip run: estimate and ground truth share every absolute timestamp (evo_ape tum … -a pairs them all)', async () => {
    const out = join(fresh(), 'shared.jsonl');
    const b = readDataset(join(PUB, 'egodyn-bench'), { nuscenesRoot: join(PUB, 'nuscenes'), cacheDir: null, needFrames: false });
    const pick = [b.clips.find((c) => c.source === 'nuscenes')!, b.clips.find((c) => c.source === 'carla')!];
    const list = join(fresh(), 'clips.json');
    writeFileSync(list, JSON.stringify(pick.map((c) => ({ id: c.id, source: c.source }))));
    const r = await cli('run', '--dataset', join(PUB, 'egodyn-bench'), '--nuscenes-root', join(PUB, 'nuscenes'), '--no-cache', '--clips', list, '--questions', 'subset', '-o', out, '--no-progress');
    expect(r.code, r.err + r.out).toBe(0);
    for (const c of pick) {
      const est = parseTum(readFileSync(join(`${out}.trajectories`, `${c.id}.tum`), 'utf8'), c.id);
      const gt = parseTum(readFileSync(join(`${out}.trajectories`, `${c.id}.gt.tum`), 'utf8'), `${c.id}.gt`);
      expect(associate(est, gt)[0].t.length, c.id).toBe(est.t.length);
      if (c.source === 'nuscenes') expect(est.t[0]).toBeGreaterThan(1.5e9);
      else expect(est.t[1]).toBeCloseTo(0.1, 12);
      expect(ate(est, gt, false).rmse, c.id).toBeLessThan(1.5);
    }
  });
});
