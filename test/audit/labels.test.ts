/**
 * audit labels: on clips with exact ground truth no label flips at zero noise and agreement falls
 * with the noise level on average (analytic trajectories, and a rendered `egogeo synth` dataset
 * through the CLI); seeded draws are reproducible and independent of clip order; smoothing and
 * noise do what they say; the noise ceiling is the grader's balanced accuracy against the published
 * labels; the shared KITTI windows and the published stand-in (skipped without ../shared).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLabels, type LabelAudit, type LabelClip, levelKey, perturb } from '../../src/audit/labels.js';
import { parseFrameCounts, parseNoise, parseSmooth, parseSourceLevels } from '../../src/cli/options.js';
import { Rng } from '../../src/core/random.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { loadQuestions } from '../../src/oracle/index.js';
import { synthesize } from '../../src/synth/dataset.js';
import { cli } from '../helpers/cli.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-labels-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const questions = loadQuestions();

/** A 3 s clip at 10 Hz: speed v0 + a·t + a sway, yaw rate w0 + a sway: exact poses by fine integration. */
function clip(i: number): Trajectory {
  const r = new Rng(77, i);
  const v0 = r.uniform(0, 15), acc = r.uniform(-3, 2), w0 = r.uniform(-0.4, 0.4), sw = r.uniform(0, 1.5), f = r.uniform(0.2, 1);
  const n = 31, t = new Float64Array(n), x = new Float64Array(n), y = new Float64Array(n), yaw = new Float64Array(n);
  let px = 0, py = 0, psi = 0;
  const dt = 1e-3;
  for (let k = 0, s = 0; k < n; k++) {
    const tk = k / 10;
    for (; s * dt < tk - 1e-12; s++) {
      const ts = s * dt;
      const v = Math.max(0, v0 + acc * ts + sw * Math.sin(2 * Math.PI * f * ts));
      px += v * Math.cos(psi) * dt;
      py += v * Math.sin(psi) * dt;
      psi += (w0 + 0.2 * sw * Math.cos(2 * Math.PI * f * ts)) * dt;
    }
    t[k] = tk;
    x[k] = px;
    y[k] = py;
    yaw[k] = psi;
  }
  return { id: `c${i}`, t, x, y, yaw };
}

const CLIPS: LabelClip[] = Array.from({ length: 24 }, (_, i) => ({ id: `c${i}`, source: i % 3 ? 'kitti' : 'nuscenes', traj: clip(i), published: null }));
/** The published absolute accuracies as each source's level: enough noise to flip labels. */
const LIT = { kitti: 'literature', nuscenes: 'literature' } as const;
const NOISE = parseNoise('0.005:0.025,0.01:0.05,0.02:0.1,0.05:0.25,0.1:0.5');

/** Pooled agreement over the noise levels, in the order given. */
const curve = (r: LabelAudit): number[] => r.levels.filter((l) => l.kind === 'noise').map((l) => r.pooled[l.key]);

describe('audit labels on exact analytic trajectories', () => {
  const r = auditLabels(CLIPS, questions, { levels: [...NOISE, ...parseSmooth('3,5')], draws: 8, seed: 5 });

  it('flips no label at zero noise', () => {
    for (const q of r.questions) expect(r.per_question[q]['0:0']).toBe(1);
    // Without published labels the clean labels are the published ones: the exact relabelling agrees.
    for (const q of r.questions) expect(r.clean_vs_published[q]).toBe(1);
  });

  it('loses agreement as the noise grows, on average', () => {
    const c = curve(r);
    expect(c[0]).toBe(1);
    for (let i = 1; i < c.length; i++) expect(c[i]).toBeLessThanOrEqual(c[i - 1] + 1e-9);
    expect(c[c.length - 1]).toBeLessThan(0.9);
    // The jerk question (differentiated three times) is more fragile than the mean speed.
    expect(r.per_question.driving_smoothness['0.02:0.1']).toBeLessThan(r.per_question.mean_speed_low['0.02:0.1']);
  });

  it('reports per source and the ceiling at each source level', () => {
    const r = auditLabels(CLIPS, questions, { levels: [...NOISE, ...parseSmooth('3,5')], draws: 8, seed: 5, sourceLevels: { kitti: 'literature', nuscenes: { kind: 'noise', posM: 0.02, yawDeg: 0.1 } } });
    expect(r.source_levels).toEqual({ kitti: '0.02:0.1', nuscenes: '0.02:0.1' });
    expect(r.source_level_basis.nuscenes.basis).toBe('given');
    expect(r.per_source.kitti.n_clips + r.per_source.nuscenes.n_clips).toBe(24);
    // Published = clean here, so the ceiling is how often perturbed labels keep the clean one (balanced).
    expect(r.ceiling.per_source.kitti.all).toBeLessThan(1);
    expect(r.ceiling.per_source.kitti.per_question.mean_speed_low).toBeGreaterThan(r.ceiling.per_source.kitti.per_question.driving_smoothness);
    for (const c of r.per_clip) for (const v of Object.values(c.flips)) expect(v >= 0 && v <= 1).toBe(true);
  });

  it('is reproducible for a seed and independent of clip order', () => {
    const a = auditLabels(CLIPS.slice(0, 6), questions, { levels: NOISE.slice(2, 3), draws: 4, seed: 9, sourceLevels: LIT });
    const b = auditLabels(CLIPS.slice(0, 6).reverse(), questions, { levels: NOISE.slice(2, 3), draws: 4, seed: 9, sourceLevels: LIT });
    expect(b.per_question).toEqual(a.per_question);
    expect(b.per_clip.slice().reverse()).toEqual(a.per_clip);
    const c = auditLabels(CLIPS.slice(0, 6), questions, { levels: NOISE.slice(2, 3), draws: 4, seed: 10, sourceLevels: LIT });
    expect(c.per_clip.map((x) => x.flips)).not.toEqual(a.per_clip.map((x) => x.flips));
  });

  it('grades the ceiling against the published labels, not the clean ones', () => {
    // Published labels that are all wrong on one question: a ceiling of 0 there whatever the noise.
    const wrong = CLIPS.slice(0, 6).map((c) => {
      const clean = auditLabels([c], questions, { levels: [], draws: 1, seed: 0 }).per_clip[0].clean;
      return { ...c, source: 'carla', published: { ...clean, stop_and_go: clean.stop_and_go === 'yes' ? 'no' : 'yes' } };
    });
    const w = auditLabels(wrong, questions, { levels: [], draws: 2, seed: 0 });
    expect(w.source_levels.carla).toBe('0:0');
    expect(w.ceiling.per_source.carla.per_question.stop_and_go).toBe(0);
    expect(w.ceiling.per_source.carla.per_question.speed_regime).toBe(1);
    expect(w.clean_vs_published.stop_and_go).toBe(0);
  });
});

