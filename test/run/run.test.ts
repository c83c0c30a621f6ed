/**
 * `egogeo run` / `egogeo merge` end to end, spawned as the CLI: bad clips, canonical output for any
 * worker count, shards + merge, SIGKILL and SIGINT midway then resume, and (with ../shared) the
 * same answers as `egogeo baseline --kitti` on the same windows.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measuredFromTum, parseTum } from '../../src/io/trajectories.js';
import { loadQuestions } from '../../src/oracle/index.js';
import { runOracle } from '../../src/oracle/oracle.js';
import { associate, ate } from '../../src/vo/errors.js';
import {
  appendRecords,
  BIN,
  cli,
  ensureDist,
  HAS_EGODYN_KITTI,
  kittiSubset,
  NATIVE_BUILT,
  readJsonl,
  ROOT,
  sharedPath,
  syntheticDataset,
  syntheticVideoDataset,
} from './fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-run-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const read = (p: string) => readFileSync(p, 'utf8');

interface Pred {
  qa_id: string;
  clip_id: string;
  question_id: string;
  oracle_label: string;
  model_answer: string;
  source: string;
}

describe.skipIf(!NATIVE_BUILT)('egogeo run on a rendered dataset (bad clips included)', () => {
  let ds = '';
  const GOOD = ['straight', 'left', 'right', 'slow'];
  beforeAll(() => {
    ensureDist();
    ds = syntheticDataset(join(tmp, 'synth'), [
      { id: 'straight', speed: 8, yawRate: 0 },
      { id: 'left', speed: 8, yawRate: 0.3, seed: 2 },
      { id: 'right', speed: 8, yawRate: -0.3, seed: 3 },
      { id: 'slow', speed: 3, yawRate: 0, seed: 4 },
    ], { arrays: true });
    const first = readJsonl<{ frame_paths: string[]; frame_timestamps: number[] }>(join(ds, 'clips_index.jsonl'))[0];
    writeFileSync(join(ds, 'not_a_video.mp4'), 'this is not an mp4\n');
    // Bad clips between the good ones: canonical order interleaves them.
    const index = readJsonl(join(ds, 'clips_index.jsonl'));
    const bad = [
      { clip_id: 'bad_frame', source: 'synthetic', frame_paths: [...first.frame_paths.slice(0, 5), 'frames/nowhere/0005.pgm'], frame_timestamps: first.frame_timestamps.slice(0, 6) },
      { clip_id: 'bad_video', source: 'synthetic', video_path: 'not_a_video.mp4', fps: 10 },
      { clip_id: 'bad_array', source: 'synthetic', frame_paths: first.frame_paths, frame_timestamps: first.frame_timestamps, array_ref: 'arrays/bad_array.npz' },
    ];
    writeFileSync(join(ds, 'clips_index.jsonl'), '');
    appendRecords(ds, [index[0], bad[0], index[1], bad[1], index[2], bad[2], index[3]]);
  });

  const out = (name: string) => join(tmp, name, 'preds.jsonl');
  const run = (name: string, ...args: string[]) => {
    mkdirSync(join(tmp, name), { recursive: true });
    return cli(['run', '--dataset', ds, '-o', out(name), ...args]);
  };

  it('lists bad clips with reasons, answers the rest, exits non-zero', () => {
    const r = run('w2', '--workers', '2');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/3 clips failed/);
    const errors = readJsonl<{ clip_id: string; reason: string }>(`${out('w2')}.errors.jsonl`);
    expect(errors.map((e) => e.clip_id)).toEqual(['bad_frame', 'bad_video', 'bad_array']);
    expect(errors[0].reason).toMatch(/missing frame .*nowhere/);
    expect(errors[1].reason).toMatch(/unreadable video|missing video/);
    expect(errors[2].reason).toMatch(/missing array file .*bad_array\.npz/);
    const preds = readJsonl<Pred>(out('w2'));
    expect([...new Set(preds.map((p) => p.clip_id))]).toEqual(GOOD);
    expect(preds).toHaveLength(GOOD.length * 2);
    expect(preds.every((p) => p.source === 'synthetic')).toBe(true);
    // The rendered motion is easy: turn direction right for all four clips.
    const turn = Object.fromEntries(preds.filter((p) => p.question_id === 'yaw_rate_turn_direction').map((p) => [p.clip_id, p.model_answer]));
    expect(turn).toEqual({ straight: 'straight', left: 'left', right: 'right', slow: 'straight' });
    for (const id of GOOD) expect(read(join(`${out('w2')}.trajectories`, `${id}.tum`))).toMatch(/^# timestamp tx ty tz qx qy qz qw\n/);
    const manifest = JSON.parse(read(`${out('w2')}.manifest.json`));
    expect(manifest).toMatchObject({ model: 'egogeo_vo', type: 'Baseline', input: 'Vision', n_clips: 4, n_predictions: 8, per_source: { synthetic: 4 } });
    expect(manifest.predictions.map((p: { clip_id: string }) => p.clip_id)).toEqual(GOOD);
    expect(manifest.predictions[1].answers.yaw_rate_turn_direction).toBe('left');
    expect(JSON.parse(read(`${out('w2')}.run.json`))).toMatchObject({ status: 'complete', counts: { done: 4, failed: 3 } });
  });

  it('writes the ground truth beside each estimate at the same timestamps, so evo-style association pairs every frame', () => {
    for (const id of GOOD) {
      const dir = `${out('w2')}.trajectories`;
      const est = parseTum(read(join(dir, `${id}.tum`)), id);
      const gt = parseTum(read(join(dir, `${id}.gt.tum`)), `${id}.gt`);
      expect(Array.from(gt.t)).toEqual(Array.from(est.t));
      expect(measuredFromTum(read(join(dir, `${id}.tum`)))).toEqual(Array.from(est.t)); // every frame: every pose measured
      const [a, b] = associate(est, gt); // nearest timestamp within 0.01 s, as evo_ape -a
      expect(a.t.length).toBe(est.t.length);
      expect(b.t.length).toBe(est.t.length);
      // The rendered truth: a straight clip runs along the camera axis (x forward), 8 m/s over the clip.
      if (id === 'straight') {
        const last = gt.t.length - 1;
        expect(gt.x[last] - gt.x[0]).toBeCloseTo(8 * (gt.t[last] - gt.t[0]), 1);
        expect(Math.abs(gt.y[last])).toBeLessThan(1e-6);
      }
      // And the estimate lies on it (ATE after SE(3) alignment, well under the clip's ~24 m).
      expect(ate(est, gt, false).rmse, id).toBeLessThan(0.5);
    }
  });

  // At the published 10 frames the written trajectory is the one the answers come from: the
  // frames' times and the oracle's grid points between them (vo/densify.ts), its truth at the same
  // timestamps, and the oracle on the written file gives the written answers.
  it('--frames 10: the trajectory holds the grid between the frames, its truth shares every timestamp, and it reproduces the answers', () => {
    expect(run('f10', '--frames', '10', '--workers', '2').code).toBe(1);
    const questions = loadQuestions();
    const preds = readJsonl<Pred>(out('f10'));
    for (const id of GOOD) {
      const dir = `${out('f10')}.trajectories`;
      const est = parseTum(read(join(dir, `${id}.tum`)), id);
      const gt = parseTum(read(join(dir, `${id}.gt.tum`)), `${id}.gt`);
      expect(Array.from(gt.t)).toEqual(Array.from(est.t));
      expect(est.t.length, id).toBeGreaterThan(10); // the 10 frames, plus the grid points between them
      for (let i = 1; i < est.t.length; i++) expect(est.t[i] - est.t[i - 1]).toBeLessThan(0.1 + 1e-9);
      // Both files mark the 10 measured poses; the rest are the grid points (issue 53 item 8).
      const text = read(join(dir, `${id}.tum`));
      const measured = measuredFromTum(text)!;
      expect(measured, id).toHaveLength(10);
      expect(measured.every((t) => est.t.includes(t))).toBe(true);
      expect(measuredFromTum(read(join(dir, `${id}.gt.tum`)))).toEqual(measured);
      expect(text).toContain(`# 10 of ${est.t.length} poses measured at frames (timestamps below); the other ${est.t.length - 10} are grid points interpolated between frames\n`);
      // Each listed timestamp is written as its pose line writes it.
      const poseTimes = text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split(' ')[0]);
      expect(text.split('\n').find((l) => l.startsWith('# measured '))!.slice(11).split(' ').every((t) => poseTimes.includes(t))).toBe(true);
      const labels = runOracle(est, questions).labels;
      for (const p of preds.filter((q) => q.clip_id === id)) expect(p.model_answer, `${id} ${p.question_id}`).toBe(labels[p.question_id]);
    }
  });

  it('writes byte-identical files with 1 and 2 workers', () => {
    expect(run('w1', '--workers', '1').code).toBe(1);
    expect(read(out('w1'))).toBe(read(out('w2')));
    expect(read(`${out('w1')}.errors.jsonl`)).toBe(read(`${out('w2')}.errors.jsonl`));
    expect(read(`${out('w1')}.manifest.json`)).toBe(read(`${out('w2')}.manifest.json`));
    for (const id of GOOD) expect(read(join(`${out('w1')}.trajectories`, `${id}.tum`))).toBe(read(join(`${out('w2')}.trajectories`, `${id}.tum`)));
  });

  it('shards 0/2 + 1/2 merge into the single run; merge names missing clips, duplicates and absent shards', () => {
    expect(run('s0', '--shard', '0/2', '--workers', '1').code).toBe(0);
    expect(run('s1', '--shard', '1/2', '--workers', '1').code).toBe(1);
    const ids0 = new Set(readJsonl<Pred>(out('s0')).map((p) => p.clip_id));
    expect([...ids0]).toEqual(GOOD); // indices 0, 2, 4, 6; shard 1 holds the three bad clips
    expect(read(out('s1'))).toBe('');
    const merged = join(tmp, 'merged.jsonl');
    const m1 = cli(['merge', out('s0'), out('s1'), '-o', merged]);
    expect(m1.code).toBe(1);
    expect(m1.stderr).toMatch(/3 clips missing: bad_frame \(missing frame/);
    expect(existsSync(merged)).toBe(false);
    const m2 = cli(['merge', out('s1'), out('s0'), '-o', merged, '--allow-missing']);
    expect(m2.code).toBe(1);
    expect(read(merged)).toBe(read(out('w2')));
    expect(read(`${merged}.errors.jsonl`)).toBe(read(`${out('w2')}.errors.jsonl`));
    expect(readdirSync(`${merged}.trajectories`).sort()).toEqual(GOOD.flatMap((g) => [`${g}.tum`, `${g}.gt.tum`]).sort());
    expect(cli(['merge', out('s0'), out('s0'), '-o', merged]).stderr).toMatch(/shard 0\/2 is also/);
    expect(cli(['merge', out('s0'), '-o', merged]).stderr).toMatch(/shard 1\/2 missing/);
    expect(cli(['merge', out('s0'), out('w2'), '-o', merged]).stderr).toMatch(/other options/);
  });

  it('a clean shard pair merges with exit status 0 and equals the unsharded run', () => {
    const list = join(tmp, 'good.json');
    writeFileSync(list, JSON.stringify(GOOD.map((id) => ({ id, source: 'synthetic' }))));
    expect(run('g', '--clips', list, '--workers', '2').code).toBe(0);
    expect(run('g0', '--clips', list, '--shard', '0/2').code).toBe(0);
    expect(run('g1', '--clips', list, '--shard', '1/2').code).toBe(0);
    const merged = join(tmp, 'gmerged.jsonl');
    const m = cli(['merge', out('g0'), out('g1'), '-o', merged]);
    expect(m.code, m.stderr).toBe(0);
    expect(read(merged)).toBe(read(out('g')));
    expect(read(`${merged}.manifest.json`)).toBe(read(`${out('g')}.manifest.json`));
    expect(read(`${merged}.errors.jsonl`)).toBe('');
  });

  it('--resolution full reaches the engine for frames far apart and is stored in the run key', () => {
    const half = run('f6', '--frames', '6', '--resolution', 'half', '--workers', '2');
    const full = run('f6full', '--frames', '6', '--resolution', 'full', '--workers', '2');
    expect([half.code, full.code]).toEqual([1, 1]); // the bad clips, as above
    const rec = JSON.parse(read(`${out('f6full')}.run.json`));
    expect(rec.key.resolution).toBe('full');
    expect(rec.engine_options.resolution).toBe('full');
    expect(rec.engine_options.wide_baseline.options).toMatchObject({ downsample: 1, kltWindow: 13, kltLevels: 4, minDistance: 8, ratioDrift: 0.6 });
    // 6 frames over 3 s are far apart: tracked at another size, the estimates differ.
    const tum = (name: string) => GOOD.map((id) => read(join(`${out(name)}.trajectories`, `${id}.tum`))).join('');
    expect(tum('f6full')).not.toBe(tum('f6'));
    // The default, 'auto', tracks at both sizes and keeps one estimate per clip: each clip's
    // trajectory is the half-size run's or the full-size run's, bit for bit (its quality line
    // also reads the two sizes' ratio, so it is left out of the comparison).
    const auto = run('f6auto', '--frames', '6', '--workers', '2');
    expect(auto.code).toBe(1);
    expect(JSON.parse(read(`${out('f6auto')}.run.json`)).key).not.toHaveProperty('resolution');
    const one = (name: string, id: string) => read(join(`${out(name)}.trajectories`, `${id}.tum`)).replace(/^# quality .*\n/m, '');
    for (const id of GOOD) expect([one('f6', id), one('f6full', id)]).toContain(one('f6auto', id));
  });

  it('refuses to resume an output made with other options, or one egogeo run did not write', () => {
    const r = run('w2', '--workers', '2', '--questions', 'subset');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/holds a run with other options \(questions: "all" then, "subset" now\)/);
    mkdirSync(join(tmp, 'foreign'), { recursive: true });
    writeFileSync(out('foreign'), read(out('w2')));
    const f = run('foreign');
    expect(f.code).toBe(1);
    expect(f.stderr).toMatch(/exists but no egogeo run wrote it \(no preds\.jsonl\.run\.json beside it\)/);
  });

  it('records the engine (package version, addon build); a resume or merge across engines refuses with one line', () => {
    const rec = JSON.parse(read(`${out('w1')}.run.json`));
    const version = JSON.parse(read(join(ROOT, 'package.json'))).version;
    expect(rec.key.engine).toEqual({ egogeo: version, addon: expect.stringMatching(/^[0-9a-f]{16}$/), device: 'cpu' });
    // ... and what the engine was given beyond the build's defaults, the wide-baseline rule included.
    expect(rec.key.method).toBe('egogeo');
    expect(rec.engine_options).toEqual({
      method: 'egogeo',
      photometric: 'pair',
      scale: 'road',
      frames: null,
      resolution: 'auto',
      wide_baseline: {
        when: 'median frame interval > 0.15 s (after the frame selection)',
        options: { downsample: 1, kltWindow: 13, kltLevels: 4, minDistance: 8, guidedTracking: false, directCheck: true, ratioDrift: 0.6, kltScale: true },
        also: { options: { downsample: 2, kltWindow: 9, kltLevels: 3, minDistance: 4, guidedTracking: false, directCheck: true, ratioDrift: 0.6 }, kept: "full size where its own quality verdict is ok and the tracked road measured at least half its moving pairs, or its direct road alignments that found the road cover half of them and bear its level out (median within a third); otherwise half size runs too (frames area-averaged from the full-size decode) and full size is kept unless its scale failed or the two sizes' distances travelled differ by more than a third: then the estimate with the smaller mean relative speed uncertainty (scale road)" },
      },
    });
    // The default resolution stays out of the key (older records resume); another one is in it.
    expect(rec.key).not.toHaveProperty('resolution');
    // The same output, its record edited to say another build wrote it: interrupted, so a rerun would resume.
    mkdirSync(join(tmp, 'old-engine'), { recursive: true });
    for (const f of ['', '.errors.jsonl', '.manifest.json']) writeFileSync(`${out('old-engine')}${f}`, read(`${out('w1')}${f}`));
    writeFileSync(`${out('old-engine')}.run.json`, JSON.stringify({ ...rec, status: 'interrupted', key: { ...rec.key, engine: { egogeo: '0.0.9', addon: '0123456789abcdef' } } }));
    const r = run('old-engine', '--workers', '1');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `egogeo: ${out('old-engine')} holds a run with other options (engine: egogeo 0.0.9, addon 0123456789abcdef, cpu then, egogeo ${version}, addon ${rec.key.engine.addon}, cpu now); rerun with the same options to resume, or use another -o\n`,
    );
    // A record from before engines were recorded refuses the same way.
    const { engine: _, ...noEngine } = rec.key;
    writeFileSync(`${out('old-engine')}.run.json`, JSON.stringify({ ...rec, status: 'interrupted', key: noEngine }));
    expect(run('old-engine', '--workers', '1').stderr).toMatch(/\(engine: an egogeo that did not record its engine then, egogeo /);
    // A run made with --resolution full does not resume without it, nor the other way round.
    writeFileSync(`${out('old-engine')}.run.json`, JSON.stringify({ ...rec, status: 'interrupted', key: { ...rec.key, resolution: 'full' } }));
    expect(run('old-engine', '--workers', '1').stderr).toMatch(/other options \(resolution: "full" then, the default now\)/);
    expect(run('old-engine', '--workers', '1', '--resolution', 'half').stderr).toMatch(/other options \(resolution: "full" then, "half" now\)/);
    expect(run('old-engine', '--workers', '1', '--resolution', 'quarter').stderr).toBe("egogeo: --resolution must be one of auto, half, full, got 'quarter'\n");
    // Shards answered by two engines do not merge.
    mkdirSync(join(tmp, 's1-old'), { recursive: true });
    for (const f of ['', '.errors.jsonl', '.manifest.json']) writeFileSync(`${out('s1-old')}${f}`, read(`${out('s1')}${f}`));
    const s1 = JSON.parse(read(`${out('s1')}.run.json`));
    writeFileSync(`${out('s1-old')}.run.json`, JSON.stringify({ ...s1, key: { ...s1.key, engine: { egogeo: '0.0.9', addon: '0123456789abcdef' } } }));
    const m = cli(['merge', out('s0'), out('s1-old'), '-o', join(tmp, 'merged-engines.jsonl')]);
    expect(m.code).toBe(1);
    expect(m.stderr).toBe(`egogeo: ${out('s1-old')}: comes from a run with other options than ${out('s0')} (engine: egogeo ${version}, addon ${rec.key.engine.addon}, cpu in ${out('s0')}, egogeo 0.0.9, addon 0123456789abcdef, cpu here)\n`);
  });
});

describe.skipIf(!NATIVE_BUILT)('egogeo run on mp4 clips (CARLA layout)', () => {
  it('each worker decodes its clips in the engine; answers; 1 and 2 workers agree byte for byte', () => {
    ensureDist();
    const specs = [
      { id: 'v_left', speed: 8, yawRate: 0.3, seed: 5 },
      { id: 'v_straight', speed: 8, yawRate: 0, seed: 6 },
      { id: 'v_right', speed: 8, yawRate: -0.3, seed: 7 },
      { id: 'v_left2', speed: 6, yawRate: 0.25, seed: 8 },
      { id: 'v_right2', speed: 6, yawRate: -0.25, seed: 9 },
      { id: 'v_straight2', speed: 10, yawRate: 0, seed: 10 },
    ];
    const ds = syntheticVideoDataset(join(tmp, 'video'), specs);
    const o2 = join(tmp, 'video2.jsonl'), o1 = join(tmp, 'video1.jsonl');
    const r2 = cli(['run', '--dataset', ds, '-o', o2, '--workers', '2', '--source-label', 'carla-sim']);
    expect(r2.code, r2.stderr).toBe(0);
    const preds = readJsonl<Pred>(o2);
    expect(preds.map((p) => [p.clip_id, p.model_answer, p.source])).toEqual(specs.map((s) => [s.id, s.id.replace(/^v_|2$/g, ''), 'carla-sim']));
    expect(cli(['run', '--dataset', ds, '-o', o1, '--workers', '1', '--source-label', 'carla-sim']).code).toBe(0);
    expect(read(o1)).toBe(read(o2));
  });
});

/** Spawns the CLI, resolves once `ready()` holds (polled), then sends `signal`. */
function runAndSignal(args: string[], ready: () => boolean, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const timer = setInterval(() => {
      if (ready()) {
        clearInterval(timer);
        child.kill(signal);
      }
    }, 20);
    child.on('error', reject);
    child.on('exit', (code, sig) => {
      clearInterval(timer);
      resolve({ code, signal: sig, stderr });
    });
  });
}

