/**
 * The viewer's model (no browser): the engine re-runs a clip with the settings of the predictions'
 * run (frames, scale, photometric stage from its run record), serves the frames that run used, and
 * warns when the run was answered by another engine build.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatQualityLine, qualityFromTum } from '../../src/io/trajectories.js';
import { ENGINE_DEFAULTS } from '../../src/vo/config.js';
import { evenFrames } from '../../src/vo/frames.js';
import { ViewData } from '../../src/view/data.js';
import { cli, ensureDist, NATIVE_BUILT, syntheticDataset } from '../run/fixtures.js';

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
    expect(new ViewData({ dataset: ds, predictions: [preds], log: () => {} }).list()[0].quality?.verdict).not.toBe('ok');
    const failed = { verdict: 'failed', reasons: ['scale collapsed: 4 of 5 moving pairs have no metric distance'], moving_pairs: 5, measured_pairs: 1, road_pairs: 0 };
    writeFileSync(tum, before + formatQualityLine(failed as never));
    try {
      expect(new ViewData({ dataset: ds, predictions: [preds], log: () => {} }).list()[0].quality).toEqual({ verdict: 'failed', reasons: failed.reasons });
    } finally {
      writeFileSync(tum, before);
    }
  });
});