describe('perturb', () => {
  const t = clip(3);
  it('adds noise of the given σ to x, y and yaw', () => {
    const d: number[] = [], dy: number[] = [];
    for (let k = 0; k < 200; k++) {
      const p = perturb(t, { kind: 'noise', posM: 0.1, yawDeg: 1 }, new Rng(1, k));
      for (let i = 0; i < t.t.length; i++) {
        d.push(p.x[i] - t.x[i], p.y[i] - t.y[i]);
        dy.push(p.yaw[i] - t.yaw[i]);
      }
    }
    const sd = (a: number[]) => Math.sqrt(a.reduce((s, v) => s + v * v, 0) / a.length);
    expect(sd(d)).toBeGreaterThan(0.095);
    expect(sd(d)).toBeLessThan(0.105);
    expect(sd(dy)).toBeCloseTo((1 * Math.PI) / 180, 3);
  });
  it('smoothing keeps a straight constant-speed line and the end poses, and averages across ±π', () => {
    const n = 11, line: Trajectory = { id: 'l', t: Float64Array.from({ length: n }, (_, i) => i / 10), x: Float64Array.from({ length: n }, (_, i) => i), y: new Float64Array(n), yaw: Float64Array.from({ length: n }, (_, i) => (i % 2 ? Math.PI - 0.01 : -Math.PI + 0.01)) };
    const s = perturb(line, { kind: 'smooth', window: 5 }, new Rng(0));
    expect([...s.x]).toEqual([...line.x].map((v) => expect.closeTo(v, 12)));
    for (let i = 1; i < n - 1; i++) expect(Math.abs(Math.cos(s.yaw[i]) + 1)).toBeLessThan(1e-3);
  });
  it('parses levels and refuses bad ones with one line', () => {
    expect(parseNoise('0.02:0.1,0.02:0.1@5').map(levelKey)).toEqual(['0.02:0.1', '0.02:0.1@5']);
    expect(() => parseNoise('0.02:0.1@0')).toThrow(/--noise: expected POS_M:YAW_DEG or POS_M:YAW_DEG@TAU_S/);
    expect(parseSourceLevels('kitti=measured,nuscenes=literature,carla=exact,x=0.01:0.1@3')).toEqual({ kitti: 'measured', nuscenes: 'literature', carla: 'exact', x: { kind: 'noise', posM: 0.01, yawDeg: 0.1, tauS: 3 } });
    expect(() => parseSourceLevels('kitti=loud')).toThrow(/--source-level kitti: expected POS_M:YAW_DEG/);
    expect(parseFrameCounts('10,all,10')).toEqual([10, 'all']);
    expect(() => parseFrameCounts('1')).toThrow(/--frames must be 'all' or an integer >= 2/);
    expect(() => parseNoise('0.02')).toThrow(/--noise: expected POS_M:YAW_DEG .* got '0.02'/);
    expect(() => parseNoise('-1:0')).toThrow(/--noise/);
    expect(() => parseNoise('1e308:0')).toThrow(/--noise: expected POS_M:YAW_DEG or POS_M:YAW_DEG@TAU_S \(σ of position 0–100 m/);
    expect(() => parseSmooth('4')).toThrow(/--smooth: expected odd window/);
    expect(parseSmooth('none')).toEqual([]);
  });
});

const ADDON = fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const WORKER = fileURLToPath(new URL('../../dist/synth/worker.js', import.meta.url));

describe.skipIf(!(existsSync(ADDON) && existsSync(WORKER)))('egogeo audit labels on a rendered dataset (egogeo synth)', () => {
  const dir = join(tmp, 'synth');
  beforeAll(async () => {
    await synthesize({ out: dir, clips: 4, seed: 3, preset: 'mixed', workers: 1, progress: false });
  }, 120_000);

  it('writes JSON, Markdown and the plot; no flip at zero noise; agreement falls with noise', async () => {
    const json = join(tmp, 'a.json'), md = join(tmp, 'a.md'), svg = join(tmp, 'a.svg');
    const r = await cli('audit', 'labels', '--dataset', dir, '--draws', '6', '--noise', '0.01:0.05,0.05:0.25,0.2:1', '--json', json, '--md', md, '--plot', svg);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(readFileSync(json, 'utf8')) as LabelAudit;
    for (const q of j.questions) expect(j.per_question[q]['0:0']).toBe(1);
    // The QA answers synth wrote are the oracle's on the same arrays.
    for (const q of j.questions) expect(j.clean_vs_published[q]).toBe(1);
    const c = curve(j);
    expect(c[c.length - 1]).toBeLessThan(c[0]);
    expect(readFileSync(md, 'utf8')).toContain('| driving_smoothness |');
    expect(readFileSync(svg, 'utf8')).toContain('<svg');
    expect(r.out).toContain('Ceilings: balanced accuracy');
    // Rendered with exact ground truth: the measured jitter is ~0 and no label flips at it.
    for (const s of Object.keys(j.jitter)) expect(j.jitter[s]!.posM).toBeLessThan(1e-4);
    for (const c of j.per_clip) expect(Object.values(c.flips).every((v) => v === 0)).toBe(true);
    expect(j.sampling['10'].spline.pooled.n_clips).toBe(4);
  });

  it('names a bad flag value in one line', async () => {
    const r = await cli('audit', 'labels', '--dataset', dir, '--noise', '0.01;0.05');
    expect(r.code).not.toBe(0);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/--noise/);
  });
});