const lines = (p: string) => (existsSync(p) ? read(p).split('\n').filter(Boolean).length : 0);

describe.skipIf(!NATIVE_BUILT || !HAS_EGODYN_KITTI)('egogeo run on egodyn_kitti (../shared)', () => {
  const IDS = ['kitti00_000000', 'kitti00_000005', 'kitti00_000010', 'kitti00_000015', 'kitti00_000020', 'kitti00_000025'];
  let ds = '';
  let ref = '';
  beforeAll(() => {
    ensureDist();
    ds = kittiSubset(join(tmp, 'kitti'), IDS);
    ref = join(tmp, 'kref.jsonl');
    const r = cli(['run', '--dataset', ds, '-o', ref, '--workers', '2']);
    expect(r.code, r.stderr).toBe(0);
  });

  it('SIGKILL midway (and a torn last line), then rerun: the same final output, no duplicate or torn lines', async () => {
    const out = join(tmp, 'killed.jsonl');
    const k = await runAndSignal(['run', '--dataset', ds, '-o', out, '--workers', '1'], () => lines(out) >= 14, 'SIGKILL');
    expect(k.signal).toBe('SIGKILL');
    const partial = lines(out);
    expect(partial).toBeGreaterThanOrEqual(14);
    expect(partial).toBeLessThan(IDS.length * 14);
    // What a crash in the middle of a write would leave: half a record, no newline.
    appendFileSync(out, '{"qa_id":"qa_00000099","clip_id":"kitti00_0000');
    const r = cli(['run', '--dataset', ds, '-o', out, '--workers', '2']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/from an earlier run/);
    expect(read(out)).toBe(read(ref));
    const preds = readJsonl<Pred>(out);
    expect(new Set(preds.map((p) => `${p.clip_id}/${p.question_id}`)).size).toBe(preds.length);
  });

  it.each(['SIGINT', 'SIGTERM'] as const)('%s: stops scheduling, keeps whole clips, exits 128 + signal with a message; the rerun completes it', async (sig) => {
    const out = join(tmp, `interrupted-${sig}.jsonl`);
    const s = await runAndSignal(['run', '--dataset', ds, '-o', out, '--workers', '1'], () => lines(out) >= 14, sig);
    expect(s.code).toBe(sig === 'SIGINT' ? 130 : 143);
    expect(s.stderr).toMatch(new RegExp(`${sig}: finishing the clips in flight`));
    expect(s.stderr).toMatch(new RegExp(`interrupted \\(${sig}\\): \\d/6 clips done.*rerun the same command to resume`));
    expect(lines(out) % 14).toBe(0);
    expect(lines(out)).toBeLessThan(IDS.length * 14);
    expect(JSON.parse(read(`${out}.run.json`)).status).toBe('interrupted');
    const r = cli(['run', '--dataset', ds, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(read(out)).toBe(read(ref));
  });

  it('on a KITTI sequence directory writes exactly what egogeo baseline --kitti writes', () => {
    const out = join(tmp, 'seq06.jsonl');
    const r = cli(['run', '--dataset', sharedPath('data/kitti/06'), '-o', out, '--workers', '2']);
    expect(r.code, r.stderr).toBe(0);
    const b = cli(['baseline', '--kitti', sharedPath('data/kitti/06')]);
    expect(b.code, b.stderr).toBe(0);
    expect(read(out)).toBe(b.stdout);
    // baseline is run under another name: with -o, the same files (trajectories and their ground truth too).
    const alias = join(tmp, 'alias06.jsonl');
    expect(cli(['baseline', '--kitti', sharedPath('data/kitti/06'), '-o', alias]).code).toBe(0);
    expect(read(alias)).toBe(read(out));
    expect(readdirSync(`${alias}.trajectories`).sort()).toEqual(readdirSync(`${out}.trajectories`).sort());
    expect(readdirSync(`${out}.trajectories`).filter((f) => f.endsWith('.gt.tum')).length).toBe(readdirSync(`${out}.trajectories`).length / 2);
    // KITTI keeps times.txt's clock: estimate and truth pair frame by frame.
    const est = parseTum(read(join(`${out}.trajectories`, 'kitti06_000005.tum')), 'e');
    const gt = parseTum(read(join(`${out}.trajectories`, 'kitti06_000005.gt.tum')), 'g');
    expect(est.t[0]).toBeGreaterThan(0);
    expect(associate(est, gt)[0].t.length).toBe(31);
    expect(ate(est, gt, false).rmse).toBeLessThan(0.5);
  });

  it('without qa.jsonl: answers the questions, oracle labels from the npz arrays; an unreadable npz is a bad clip', () => {
    const dir = kittiSubset(join(tmp, 'noqa'), ['kitti00_000100', 'kitti00_000105']);
    rmSync(join(dir, 'qa.jsonl'));
    writeFileSync(join(dir, 'arrays/kitti00_000105.npz'), 'not an npz');
    const out = join(tmp, 'noqa.jsonl');
    const r = cli(['run', '--dataset', dir, '-o', out, '--questions', 'subset']);
    expect(r.code).toBe(1);
    expect(readJsonl<{ reason: string }>(`${out}.errors.jsonl`)[0].reason).toMatch(/unreadable array file .*kitti00_000105\.npz/);
    const preds = readJsonl<Pred>(out);
    expect(preds.map((p) => p.question_id)).toEqual(['yaw_rate_turn_direction', 'speed_trend', 'significant_heading_change', 'high_lateral_accel', 'brake_then_turn', 'stop_and_go']);
    const truth = new Map(
      readJsonl<{ clip_id: string; question_id: string; answer: string }>(join(sharedPath('data/egodyn_kitti'), 'qa.jsonl'))
        .filter((q) => q.clip_id === 'kitti00_000100')
        .map((q) => [q.question_id, q.answer]),
    );
    for (const p of preds) expect([p.question_id, p.oracle_label]).toEqual([p.question_id, truth.get(p.question_id)]);
  });

  it('a finished output is left as it is by a rerun', () => {
    const before = read(ref);
    const r = cli(['run', '--dataset', ds, '-o', ref, '--workers', '2']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/6\/6 clips .* 0 clips in .*6 from an earlier run/);
    expect(read(ref)).toBe(before);
  });

  it('gives the same answers as egogeo baseline --kitti on the same windows (01 and 06)', () => {
    const ids = [0, 5, 10, 15, 20].flatMap((s) => [`kitti01_${String(s).padStart(6, '0')}`, `kitti06_${String(s).padStart(6, '0')}`]);
    const list = join(tmp, 'k0106.json');
    writeFileSync(list, JSON.stringify(ids));
    const out = join(tmp, 'k0106.jsonl');
    const r = cli(['run', '--dataset', sharedPath('data/egodyn_kitti'), '--clips', list, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    const mine = readJsonl<Pred>(out);
    const base: Pred[] = [];
    for (const seq of ['01', '06']) {
      const b = cli(['baseline', '--kitti', sharedPath('data/kitti', seq)]);
      expect(b.code, b.stderr).toBe(0);
      base.push(...b.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Pred));
    }
    const key = (p: Pred) => `${p.clip_id}/${p.question_id}`;
    const answers = (ps: Pred[]) => new Map(ps.map((p) => [key(p), [p.model_answer, p.oracle_label, p.source]]));
    expect(mine).toHaveLength(ids.length * 14);
    expect(answers(mine)).toEqual(answers(base));
  });
});
