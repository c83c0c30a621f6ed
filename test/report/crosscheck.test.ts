/**
 * The report's cross-check: each disagreement's class (noise-decided from a label audit,
 * near-threshold by either value's distance from the threshold, error) on a constructed case of
 * each kind; the signed errors of the deciding value on a constructed bias; runs without a
 * trajectory left out; the label audit's JSON read as `egogeo audit labels` writes it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { auditLabels } from '../../src/audit/labels.js';
import type { Prediction } from '../../src/core/prediction.js';
import { makeTrajectory, type Trajectory } from '../../src/core/trajectory.js';
import { computeDynamics, loadQuestions, runOracle } from '../../src/oracle/index.js';
import { parseLabelAudit } from '../../src/report/labelaudit.js';
import { markdown, plots } from '../../src/report/render.js';
import { buildReport, type ClipTruth, clipKey } from '../../src/report/report.js';

const questions = loadQuestions();
const Q = 'yaw_rate_turn_direction'; // thresholds ±0.04 rad/s on the yaw rate (abs_max: its largest magnitude, signed)

/** Constant speed and yaw rate over 3 s at 10 Hz. */
function drive(id: string, speed: number, yawRate: number): Trajectory {
  const t = Array.from({ length: 31 }, (_, i) => i / 10);
  return makeTrajectory(id, {
    t,
    x: t.map((s) => (yawRate ? (speed / yawRate) * Math.sin(yawRate * s) : speed * s)),
    y: t.map((s) => (yawRate ? (speed / yawRate) * (1 - Math.cos(yawRate * s)) : 0)),
    yaw: t.map((s) => yawRate * s),
  });
}

/** Clips as (truth yaw rate, estimated yaw rate): records answered by the oracle on the estimate. */
function setup(cases: Record<string, [number, number]>, source = 'nuscenes'): { records: Prediction[]; clips: Map<string, ClipTruth> } {
  const records: Prediction[] = [];
  const clips = new Map<string, ClipTruth>();
  for (const [id, [wt, we]] of Object.entries(cases)) {
    const gt = drive(id, 10, wt), est = drive(id, 10, we);
    records.push({ clip_id: id, question_id: Q, source, oracle_label: runOracle(gt, questions).labels[Q], model_answer: runOracle(est, questions).labels[Q] });
    clips.set(clipKey(source, id), { gt: computeDynamics(gt), estimate: est });
  }
  return { records, clips };
}

const DRAWS = 10;

/**
 * A label audit as `audit labels --json` writes it: for Q, each clip's clean label and, in the
 * given share of its DRAWS noise draws, the other label (`flip` of it); `sampled` the labels its
 * 10-frame sampling gives (clean unless named).
 */
function auditDoc(flips: Record<string, number>, clean: Record<string, string> = {}, sampled: Record<string, string> = {}) {
  const flip = (y: string) => (y === 'left' ? 'straight' : 'left');
  return {
    noise_decided_share: 0.2,
    draws: DRAWS,
    source_level_basis: { nuscenes: { key: '0.0012:0.01', basis: 'measured', from: 'measured' } },
    per_clip: Object.entries(flips).map(([clip_id, f]) => {
      const y = clean[clip_id] ?? 'straight';
      const n = Math.round(f * DRAWS);
      return {
        clip_id,
        source: 'nuscenes',
        level: '0.0012:0.01',
        clean: { [Q]: y },
        flips: { [Q]: f },
        draws: n ? { [Q]: Array.from({ length: DRAWS }, (_, k) => (k < n ? flip(y) : y)) } : {},
        sampled: { '10': { spline: { [Q]: sampled[clip_id] ?? y }, densify: { [Q]: y } } },
      };
    }),
    ceiling: { pooled: { per_question: { [Q]: 0.9 } }, per_source: { nuscenes: { per_question: { [Q]: 0.9 } } } },
  };
}

