/**
 * The viewer's model (no browser): a clip is re-run through the run's own per-clip task, as the
 * predictions' run ran it (method, frames, scale, photometric stage, questions from its run
 * record), so its answers are the run's — a published baseline's, and the withheld answers of a
 * clip whose scale failed; it serves the frames that run used, names the predictions file of every
 * verdict and setting, and warns when the run was answered by another engine build.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatQualityLine, qualityFromTum } from '../../src/io/trajectories.js';
import { ENGINE_DEFAULTS } from '../../src/vo/config.js';
import { evenFrames } from '../../src/vo/frames.js';
import { ViewData } from '../../src/view/data.js';
import { cli, ensureDist, flattenRoad, NATIVE_BUILT, readJsonl, syntheticDataset, syntheticVideoDataset } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-view-data-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(!NATIVE_BUILT)('egogeo view: the engine as the run ran it', () => {
  let ds = '';
  const preds = join(tmp, 'p10.jsonl');
  beforeAll(() => {
    ensureDist();
    ds = syntheticDataset(join(tmp, 'ds'), [{ id: 'left', speed: 8, yawRate: 0.3, seed: 2, frames: 16 }]);
    const r = cli(['run', '--dataset', ds, '--frames', '6', '--photometric', 'none', '--resolution', 'full', '--workers', '1', '--no-progress', '-o', preds]);
    expect(r.code, r.stderr).toBe(0);
  });

  it("reads the run's frames, scale, photometric stage and resolution; the engine and the frame files follow them", async () => {
    const v = new ViewData({ dataset: ds, predictions: [preds], log: () => {} });
    expect(v.settings).toEqual({ method: 'egogeo', frames: 6, scale: 'road', photometric: 'none', device: 'cpu', resolution: 'full' });
    expect(v.warnings).toEqual([]);
    const c = v.byId.get('left')!;
    const eng = await v.runEngine(c);
    expect(eng.frames).toBe(6);
    expect(eng.native.pairs).toHaveLength(5);
    const sel = evenFrames(16, 6);
    expect([0, 1, 5].map((i) => v.frameFile(c, i))).toEqual([0, 1, 5].map((i) => c.frames![sel[i]]));
    expect(v.frameFile(c, 6)).toBeNull();
    // The page's yaw-rate answer is the run's: same frames, same options.
    const answer = readFileSync(preds, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((p) => p.question_id === 'yaw_rate_turn_direction');
    expect(eng.labels.yaw_rate_turn_direction).toBe(answer.model_answer);
  });

  it('without a run record: all frames, the run defaults; a run by another engine build: a warning naming both', () => {
    expect(new ViewData({ dataset: ds, log: () => {} }).settings).toEqual({ ...ENGINE_DEFAULTS, device: 'cpu' }); // the viewer re-runs clips on the CPU
    const rec = JSON.parse(readFileSync(`${preds}.run.json`, 'utf8'));
    const old = join(tmp, 'old.jsonl');
    writeFileSync(old, readFileSync(preds));
    writeFileSync(`${old}.run.json`, JSON.stringify({ ...rec, key: { ...rec.key, engine: { egogeo: '0.0.9', addon: '0123456789abcdef' } } }));
    const v = new ViewData({ dataset: ds, predictions: [old], log: () => {} });
    expect(v.warnings).toHaveLength(1);
    expect(v.warnings[0]).toMatch(/old\.jsonl: answered by egogeo 0\.0\.9 \(addon 0123456789abcdef\); this viewer's engine is egogeo \S+ \(addon [0-9a-f]{16}\)/);
  });

  it('a second file run otherwise is a warning naming both files and what each ran', () => {
    const rec = JSON.parse(readFileSync(`${preds}.run.json`, 'utf8'));
    const p8 = join(tmp, 'p8.jsonl');
    writeFileSync(p8, readFileSync(preds));
    writeFileSync(`${p8}.run.json`, JSON.stringify({ ...rec, key: { ...rec.key, frames: 8 } }));
    const v = new ViewData({ dataset: ds, predictions: [preds, p8], log: () => {} });
    expect(v.settings.frames).toBe(6);
    expect(v.warnings).toEqual([`${p8}: run as egogeo, 8 frames, scale road, photometric none, resolution full, all questions; the page re-runs clips as p10.jsonl was run (egogeo, 6 frames, scale road, photometric none, resolution full, all questions), its answers and tracks are p10.jsonl's`]);
  });

  it("a run with --cameras overrides: a warning unless the page has the same; with them, none", () => {
    const rec = JSON.parse(readFileSync(`${preds}.run.json`, 'utf8'));
    const cams = { synthetic: { hfov_deg: 60, height: 1.5 } };
    const withCams = join(tmp, 'cams.jsonl');
    writeFileSync(withCams, readFileSync(preds));
    writeFileSync(`${withCams}.run.json`, JSON.stringify({ ...rec, key: { ...rec.key, cameras: cams } }));
    expect(new ViewData({ dataset: ds, predictions: [withCams], log: () => {} }).warnings).toEqual([
      `${withCams}: run with --cameras overrides, this page without; give egogeo view the --cameras the run had to re-run clips as it ran them`,
    ]);
    const file = join(tmp, 'cams.json');
    writeFileSync(file, JSON.stringify(cams));
    expect(new ViewData({ dataset: ds, predictions: [withCams], cameras: file, log: () => {} }).warnings).toEqual([]);
  });

  it('warns when a run answered from the other CARLA domain than the page shows', () => {
    const rec = JSON.parse(readFileSync(`${preds}.run.json`, 'utf8'));
    const sim = join(tmp, 'sim.jsonl');
    writeFileSync(sim, readFileSync(preds));
    writeFileSync(`${sim}.run.json`, JSON.stringify({ ...rec, key: { ...rec.key, carla_domain: 'simulation' } }));
    expect(new ViewData({ dataset: ds, predictions: [sim], log: () => {} }).warnings).toEqual([]);
    const v = new ViewData({ dataset: ds, predictions: [sim], carlaDomain: 'transferred', log: () => {} });
    expect(v.warnings).toEqual([`${sim}: answered from the CARLA simulation videos; this page shows the transferred videos (egogeo view --carla-domain simulation shows what it answered from)`]);
  });

  it("shows a run's quality verdict: the estimate's TUM file carries it, the clip list names it", () => {
    const tum = join(`${preds}.trajectories`, 'left.tum');
    const before = readFileSync(tum, 'utf8');
    expect(qualityFromTum(before)).toMatchObject({ verdict: expect.stringMatching(/^(ok|weak|failed)$/) });
    expect(new ViewData({ dataset: ds, predictions: [preds], log: () => {} }).list()[0].quality?.[0]).toMatchObject({ run: 0, name: 'p10.jsonl', verdict: expect.not.stringMatching(/^ok$/) });
    const failed = { verdict: 'failed', reasons: ['scale collapsed: 4 of 5 moving pairs have no metric distance'], moving_pairs: 5, measured_pairs: 1, road_pairs: 0 };
    writeFileSync(tum, before + formatQualityLine(failed as never));
    try {
      expect(new ViewData({ dataset: ds, predictions: [preds], log: () => {} }).list()[0].quality).toEqual([{ run: 0, name: 'p10.jsonl', verdict: 'failed', reasons: failed.reasons, abstain: false }]);
    } finally {
      writeFileSync(tum, before);
    }
  });
});

type Row = { question: string; engine: string | null; engineAnswered: boolean; answers: { answer: string | null; present: boolean }[] };

describe.skipIf(!NATIVE_BUILT)("egogeo view: the run's own per-clip task answers", () => {
  let ds = '';
  const ego = join(tmp, 'ego.jsonl');
  const vo = join(tmp, 'vo.jsonl');
  const abstaining = join(tmp, 'abstain.jsonl');
  /** A predictions file's answers of a clip, by question id. */
  const written = (file: string, id: string) => Object.fromEntries(readJsonl<{ clip_id: string; question_id: string; model_answer: string | null }>(file).filter((p) => p.clip_id === id).map((p) => [p.question_id, p.model_answer]));
  beforeAll(() => {
    ensureDist();
    ds = syntheticDataset(join(tmp, 'ds2'), [
      { id: 'turn', speed: 8, yawRate: 0.3, seed: 2, frames: 16 },
      { id: 'noroad', speed: 10, yawRate: 0.1, seed: 3, frames: 21 },
    ]);
    flattenRoad(ds, 'noroad'); // its scale fails: an --abstain run withholds its scale-dependent answers
    for (const [out, extra] of [[ego, []], [vo, ['--method', 'vo-proxy']], [abstaining, ['--abstain']]] as const) {
      const r = cli(['run', '--dataset', ds, ...extra, '--workers', '1', '--no-progress', '-o', out]);
      expect(r.code, r.stderr).toBe(0);
    }
  });

  for (const [name, abstain] of [['answering by default', false], ['--abstain', true]] as const) {
    it(`a clip whose scale failed (${name}): the page shows the run's own answers`, async () => {
      const file = abstain ? abstaining : ego;
      const base = abstain ? 'abstain.jsonl' : 'ego.jsonl';
      expect(readFileSync(join(`${file}.trajectories`, 'noroad.tum'), 'utf8')).toContain('"verdict":"failed"');
      const run = written(file, 'noroad');
      if (abstain) expect(run.speed_regime).toBeNull(); // withheld by the run
      else expect(run.speed_regime).not.toBeNull(); // answered from its estimate, the verdict beside it
      const v = new ViewData({ dataset: ds, predictions: [file], log: () => {} });
      expect(v.warnings).toEqual([]);
      const d = (await v.clipDetail('noroad'))!;
      expect(d.error).toBeNull();
      const rows = d.qa as Row[];
      expect(rows.map((q) => q.question).sort()).toEqual(Object.keys(run).sort());
      for (const q of rows) expect({ q: q.question, answered: q.engineAnswered, answer: q.engine }).toEqual({ q: q.question, answered: true, answer: run[q.question] });
      expect(d.rerun).toMatchObject({ of: base, method: 'egogeo', quality: { verdict: 'failed' } });
      expect(d.quality).toEqual([expect.objectContaining({ run: 0, name: base, verdict: 'failed' })]);
      // The re-run's estimate is what the run wrote (the same task, the same frames).
      const eng = await v.runEngine(v.byId.get('noroad')!);
      expect(eng.output.tum).toBe(readFileSync(join(`${file}.trajectories`, 'noroad.tum'), 'utf8'));
      expect(eng.native?.matches?.length).toBe(20); // the page's tracks
    });
  }

  it("a vo-proxy run: the re-run is vo-proxy's (10 frames, its 6 questions), not egogeo's engine", async () => {
    const v = new ViewData({ dataset: ds, predictions: [vo], log: () => {} });
    expect(v.settings.method).toBe('vo-proxy');
    for (const id of ['turn', 'noroad']) {
      const run = written(vo, id);
      const d = (await v.clipDetail(id))!;
      expect(d.error).toBeNull();
      for (const q of d.qa as Row[]) {
        expect({ q: q.question, answered: q.engineAnswered, answer: q.engine }).toEqual({ q: q.question, answered: q.question in run, answer: run[q.question] ?? null });
      }
      expect(d.frames).toBe(10);
      expect(d.series.engine).toBeNull(); // vo-proxy estimates no trajectory
      expect(d.pairs).toEqual([]);
      expect(d.rerun).toMatchObject({ of: 'vo.jsonl', method: 'vo-proxy', settings: 'vo-proxy, 10 frames, the 6-question subset', quality: null });
    }
    const c = v.byId.get('turn')!;
    const sel = evenFrames(16, 10);
    expect([0, 4, 9].map((i) => v.frameFile(c, i))).toEqual([0, 4, 9].map((i) => c.frames![sel[i]]));
    expect(v.frameFile(c, 10)).toBeNull();
    // The vo-proxy run does not answer speed_regime: the page says so ('–'), where egogeo's engine would have answered it.
    expect((await v.clipDetail('turn'))!.qa.find((q) => q.question === 'speed_regime')).toMatchObject({ engineAnswered: false, engine: null });
  });

  it('two predictions files: every verdict and the re-run name their own file', async () => {
    const v = new ViewData({ dataset: ds, predictions: [vo, ego], log: () => {} });
    expect(v.warnings).toEqual([`${ego}: run as egogeo, all frames, scale road, photometric pair, resolution auto, all questions; the page re-runs clips as vo.jsonl was run (vo-proxy, 10 frames, the 6-question subset), its answers and tracks are vo.jsonl's`]);
    const noroad = v.list().find((c) => c.id === 'noroad')!;
    expect(noroad.quality).toEqual([expect.objectContaining({ run: 1, name: 'ego.jsonl', verdict: 'failed' })]);
    const d = (await v.clipDetail('noroad'))!;
    expect(d.rerun).toMatchObject({ of: 'vo.jsonl', method: 'vo-proxy' });
    expect(d.quality).toEqual([expect.objectContaining({ run: 1, name: 'ego.jsonl', verdict: 'failed' })]);
    // Each file's column is its own answers; the re-run column is vo.jsonl's.
    const [runVo, runEgo] = [written(vo, 'noroad'), written(ego, 'noroad')];
    for (const q of d.qa as Row[]) {
      expect(q.answers.map((a) => a.answer)).toEqual([runVo[q.question] ?? null, runEgo[q.question] ?? null]);
      expect(q.engine).toBe(runVo[q.question] ?? null);
    }
  });
});