describe.skipIf(!needsShared('audit labels on the KITTI windows', 'data/egodyn_kitti/clips_index.jsonl'))('audit labels on ../shared', () => {
  it('reproduces the published labels at zero noise; measures KITTI’s jitter (millimetres, not centimetres); the literature level is far harsher; the 10-frame sampling ceiling is in the JSON', async () => {
    const r = await cli('audit', 'labels', '--dataset', sharedPath('data/egodyn_kitti'), '--draws', '4', '--json', join(tmp, 'k.json'));
    expect(r.code).toBe(0);
    const j = JSON.parse(readFileSync(join(tmp, 'k.json'), 'utf8')) as LabelAudit;
    expect(j.n_clips).toBe(64);
    for (const q of j.questions) expect(j.clean_vs_published[q]).toBe(1);
    expect(j.source_level_basis.kitti.basis).toBe('measured');
    expect(j.jitter.kitti!.posM).toBeGreaterThan(3e-4);
    expect(j.jitter.kitti!.posM).toBeLessThan(3e-3);
    expect(r.out).toContain(`noise, kitti @ ${j.source_levels.kitti}`);
    const measured = j.ceiling.per_source.kitti;
    expect(measured.all).toBeGreaterThan(0.95);
    expect(measured.per_question.driving_smoothness).toBeGreaterThan(0.85);
    const lit = await cli('audit', 'labels', '--dataset', sharedPath('data/egodyn_kitti'), '--draws', '4', '--source-level', 'kitti=literature', '--json', join(tmp, 'l.json'));
    expect(lit.code).toBe(0);
    const l = JSON.parse(readFileSync(join(tmp, 'l.json'), 'utf8')) as LabelAudit;
    expect(l.source_levels.kitti).toBe('0.02:0.1');
    expect(l.ceiling.per_source.kitti.per_question.driving_smoothness).toBeLessThan(0.6);
    const s10 = j.sampling['10'];
    expect(s10.spline.pooled.all).toBeLessThan(measured.all);
    expect(s10.spline.pooled.n_clips).toBe(64);
    // The densifier takes exact poses through the spline distance: as smooth as the spline, more than the pair rates were (0.42).
    expect(s10.densify.pooled.per_question.driving_smoothness).toBeGreaterThan(s10.spline.pooled.per_question.driving_smoothness - 0.02);
    expect(s10.densify.pooled.all).toBeGreaterThan(s10.spline.pooled.all - 0.01);
  });
});