describe('the cross-check classifies each disagreement', () => {
  const { records, clips } = setup({
    truthNear: [0.037, 0.1], // truth 7.5% under the threshold: near-threshold
    estNear: [0.0, 0.042], // truth far, the estimate 5% over it: near-threshold by the estimate
    error: [0.0, 0.2], // both far: an error
    noisy: [0.0, 0.2], // as `error`, but its label flips under the ground truth's noise
    quiet: [0.0, 0.2], // flips too rarely to count
  });
  const labelAudit = parseLabelAudit(auditDoc({ noisy: 0.5, quiet: 0.1, error: 0, truthNear: 0, estNear: 0 }), 'audit.json');
  const r = buildReport({ name: 't', records, questions, clips, near: 0.15, labelAudit });
  const kind = Object.fromEntries(r.disagreements.map((d) => [d.clip_id, d.kind]));

  it('noise-decided, near-threshold (by either value) and error', () => {
    expect(r.disagreements).toHaveLength(5);
    expect(kind).toEqual({ truthNear: 'near-threshold', estNear: 'near-threshold', error: 'error', noisy: 'noise-decided', quiet: 'error' });
    const est = r.disagreements.find((d) => d.clip_id === 'estNear')!.margin!;
    expect(est.rel).toBeGreaterThan(0.15);
    expect(est.estimate_rel).toBeCloseTo(0.05, 2);
    // The ceiling over these 5 clips (all 'straight'): the share of draws keeping the label, 1 − (0.5 + 0.1) / 5.
    expect(r.per_question[Q]).toMatchObject({ disagreements: 5, noise_decided: 1, near_threshold: 2, errors: 2, unknown: 0 });
    expect(r.per_question[Q].noise_ceiling).toBeCloseTo(0.88, 12);
    expect(r.class_shares).toEqual({ 'noise-decided': 0.2, 'near-threshold': 0.4, error: 0.4, unknown: 0 });
  });

  it('shows the noise ceiling beside the balanced accuracy and the noise-decided count', () => {
    const md = markdown(r, false);
    expect(md).toContain('| question | n | agreement | balanced acc. | noise ceiling |');
    expect(md).toMatch(/\| yaw_rate_turn_direction \| 5 \| 0\.0% \| 0\.000 \| 0\.880 \| 0\.000 \| 5 \| 1 \| 2 \| 2 \|/);
    expect(md).toContain('5 in all: 1 noise-decided (20.0%), 2 near-threshold (40.0%), 2 errors (40.0%)');
    expect(md).toContain('Levels: nuscenes 0.0012:0.01 (measured)');
    expect(plots(r)['disagreements.svg']).toContain('noise-decided');
  });

  it('without a label audit there is no noise-decided class', () => {
    const plain = buildReport({ name: 't', records, questions, clips, near: 0.15 });
    expect(plain.disagreements.find((d) => d.clip_id === 'noisy')!.kind).toBe('error');
    expect(plain.per_question[Q].noise_ceiling).toBeNull();
    expect(markdown(plain, false)).not.toContain('noise ceiling');
  });
});

describe('signed errors of the deciding value', () => {
  it('median ratio, bias and spread of an estimate at half the truth', () => {
    const { records, clips } = setup({ a: [0.1, 0.05], b: [0.2, 0.1], c: [0.3, 0.15] });
    const r = buildReport({ name: 't', records, questions, clips, near: 0.15 });
    const [f] = r.feature_errors[Q];
    expect(f.feature).toBe('abs_max(yaw_rate)');
    expect(f.n).toBe(3);
    expect(f.median_ratio).toBeCloseTo(0.5, 3);
    expect(f.bias).toBeCloseTo(-0.1, 3);
    expect(f.spread).toBeCloseTo(Math.sqrt(((0.05 - 0.1) ** 2 + 0 + (0.15 - 0.1) ** 2) / 3), 3);
    expect(f.points.map((p) => p.clip_id)).toEqual(['a', 'b', 'c']);
    expect(markdown(r, false)).toMatch(/\| yaw_rate_turn_direction \| abs_max\(yaw_rate\) \| 3 \| 0\.040 \| 0\.500 \| −0\.100 \| 0\.041 \|/);
    const svg = plots(r)['feature_errors.svg'];
    expect(svg.match(/<circle/g)).toHaveLength(3);
    expect(svg).not.toMatch(/NaN|undefined/);
  });
});