describe.skipIf(!NATIVE_BUILT)('egogeo view: a video clip', () => {
  it("serves the frames the engine decoded (method egogeo); a published baseline's re-run keeps none", async () => {
    ensureDist();
    const ds = syntheticVideoDataset(join(tmp, 'video'), [{ id: 'v', speed: 8, yawRate: 0.2, seed: 4, frames: 16 }]);
    const d = (await new ViewData({ dataset: ds, log: () => {} }).clipDetail('v'))!;
    expect(d.error).toBeNull();
    expect(d).toMatchObject({ video: true, images: true, frames: 16, rerun: { of: null, method: 'egogeo' } });
    const vo = join(tmp, 'video-vo.jsonl');
    const r = cli(['run', '--dataset', ds, '--method', 'vo-proxy', '--workers', '1', '--no-progress', '-o', vo]);
    expect(r.code, r.stderr).toBe(0);
    const v = new ViewData({ dataset: ds, predictions: [vo], log: () => {} });
    const e = (await v.clipDetail('v'))!;
    expect(e).toMatchObject({ video: true, images: false, frames: 10, rerun: { of: 'video-vo.jsonl', method: 'vo-proxy' } });
    expect(e.qa.find((q) => q.question === 'yaw_rate_turn_direction')!.engine).toBe(readJsonl<{ model_answer: string }>(vo)[0].model_answer);
  });
});
