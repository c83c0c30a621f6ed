/**
 * `egogeo report`: decision margins per rule family, per-source metrics and the largest gap, the
 * oracle-vs-estimate cross-check (near-threshold vs error), trajectory errors, the plots and the
 * CLI's files — on trajectories the tests make, and on a run over ../shared's KITTI windows.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTrajectory, type Trajectory } from '../../src/core/trajectory.js';
import { writeNpz } from '../../src/io/npz.js';
import { formatQualityLine, formatTum } from '../../src/io/trajectories.js';
import { clipData, computeDynamics, type DynamicsArrays, loadQuestions, runOracle, summaryFeatures } from '../../src/oracle/index.js';
import { decisionMargin } from '../../src/report/margins.js';
import { markdown, plots } from '../../src/report/render.js';
import { buildReport, type ClipTruth, clipKey } from '../../src/report/report.js';
import { niceMax } from '../../src/report/svg.js';
import type { Prediction } from '../../src/io/predictions.js';
import { cli, EGODYN_KITTI, ensureDist, HAS_EGODYN_KITTI, kittiSubset, NATIVE_BUILT, readJsonl } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-report-'));
const ARTIFACTS = fileURLToPath(new URL('./artifacts', import.meta.url));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const questions = loadQuestions();
const Q = (id: string) => questions.byId.get(id)!;

/** A constant-speed, constant-yaw-rate drive over 3 s at 10 Hz (planar oracle frame). */
function drive(id: string, speed: number, yawRate: number, accel = 0): Trajectory {
  const t = Array.from({ length: 31 }, (_, i) => i / 10);
  let x = 0, y = 0, yaw = 0, v = speed;
  const xs: number[] = [], ys: number[] = [], yaws: number[] = [];
  for (let i = 0; i < t.length; i++) {
    xs.push(x);
    ys.push(y);
    yaws.push(yaw);
    x += v * Math.cos(yaw) * 0.1;
    y += v * Math.sin(yaw) * 0.1;
    yaw += yawRate * 0.1;
    v += accel * 0.1;
  }
  return makeTrajectory(id, { t, x: xs, y: ys, yaw: yaws });
}
const data = (tr: Trajectory) => {
  const a = computeDynamics(tr);
  return clipData(a, summaryFeatures(a));
};