describe('runs without a trajectory', () => {
  it('are left out of the cross-check (vo-proxy) but graded', () => {
    const { records, clips } = setup({ a: [0.0, 0.2] });
    const r = buildReport({ name: 'vp', records, questions, clips, near: 0.15, runs: [{ file: 'vp.jsonl', name: 'vp', name_from: 'file name', carla_domain: null, records, method: 'vo-proxy' }] });
    expect(r.per_question).toEqual({});
    expect(r.disagreements).toEqual([]);
    expect(r.cross_check_left_out).toEqual(['vp']);
    expect(r.notes.join('\n')).toMatch(/left out of the oracle-vs-estimate cross-check \(no trajectory\): vp \(vo-proxy\)/);
    expect(r.overall.n).toBe(1);
    const kept = buildReport({ name: 'e', records, questions, clips, near: 0.15, runs: [{ file: 'e.jsonl', name: 'e', name_from: 'file name', carla_domain: null, records, method: 'egogeo' }] });
    expect(kept.disagreements).toHaveLength(1);
  });
});

describe('a run checked against the ceilings', () => {
  // 20 clips, half turning left: the audit's noise keeps the truth's label in none of the draws for
  // clips 0-9 (ceiling 0.5), its 10-frame spline loses the left turns of clips 1-9.
  const ids = Array.from({ length: 20 }, (_, i) => `k${i}`);
  const truth = Object.fromEntries(ids.map((id, i) => [id, i % 2 ? 'left' : 'straight']));
  const doc = auditDoc(Object.fromEntries(ids.map((id, i) => [id, i < 10 ? 1 : 0])), truth, Object.fromEntries(ids.slice(0, 10).filter((_, i) => i % 2).map((id) => [id, 'straight'])));
  const audit = parseLabelAudit(doc, 'audit.json');
  const records = (wrong: number): Prediction[] => ids.map((id, i) => ({ clip_id: id, question_id: Q, source: 'nuscenes', oracle_label: truth[id], model_answer: i < wrong ? (truth[id] === 'left' ? 'straight' : 'left') : truth[id] }));
  const report = (recs: Prediction[], frames: number | null) =>
    buildReport({ name: 'e', records: recs, questions, clips: new Map(), near: 0.15, labelAudit: audit, runs: [{ file: 'e.jsonl', name: 'e', name_from: 'file name', carla_domain: null, records: recs, method: 'egogeo', frames }] });

  it('a run that beats the noise ceiling and the sampling ceiling says so', () => {
    const r = report(records(0), 10);
    const [c] = r.ceiling_checks;
    expect(c).toMatchObject({ run: 'e', frames: 10, n_clips: 20 });
    const row = c.rows.find((x) => x.scope === Q)!;
    expect(row).toMatchObject({ balanced_acc: 1, ci: [1, 1], beaten: ['noise', 'sampling'] });
    expect(row.noise).toBeCloseTo(0.5, 12);
    expect(row.sampling!.spline).toBeCloseTo(0.75, 12); // left recall 5/10, straight 10/10
    expect(row.sampling!.densify).toBe(1);
    expect(c.beaten.join('\n')).toMatch(/e: yaw_rate_turn_direction: 1\.000 \[1\.000, 1\.000\] above the noise ceiling 0\.500 .*: ceiling beaten: the noise model is too strong/);
    expect(c.beaten.join('\n')).toMatch(/above the 10-frame sampling ceiling 0\.750: ceiling beaten: the natural spline is not the best interpolant at 10 frames/);
    expect(c.rows.find((x) => x.scope === 'all')!.beaten).toEqual(['noise', 'sampling']);
    const md = markdown(r, false);
    expect(md).toContain('### Ceiling check');
    expect(md).toMatch(/\| yaw_rate_turn_direction \| 1\.000 \| \[1\.000, 1\.000\] \| 0\.500 \| 0\.500 \| 0\.750 \| 1\.000 \| ceiling beaten \(noise\), ceiling beaten \(sampling\) \|/);
  });

  it('a run whose interval reaches the ceilings beats none; without its frames no sampling ceiling', () => {
    const r = report(records(9), 10);
    const row = r.ceiling_checks[0].rows.find((x) => x.scope === Q)!;
    expect(row.balanced_acc).toBeCloseTo(0.55, 4);
    expect(row.ci[0]).toBeLessThan(0.5);
    expect(row.beaten).toEqual([]);
    expect(r.ceiling_checks[0].beaten).toEqual([]);
    const all = report(records(0), null).ceiling_checks[0];
    expect(all.rows[0].sampling).toBeNull(); // the audit has no all-frames sampling
    expect(all.beaten).toHaveLength(3); // the noise ceiling: the question, all questions and the subset pooled
  });

  it('the ceilings are over the run’s own clips', () => {
    const r = report(records(0).slice(10), 10);
    expect(r.ceiling_checks[0].n_clips).toBe(10);
    expect(r.ceiling_checks[0].rows[0].noise).toBe(1); // clips 10-19 keep their labels in every draw
    expect(r.ceiling_checks[0].beaten.some((b) => b.includes('noise model'))).toBe(false);
  });
});