describe('decisionMargin', () => {
  it('yaw-rate deadzone: the threshold between the ground truth and the estimate, relative distance', () => {
    const gt = data(drive('g', 10, 0.036)); // straight, 10% under the 0.04 rad/s threshold
    const est = data(drive('e', 10, 0.06)); // left
    const m = decisionMargin(Q('yaw_rate_turn_direction'), gt, est);
    expect(m.feature).toBe('abs_max(yaw_rate)');
    expect(m.threshold).toBe(0.04);
    expect(m.value).toBeCloseTo(0.036, 6);
    expect(m.estimate).toBeCloseTo(0.06, 6);
    expect(m.rel).toBeCloseTo(0.1, 5);
  });

  it('multi-threshold: the first threshold crossed towards the estimate, not the relatively nearest', () => {
    const gt = data(drive('g', 8, 0, 0.3)); // accelerating: min(accel) ≈ 0.3 → braking "none"
    const est = data(drive('e', 8, 0, -0.5)); // braking "low"
    const m = decisionMargin(Q('braking_intensity'), gt, est);
    expect(m.feature).toBe('min(accel)');
    expect(m.threshold).toBe(-0.18);
    expect(m.rel).toBeGreaterThan(1);
  });

  it('features by name (speed regime on max_speed) and summary features (heading change)', () => {
    expect(decisionMargin(Q('speed_regime'), data(drive('g', 13.5, 0)))).toMatchObject({ feature: 'max_speed', threshold: 13.9 });
    const h = decisionMargin(Q('significant_heading_change'), data(drive('g', 10, 0.08)));
    expect(h.feature).toBe('total_heading_change');
    expect(h.threshold).toBeCloseTo(0.2618, 6);
    expect(h.rel).toBeCloseTo(Math.abs(h.value - 0.2618) / 0.2618, 9);
  });

  it('AND / OR rules: the condition that would have to change decides', () => {
    // brake_then_turn "no" on a gentle curve at constant speed: both events unmet (yaw rate 0.05
    // of 0.1 rad/s: 50% off; accel 0 of −1.5 m/s²: 100% off); the farther one decides.
    const bt = decisionMargin(Q('brake_then_turn'), data(drive('g', 8, 0.05)));
    expect(bt.feature).toBe('min(accel)');
    expect(bt.rel).toBeCloseTo(1, 3);
    // extreme_maneuver "no": the nearer of the two conditions.
    const ex = decisionMargin(Q('extreme_maneuver'), data(drive('g', 8, 0)));
    expect(['max_abs_jerk', 'min(accel)']).toContain(ex.feature);
    expect(Number.isFinite(ex.rel)).toBe(true);
  });

  it('argmax rule (speed_peak_half): a U-shaped speed profile with nearly equal ends is a near-tie, not 100% away', () => {
    // Slow down then speed up again: speed 10 → ~8 → ~10.1 over 3 s; the peak is at the end by 1%.
    const t = Array.from({ length: 31 }, (_, i) => i / 10);
    const v = t.map((x) => 8 + 2.0 * ((x - 1.5) / 1.5) ** 2 + 0.1 * (x / 3));
    const xs = [0];
    for (let i = 1; i < t.length; i++) xs.push(xs[i - 1] + 0.05 * (v[i] + v[i - 1]));
    const tr = makeTrajectory('u', { t, x: xs, y: t.map(() => 0), yaw: t.map(() => 0) });
    const q = Q('speed_peak_half');
    expect(runOracle(tr, questions).labels.speed_peak_half).toBe('second_half');
    const m = decisionMargin(q, data(tr));
    expect(m.feature).toMatch(/max 1st half − max 2nd half/);
    expect(m.threshold).toBe(0);
    expect(m.rel).toBeLessThan(0.03); // the halves' maxima differ by ~1%
    // A clear late peak is far from the tie.
    const far = decisionMargin(q, data(drive('acc', 6, 0, 1.0)));
    expect(far.rel).toBeGreaterThan(0.15); // (7.5 − 9) / 9
  });

  it('every question of the published file has a finite margin on an ordinary drive', () => {
    const gt = data(drive('g', 7, 0.1, -0.4));
    for (const q of questions.questions) {
      const m = decisionMargin(q, gt, data(drive('e', 7.5, 0.12, -0.2)));
      expect([q.id, Number.isFinite(m.rel)]).toEqual([q.id, true]);
    }
  });
});

const rec = (clip_id: string, source: string, question_id: string, oracle_label: string, model_answer: string): Prediction => ({ clip_id, source, question_id, oracle_label, model_answer, category: 'direct_dynamics' });

describe('buildReport', () => {
  // Two sources; turn direction right on A, wrong near the threshold and far from it on B.
  const trajs: Record<string, [Trajectory, Trajectory]> = {
    a1: [drive('a1', 10, 0.2), drive('a1', 10, 0.21)],
    a2: [drive('a2', 10, -0.2), drive('a2', 10, -0.19)],
    b1: [drive('b1', 10, 0.037), drive('b1', 10, 0.05)], // near: 0.037 vs 0.04
    b2: [drive('b2', 10, 0), drive('b2', 10, -0.3)], // error
  };
  const label = (tr: Trajectory) => runOracle(tr, questions).labels.yaw_rate_turn_direction;
  const records = Object.entries(trajs).map(([id, [g, e]]) => rec(id, id.startsWith('a') ? 'src-a' : 'src-b', 'yaw_rate_turn_direction', label(g), label(e)));
  const src = (id: string) => (id.startsWith('a') ? 'src-a' : 'src-b');
  const clips = new Map<string, ClipTruth>(Object.entries(trajs).map(([id, [g, e]]) => [clipKey(src(id), id), { gt: computeDynamics(g), estimate: e }]));
  const r = buildReport({ name: 't', records, questions, clips, near: 0.15 });

  it('grades per source and names the largest gap', () => {
    expect(Object.keys(r.per_source)).toEqual(['src-a', 'src-b']);
    expect(r.per_source['src-a']).toMatchObject({ accuracy: 1, clips: 2, n: 2 });
    expect(r.per_source['src-b'].accuracy).toBe(0);
    expect(r.gaps.find((g) => g.metric === 'balanced_acc')).toMatchObject({ best: 'src-a', worst: 'src-b' });
  });

  it('splits disagreements into near-threshold cases and errors', () => {
    expect(r.per_question.yaw_rate_turn_direction).toMatchObject({ n: 4, agreement: 0.5, disagreements: 2, near_threshold: 1, errors: 1, unknown: 0 });
    const byClip = Object.fromEntries(r.disagreements.map((d) => [d.clip_id, d]));
    expect(byClip.b1.kind).toBe('near-threshold');
    expect(byClip.b1.margin!.rel).toBeCloseTo(0.075, 3);
    expect(byClip.b2.kind).toBe('error');
    expect(byClip.b2.margin!.threshold).toBe(-0.04);
  });

  it('measures trajectory errors on the oracle grid (zero for a perfect estimate) and picks the worst clips', () => {
    const perfect = buildReport({ name: 'p', records, questions, clips: new Map([[clipKey('src-a', 'a1'), { gt: computeDynamics(trajs.a1[0]), estimate: trajs.a1[0] }]]), near: 0.15 });
    expect(perfect.trajectory_errors.per_clip[0].ate_se3).toBeLessThan(1e-9);
    expect(perfect.trajectory_errors.per_clip[0].speed_rmse).toBeLessThan(1e-9);
    expect(r.trajectory_errors.n_clips).toBe(4);
    expect(r.worst[0].clip_id).toBe('b2');
    expect(r.worst[0].gt.x[0]).toBe(0);
    expect(Object.keys(r.trajectory_errors.per_source)).toEqual(['src-a', 'src-b']);
  });

  it('renders Markdown and SVG', () => {
    const md = markdown(r, false);
    expect(md).toMatch(/\| src-a \| t \| 2 \| 2 \| 1\.000 \|/);
    expect(md).toMatch(/Largest gap in balanced accuracy \(all questions\): \*\*/);
    expect(md).toMatch(/\| yaw_rate_turn_direction \| 4 \| 50\.0% \|/);
    const svgs = plots(r);
    expect(Object.keys(svgs).sort()).toEqual(['disagreements.svg', 'feature_errors.svg', 'per_question.svg', 'per_source.svg', 'trajectories.svg']);
    for (const s of Object.values(svgs)) {
      expect(s.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
      expect(s.trim().endsWith('</svg>')).toBe(true);
      expect(s).not.toMatch(/NaN|undefined/);
    }
    expect(svgs['trajectories.svg'].match(/<polyline/g)).toHaveLength(8);
  });

  it('keeps the same clip apart in two domains', () => {
    const twice = [...records.filter((x) => x.clip_id === 'b2'), { ...records.find((x) => x.clip_id === 'b2')!, source: 'src-c', model_answer: 'straight' }];
    const g = computeDynamics(trajs.b2[0]);
    const both = new Map<string, ClipTruth>([
      [clipKey('src-b', 'b2'), { gt: g, estimate: trajs.b2[1] }],
      [clipKey('src-c', 'b2'), { gt: g, estimate: trajs.b2[0] }],
    ]);
    const t = buildReport({ name: 't2', records: twice, questions, clips: both, near: 0.15 });
    expect(t.n_clips).toBe(2);
    expect([t.per_source['src-b'].accuracy, t.per_source['src-c'].accuracy]).toEqual([0, 1]);
    const errs = Object.fromEntries(t.trajectory_errors.per_clip.map((e) => [e.source, e.ate_se3]));
    expect(errs['src-c']).toBeLessThan(1e-9);
    expect(errs['src-b']).toBeGreaterThan(0.1);
  });

  it('without ground truth: disagreements are unknown and a note says why', () => {
    const bare = buildReport({ name: 'b', records, questions, clips: new Map(), near: 0.15 });
    expect(bare.per_question.yaw_rate_turn_direction.unknown).toBe(2);
    expect(bare.notes.join(' ')).toMatch(/no ground truth/);
  });

  it('niceMax gives 4 round steps', () => {
    expect([niceMax(27), niceMax(1), niceMax(0.9), niceMax(130), niceMax(0)]).toEqual([40, 1, 1, 200, 1]);
  });
});

describe('egogeo report (CLI)', () => {
  it('writes report.md, report.json and the plots from predictions, npz ground truth and TUM estimates', () => {
    ensureDist();
    const dir = join(tmp, 'ds');
    mkdirSync(join(dir, 'arrays'), { recursive: true });
    const index: unknown[] = [];
    const preds: string[] = [];
    mkdirSync(join(tmp, 'p.jsonl.trajectories'), { recursive: true });
    for (const [id, g, e] of [['c1', drive('c1', 9, 0.1), drive('c1', 9, 0.12)], ['c2', drive('c2', 5, -0.05), drive('c2', 6, 0.02)]] as const) {
      const a: DynamicsArrays = computeDynamics(g);
      writeNpz(join(dir, `arrays/${id}.npz`), {
        timestamps: a.timestamps,
        position: { shape: [a.x.length, 2], data: Float64Array.from({ length: 2 * a.x.length }, (_, i) => (i % 2 ? a.y[i >> 1] : a.x[i >> 1])) },
        yaw: a.yaw, speed: a.speed, accel: a.accel, yaw_rate: a.yaw_rate, jerk: a.jerk,
      });
      index.push({ clip_id: id, source: id === 'c1' ? 'carla-sim' : 'nuscenes', video_path: `v/${id}.mp4`, array_ref: `arrays/${id}.npz` });
      const gl = runOracle(g, questions).labels, el = runOracle(e, questions).labels;
      for (const q of questions.questions) preds.push(JSON.stringify(rec(id, id === 'c1' ? 'carla-sim' : 'nuscenes', q.id, gl[q.id], el[q.id])));
      // c2's estimate carries a failed verdict (as a run writes it): the report counts it per source.
      const verdict = id === 'c2' ? formatQualityLine({ verdict: 'failed', reasons: ['scale collapsed: 20 of 30 moving pairs have no metric distance'], moving_pairs: 30, measured_pairs: 10, road_pairs: 0 }) : '';
      writeFileSync(join(tmp, 'p.jsonl.trajectories', `${id}.tum`), formatTum(e) + verdict);
    }
    writeFileSync(join(dir, 'clips_index.jsonl'), index.map((x) => JSON.stringify(x)).join('\n') + '\n');
    writeFileSync(join(tmp, 'p.jsonl'), preds.join('\n') + '\n');
    const r = cli(['report', join(tmp, 'p.jsonl'), '--dataset', dir, '--out', join(tmp, 'rep')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/2 clips, balanced accuracy [\d.]+ pooled over every domain \(per domain: the table below\), largest gap [\d.]+ \((carla-sim|nuscenes) vs (carla-sim|nuscenes)\); 2 clips with trajectory errors/);
    for (const f of ['report.md', 'report.json', 'per_question.svg', 'per_source.svg', 'disagreements.svg', 'trajectories.svg']) expect(existsSync(join(tmp, 'rep', f))).toBe(true);
    // The figures as a reader sees them (test/report/artifacts, not committed); the trajectory panels have axes in metres.
    mkdirSync(ARTIFACTS, { recursive: true });
    for (const f of readdirSync(join(tmp, 'rep')).filter((f) => /\.(svg|png)$/.test(f))) copyFileSync(join(tmp, 'rep', f), join(ARTIFACTS, f));
    const traj = readFileSync(join(tmp, 'rep/trajectories.svg'), 'utf8');
    expect(traj).toContain('forward (m)');
    expect(traj).toContain('right (m)');
    expect(traj).toContain('the 2 clips with the largest ATE');
    const j = JSON.parse(readFileSync(join(tmp, 'rep/report.json'), 'utf8'));
    expect(Object.keys(j.per_source)).toEqual(['carla-sim', 'nuscenes']);
    expect(j.trajectory_errors.n_clips).toBe(2);
    expect(j.quality).toEqual({ nuscenes: { ok: 0, weak: 0, failed: 1, flagged: [{ clip_id: 'c2', verdict: 'failed', reasons: ['scale collapsed: 20 of 30 moving pairs have no metric distance'] }] } });
    expect(readFileSync(join(tmp, 'rep/report.md'), 'utf8')).toMatch(/\| c2 \| nuscenes \| scale collapsed: 20 of 30 moving pairs have no metric distance \|/);
    expect(j.disagreements.every((d: { kind: string }) => d.kind !== 'unknown')).toBe(true);
    expect(cli(['report', join(tmp, 'nope.jsonl')]).stderr).toMatch(/nope\.jsonl: cannot read/);
    expect(cli(['report', join(tmp, 'p.jsonl'), '--near', '-1']).stderr).toMatch(/--near must be/);
  });
});

describe.skipIf(!NATIVE_BUILT || !HAS_EGODYN_KITTI)('egogeo report on runs over egodyn_kitti (../shared)', () => {
  it('reports two runs of the same clips as two domains (--source-label), each with its own trajectories', () => {
    ensureDist();
    const ds = kittiSubset(join(tmp, 'k2'), ['kitti00_000100', 'kitti06_000010']);
    const a = join(tmp, 'dom-a.jsonl'), b = join(tmp, 'dom-b.jsonl');
    expect(cli(['run', '--dataset', ds, '-o', a, '--source-label', 'full']).code).toBe(0);
    expect(cli(['run', '--dataset', ds, '-o', b, '--source-label', 'ten', '--frames', '10']).code).toBe(0);
    const r = cli(['report', a, b, '--out', join(tmp, 'dom')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/4 clips\b.*largest gap [\d.]+ \((full|ten) vs (full|ten)\); 4 clips with trajectory errors/);
    const j = JSON.parse(readFileSync(join(tmp, 'dom/report.json'), 'utf8'));
    expect(Object.keys(j.per_source)).toEqual(['full', 'ten']);
    expect(Object.keys(j.trajectory_errors.per_source)).toEqual(['full', 'ten']);
    expect(j.name).toBe('egogeo_vo [dom-a.jsonl] + egogeo_vo [dom-b.jsonl]');
    // The same run name and source label twice is a collision, named.
    const c = join(tmp, 'dom-c.jsonl');
    expect(cli(['run', '--dataset', ds, '-o', c, '--source-label', 'full', '--frames', '10']).code).toBe(0);
    expect(cli(['report', a, c]).stderr).toMatch(/dom-c\.jsonl: run 'egogeo_vo' \(from its manifest\) is also the run of .*dom-a\.jsonl, and both have clip 'kitti00_000100' of source 'full'; name the runs apart/);
  });


  it('--label-audit: a real run beats no pooled ceiling at the jitter measured from the poses, and beats the literature level’s', () => {
    ensureDist();
    const ds = EGODYN_KITTI;
    const preds = join(tmp, 'lab.jsonl');
    expect(cli(['run', '--dataset', ds, '--limit', '16', '-o', preds]).code).toBe(0);
    const measured = join(tmp, 'lab-measured.json'), literature = join(tmp, 'lab-literature.json');
    expect(cli(['audit', 'labels', '--dataset', ds, '--draws', '8', '--json', measured]).code).toBe(0);
    expect(cli(['audit', 'labels', '--dataset', ds, '--draws', '8', '--source-level', 'kitti=literature', '--json', literature]).code).toBe(0);
    const check = (audit: string, out: string) => {
      const r = cli(['report', preds, '--label-audit', audit, '--out', join(tmp, out)]);
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(readFileSync(join(tmp, out, 'report.json'), 'utf8'));
      return { out: r.stdout, check: j.ceiling_checks[0] as { n_clips: number; rows: { scope: string; beaten: string[]; balanced_acc: number; noise: number }[] } };
    };
    const m = check(measured, 'lab-m');
    expect(m.check.n_clips).toBe(16);
    for (const scope of ['all', 'subset']) {
      const row = m.check.rows.find((x) => x.scope === scope)!;
      expect(row.beaten).toEqual([]);
      expect(row.noise).toBeGreaterThanOrEqual(row.balanced_acc);
    }
    const l = check(literature, 'lab-l');
    expect(l.check.rows.find((x) => x.scope === 'all')!.beaten).toEqual(['noise']);
    expect(l.out).toMatch(/all 14 questions: .* above the noise ceiling .*: ceiling beaten: the noise model is too strong/);
  });

  it('finds the dataset through the run record; ground truth for every clip; KITTI-scale errors', () => {
    ensureDist();
    const ds = kittiSubset(join(tmp, 'k'), ['kitti00_000100', 'kitti00_000105', 'kitti01_000000']);
    const out = join(tmp, 'k.jsonl');
    expect(cli(['run', '--dataset', ds, '-o', out]).code).toBe(0);
    const r = cli(['report', out]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(readFileSync(`${out}.report/report.json`, 'utf8'));
    expect(j.n_clips).toBe(3);
    expect(j.trajectory_errors.n_clips).toBe(3);
    expect(j.trajectory_errors.per_source.kitti.ate_sim3.mean).toBeLessThan(2);
    expect(j.trajectory_errors.per_source.kitti.yaw_rate_rmse.mean).toBeLessThan(0.05);
    expect(j.per_question.yaw_rate_turn_direction.n).toBe(3);
    expect(readJsonl(out)).toHaveLength(42);
  });
});