describe('the label audit JSON', () => {
  it('is read as audit labels writes it', () => {
    const a = auditLabels([{ id: 'x', source: 'kitti', traj: drive('x', 8, 0.05), published: null }], questions, { levels: [], draws: 3, seed: 1 });
    const v = parseLabelAudit(JSON.parse(JSON.stringify(a)), 'a.json');
    expect(v.share).toBe(a.noise_decided_share);
    expect(v.flips.get('x')).toEqual(a.per_clip[0].flips);
    expect(v.ceiling[Q]).toBe(a.ceiling.pooled.per_question[Q]);
    expect(v.draws).toBe(3);
    expect(v.clips.get('x')!.clean).toEqual(a.per_clip[0].clean);
    expect(v.levels.kitti).toEqual({ key: a.source_levels.kitti, basis: 'measured' });
  });
  it('names the file and field that is wrong', () => {
    expect(() => parseLabelAudit([], 'a.json')).toThrow(/^a\.json: not a label audit/);
    expect(() => parseLabelAudit({ ...auditDoc({}), noise_decided_share: 2 }, 'a.json')).toThrow(/a\.json: "noise_decided_share" must be a number in \(0, 1\]/);
    expect(() => parseLabelAudit({ ...auditDoc({}), per_clip: [{ clip_id: 'x', flips: { q: 'a' } }] }, 'a.json')).toThrow(/a\.json: per_clip\[0\]\.flips\.q: expected a number/);
    const old = auditDoc({ x: 0 });
    delete (old as { draws?: number }).draws;
    expect(() => parseLabelAudit(old, 'a.json')).toThrow(/a\.json: "draws" must be a positive integer .*run it again/);
    const short = auditDoc({ x: 0.5 });
    short.per_clip[0].draws[Q] = ['left'];
    expect(() => parseLabelAudit(short, 'a.json')).toThrow(/a\.json: per_clip\[0\]\.draws\.yaw_rate_turn_direction: expected 10 labels/);
  });
});

describe('egogeo report --label-audit', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'egogeo-crosscheck-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  const preds = join(tmp, 'p.jsonl');
  writeFileSync(preds, `${[{ clip_id: 'n1', question_id: Q, source: 'nuscenes', oracle_label: 'left', model_answer: 'straight' }, { clip_id: 'n2', question_id: Q, source: 'nuscenes', oracle_label: 'left', model_answer: 'right' }].map((r) => JSON.stringify(r)).join('\n')}\n`);

  it('marks the noise-decided disagreements and shows the ceiling', async () => {
    const audit = join(tmp, 'a.json');
    writeFileSync(audit, JSON.stringify(auditDoc({ n1: 0.6, n2: 0 }, { n1: 'left', n2: 'left' })));
    const r = await cli('report', preds, '--label-audit', audit, '--out', join(tmp, 'rep'));
    expect(r.code).toBe(0);
    const j = JSON.parse(readFileSync(join(tmp, 'rep', 'report.json'), 'utf8'));
    expect(j.disagreements.map((d: { clip_id: string; kind: string }) => [d.clip_id, d.kind])).toEqual([['n1', 'noise-decided'], ['n2', 'unknown']]);
    expect(j.per_question[Q].noise_ceiling).toBeCloseTo(0.7, 12); // n1 keeps 'left' in 4 of 10 draws, n2 in all
    expect(j.ceiling_checks).toHaveLength(1);
    expect(readFileSync(join(tmp, 'rep', 'report.md'), 'utf8')).toContain('noise ceiling');
  });

  it('names a file that is not a label audit in one line', async () => {
    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, JSON.stringify({ per_clip: [] }));
    const r = await cli('report', preds, '--label-audit', bad, '--out', join(tmp, 'rep2'));
    expect(r.code).not.toBe(0);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain(`${bad}: "noise_decided_share" must be a number`);
  });
});
