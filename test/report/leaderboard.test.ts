/**
 * `egogeo report` over several runs: runs of the same clips kept apart by CARLA domain, nuScenes
 * reported once when the runs agree, the per-domain table and its gaps (computed by hand here),
 * leaderboard rows as the reference's build_leaderboard.py makes them, their ranks among a tiny
 * leaderboard (by hand), the CLI's errors, and — with ../shared — two runs over the published
 * layout's clips placed on the published leaderboard.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Prediction } from '../../src/io/predictions.js';
import { loadQuestions } from '../../src/oracle/index.js';
import { domainTable } from '../../src/report/domains.js';
import { type LeaderboardRow, neighbourhood, parseLeaderboard, placeOnLeaderboard, rowQuestions, runRow } from '../../src/report/leaderboard.js';
import { combineRuns, type ReportRun } from '../../src/report/runs.js';
import { buildReport } from '../../src/report/report.js';
import { domainLines, markdown, placementLines } from '../../src/report/render.js';
import { cli, ensureDist } from '../run/fixtures.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-report-lb-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const questions = loadQuestions();
const Y = 'yaw_rate_turn_direction'; // in the 6-question subset
const B = 'braking_intensity'; // not in it

const rec = (clip_id: string, source: string, question_id: string, oracle_label: string, model_answer: string): Prediction => ({
  clip_id,
  source,
  question_id,
  oracle_label,
  model_answer,
  category: 'direct_dynamics',
});

/**
 * Two runs of the same 4 clips (nuScenes clip_1, clip_2; CARLA t__a__w0, t__b__w0), 2 questions.
 * nuScenes: the same answers in both runs. CARLA: right in simulation, turn direction of t__a
 * wrong in the transferred run.
 */
function twoRuns(nuDiffer = false): ReportRun[] {
  const nu = (differ: boolean) => [
    rec('clip_1', 'nuscenes', Y, 'left', 'left'),
    rec('clip_2', 'nuscenes', Y, 'right', differ ? 'right' : 'left'),
    rec('clip_1', 'nuscenes', B, 'none', 'none'),
    rec('clip_2', 'nuscenes', B, 'none', 'none'),
  ];
  const carla = (a: string) => [
    rec('t__a__w0', 'carla', Y, 'left', a),
    rec('t__b__w0', 'carla', Y, 'straight', 'straight'),
    rec('t__a__w0', 'carla', B, 'none', 'none'),
    rec('t__b__w0', 'carla', B, 'low', 'none'),
  ];
  return [
    { file: 'sim.jsonl', name: 'egogeo_simulation', name_from: 'manifest', carla_domain: 'simulation', records: [...nu(false), ...carla('left')] },
    { file: 'tr.jsonl', name: 'egogeo_transferred', name_from: 'run record', carla_domain: 'transferred', records: [...nu(nuDiffer), ...carla('right')] },
  ];
}

describe('runs by domain', () => {
  it('splits CARLA clips by the run domain and counts agreeing nuScenes answers once', () => {
    const c = combineRuns(twoRuns());
    expect(c.domains).toEqual([
      { domain: 'nuscenes', runs: ['egogeo_simulation', 'egogeo_transferred'] },
      { domain: 'carla simulation', runs: ['egogeo_simulation'] },
      { domain: 'carla transferred', runs: ['egogeo_transferred'] },
    ]);
    expect(c.records).toHaveLength(12);
    expect(c.notes).toEqual(['nuscenes: the same 4 answers in egogeo_simulation and egogeo_transferred; counted once']);
  });

  it('per-domain rows, 6-question subset and all questions, and the gaps (by hand)', () => {
    const c = combineRuns(twoRuns());
    const t = domainTable(c.records, questions, c.domains);
    const row = Object.fromEntries(t.rows.map((r) => [r.domain, r]));
    expect(t.rows.map((r) => r.domain)).toEqual(['nuscenes', 'carla simulation', 'carla transferred']);
    // nuScenes, subset: oracle [left, right] → [left, left]: recall left 1, right 0 → 0.5.
    // All: + braking [none, none] → [none, none]: recalls left 1, right 0, none 1 → 2/3; accuracy 3/4.
    expect(row.nuscenes).toMatchObject({ clips: 2, questions: 2, subset: { balanced_acc: 0.5, accuracy: 0.5, n: 2 }, all: { accuracy: 0.75, n: 4 } });
    expect(row.nuscenes.all.balanced_acc).toBeCloseTo(2 / 3, 4);
    // CARLA simulation: subset all right → 1; all: low answered none → recalls 1, 1, 1, 0 → 0.75.
    expect(row['carla simulation']).toMatchObject({ subset: { balanced_acc: 1, accuracy: 1 }, all: { balanced_acc: 0.75, accuracy: 0.75 } });
    // CARLA transferred: left answered right → subset recalls left 0, straight 1 → 0.5; all: 0, 1, 1, 0 → 0.5.
    expect(row['carla transferred']).toMatchObject({ subset: { balanced_acc: 0.5, accuracy: 0.5 }, all: { balanced_acc: 0.5, accuracy: 0.5 } });
    const gaps = Object.fromEntries(t.gaps.map((g) => [`${g.a} - ${g.b}`, g]));
    expect(Object.keys(gaps)).toEqual(['carla transferred - carla simulation', 'carla simulation - nuscenes', 'carla transferred - nuscenes']);
    expect(gaps['carla transferred - carla simulation'].subset_balanced_acc).toBeCloseTo(-0.5, 9);
    expect(gaps['carla transferred - carla simulation'].balanced_acc).toBeCloseTo(-0.25, 9);
    expect(gaps['carla simulation - nuscenes'].subset_balanced_acc).toBeCloseTo(0.5, 9);
    expect(gaps['carla simulation - nuscenes'].balanced_acc).toBeCloseTo(0.75 - 0.6667, 4);
    expect(gaps['carla transferred - nuscenes'].subset_balanced_acc).toBeCloseTo(0, 9);
  });

  it('nuScenes answers that differ between the runs: one row per run, gaps against the same run', () => {
    const c = combineRuns(twoRuns(true));
    expect(c.notes).toEqual(['nuscenes: egogeo_simulation and egogeo_transferred differ in 1 of 4 answers; reported once per run']);
    const t = domainTable(c.records, questions, c.domains);
    expect(t.rows.map((r) => r.domain)).toEqual(['nuscenes (egogeo_simulation)', 'nuscenes (egogeo_transferred)', 'carla simulation', 'carla transferred']);
    expect(t.rows[1].subset!.balanced_acc).toBe(1);
    const g = t.gaps.find((x) => x.a === 'carla transferred' && x.b.startsWith('nuscenes'))!;
    expect(g.b).toBe('nuscenes (egogeo_transferred)');
    expect(g.subset_balanced_acc).toBeCloseTo(-0.5, 9);
  });
});

describe('leaderboard placement', () => {
  const runs = twoRuns();
  const ours = runs.map((r) => runRow(r.name, r.records, questions));
  const q = (ids: string[]) => Object.fromEntries(ids.flatMap((id) => [[`q_${id}_accuracy`, 0.5], [`q_${id}_balanced_acc`, 0.5]]));
  const published: LeaderboardRow[] = [
    { model: 'vlm_a', n_total: 42, balanced_acc: 0.7, src_nuscenes_balanced_acc: 0.5, src_carla_balanced_acc: 0.8, ...q(['x', 'y', 'z']) },
    { model: 'geo_sim', n_total: 8, balanced_acc: 0.6, src_nuscenes_balanced_acc: 0.7, src_carla_balanced_acc: 0.55, ...q([Y, B]) },
    { model: 'geo_tr', n_total: 8, balanced_acc: 0.55, src_nuscenes_balanced_acc: 0.7, src_carla_balanced_acc: 0.5, ...q([Y, B]) },
    { model: 'weak', n_total: 14, balanced_acc: 0.2 },
  ];

  it("makes the reference's row: pooled, per source by clip id, per question", () => {
    // Simulation run pooled: recalls left 2/2, right 0/1, none 3/3, straight 1/1, low 0/1 → 0.6.
    expect(ours[0]).toMatchObject({ model: 'egogeo_simulation', n_total: 8, n_parsed: 8, balanced_acc: 0.6, accuracy: 0.75, src_nuscenes_balanced_acc: 0.6667, src_carla_balanced_acc: 0.75 });
    // Transferred: left 1/2 → 0.5 + 0 + 1 + 1 + 0 → 0.5.
    expect(ours[1]).toMatchObject({ balanced_acc: 0.5, src_nuscenes_balanced_acc: 0.6667, src_carla_balanced_acc: 0.5 });
    expect(rowQuestions(ours[0])).toEqual([B, Y]);
    // Key order as build_leaderboard.py writes it.
    const keys = Object.keys(ours[0]);
    expect(keys.slice(0, 6)).toEqual(['model', 'n_total', 'n_parsed', 'parsable_coverage', 'accuracy', 'balanced_acc']);
    expect(keys.indexOf('src_carla_accuracy')).toBeLessThan(keys.indexOf('src_nuscenes_accuracy'));
    expect(keys.indexOf('emcr')).toBeGreaterThan(0);
  });

  it('ranks (by hand): pooled, per source, among the same questions; ties share a rank', () => {
    const lb = placeOnLeaderboard('lb.json', published, ours);
    const [sim, tr] = lb.placements;
    // Pooled: 0.7, [0.6 geo_sim, 0.6 ours], 0.55, 0.5 ours, 0.2.
    expect(sim.rank.balanced_acc).toEqual({ rank: 2, of: 6 });
    expect(tr.rank.balanced_acc).toEqual({ rank: 5, of: 6 });
    // nuScenes (weak has none): 0.7, 0.7, 0.6667, 0.6667, 0.5.
    expect(sim.rank.src_nuscenes_balanced_acc).toEqual({ rank: 3, of: 5 });
    expect(tr.rank.src_nuscenes_balanced_acc).toEqual({ rank: 3, of: 5 });
    // CARLA: 0.8, 0.75 ours, 0.55, [0.5 geo_tr, 0.5 ours].
    expect(sim.rank.src_carla_balanced_acc).toEqual({ rank: 2, of: 5 });
    expect(tr.rank.src_carla_balanced_acc).toEqual({ rank: 4, of: 5 });
    // Same two questions: geo_sim 0.6, geo_tr 0.55 and ours.
    expect(sim.rank_same_questions).toEqual({ rank: 1, of: 4 });
    expect(tr.rank_same_questions).toEqual({ rank: 4, of: 4 });
    expect(lb.ranking.map((r) => [r.rank, r.model, r.same_questions])).toEqual([
      [1, 'vlm_a', false],
      [2, 'egogeo_simulation', true],
      [2, 'geo_sim', true],
      [4, 'geo_tr', true],
      [5, 'egogeo_transferred', true],
      [6, 'weak', false],
    ]);
    expect(lb.other_questions).toEqual({ 3: 1, 0: 1 });
    expect(neighbourhood(lb.ranking, 0).map((r) => r && r.model)).toEqual([null, 'egogeo_simulation', null, 'egogeo_transferred', null]);
    expect(neighbourhood(lb.ranking, 1)).toHaveLength(6);
  });

  it('a run answering more questions is also graded on the smaller set and ranked among its rows; other clip counts are noted', () => {
    const geoY: LeaderboardRow = { model: 'geo_y', n_total: 4, balanced_acc: 0.7, ...q([Y]) };
    const rows = runs.map((r, i) => ({
      row: ours[i],
      clips: i === 0 ? 4 : 3,
      subsets: new Map([[Y, runRow(r.name, r.records.filter((x) => x.question_id === Y), questions)]]),
    }));
    const lb = placeOnLeaderboard('lb.json', [...published, geoY], rows);
    // Simulation, turn direction only: oracle [left, right, left, straight] → [left, left, left, straight]:
    // recalls 1, 0, 1 → 0.6667, below geo_y's 0.7. Transferred: left 1/2, right 0, straight 1 → 0.5.
    expect(lb.placements[0].subset).toEqual({ questions: 1, balanced_acc: 0.6667, src_nuscenes_balanced_acc: 0.5, src_carla_balanced_acc: 1, rank: { rank: 2, of: 2 } });
    expect(lb.placements[1].subset!.balanced_acc).toBe(0.5);
    expect(lb.other_questions).toEqual({ 3: 1, 0: 1, 1: 1 });
    // geo_sim and geo_tr cover 4 clips (8 predictions / 2 questions): the 3-clip run is noted.
    expect(lb.notes).toEqual(['egogeo_transferred answers 3 clips, the published rows about 4: its ranks compare results on different clips']);
  });

  it('a published row with the name of a run stays; the run stands beside it, marked reproduced', () => {
    const lb = placeOnLeaderboard('lb.json', [...published, { model: 'egogeo_simulation', balanced_acc: 0.99 }], ours);
    expect(lb.n_published).toBe(5);
    expect(lb.placements[0].model).toBe('egogeo_simulation (reproduced)');
    // Pooled: 0.99 (published), 0.7, [0.6 geo_sim, 0.6 ours], …
    expect(lb.placements[0].rank.balanced_acc).toEqual({ rank: 3, of: 7 });
    expect(lb.ranking.map((r) => r.model).slice(0, 3)).toEqual(['egogeo_simulation', 'vlm_a', 'egogeo_simulation (reproduced)']);
    expect(lb.ranking[0].egogeo).toBe(false);
    expect(lb.notes[0]).toMatch(/has a row 'egogeo_simulation' \(balanced_acc 0\.99\): kept; this run's row stands beside it as 'egogeo_simulation \(reproduced\)'/);
  });

  it('an abstaining run shows its coverage and ranks below an answering run of equal accuracy (the unanswered counted as wrong)', () => {
    // The simulation run, and the same answers plus two clips left unanswered: the grader's figure is the same 0.6.
    const answering = { ...runs[0], name: 'answering' };
    const abstaining = { ...runs[0], name: 'abstaining', records: [...runs[0].records, rec('clip_3', 'nuscenes', Y, 'left', null as never), rec('t__c__w0', 'carla', Y, 'straight', null as never)] };
    const r = buildReport({ name: 'two', records: [...answering.records, ...abstaining.records], questions, clips: new Map(), near: 0.15, runs: [abstaining, answering], leaderboard: { file: 'lb.json', rows: published } });
    const lb = r.leaderboard!;
    const [ab, an] = lb.placements;
    expect(ab.balanced_acc).toBe(an.balanced_acc); // the published grader leaves the unanswered out
    expect(an).toMatchObject({ coverage: 1, balanced_acc_all: 0.6 });
    // Counted as wrong: recalls left 2/3, right 0/1, none 3/3, straight 1/2, low 0/1 → 0.4333.
    expect(ab).toMatchObject({ coverage: 0.8, balanced_acc_all: 0.4333 });
    expect(ab.rank.balanced_acc!.rank).toBeGreaterThan(an.rank.balanced_acc!.rank);
    const order = lb.ranking.map((x) => x.model);
    expect(order.indexOf('abstaining')).toBeGreaterThan(order.indexOf('answering'));
    const text = placementLines(lb, Infinity).join('\n');
    expect(text).toMatch(/abstaining: coverage 80\.0%; balanced_acc 0\.6000 \(0\.4333 all\) rank 5\/6/);
    expect(text).toMatch(/answering: coverage 100\.0%; balanced_acc 0\.6000 rank 2\/6/);
    expect(text).toMatch(/abstaining answers 80\.0% of its items/);
    expect(text).toMatch(/\n +5 +abstaining +◀ +10 +2 +80\.0% +0\.6000 \(0\.4333 all\)/);
    // The per-domain rows and the headline carry it too (both runs' records pooled here: 2 of 18 unanswered).
    expect(r.coverage).toMatchObject({ answered: 16, total: 18 });
    expect(r.domains.rows.find((d) => d.domain === 'nuscenes')!.all_coverage).toMatchObject({ answered: 8, total: 9 });
    expect(domainLines(r).join('\n')).toMatch(/\nnuscenes .* 80\.0% \(BAcc 0\.\d{3} all\) +88\.9% \(BAcc 0\.\d{3} all\)\n/);
    expect(markdown(r, false)).toMatch(/\(16\/18 items answered; 0\.\d{3} with the unanswered counted as wrong\)/);
  });

  it('validates the file: a list of rows with a string model and a numeric balanced_acc', () => {
    expect(() => parseLeaderboard({ rows: [] }, 'x.json')).toThrow(/^x\.json: not a leaderboard: expected a JSON list of leaderboard rows.*got object$/);
    expect(() => parseLeaderboard([], 'x.json')).toThrow(/got an empty list/);
    expect(() => parseLeaderboard([{ model: 'a', balanced_acc: 0.5 }, { model: 'b', balanced_acc: '0.4' }], 'x.json')).toThrow(/x\.json: not a leaderboard: row 2 \("b"\) has no numeric "balanced_acc"/);
    expect(() => parseLeaderboard([{ balanced_acc: 0.5 }], 'x.json')).toThrow(/row 1 has no string "model"/);
  });
});

const jsonl = (rs: unknown[]) => rs.map((r) => `${JSON.stringify(r)}\n`).join('');
/** A predictions file with the run record (and manifest) `egogeo run` writes beside it. */
function writeRun(path: string, records: unknown[], o: { domain?: string | null; model?: string }): void {
  writeFileSync(path, jsonl(records));
  const key = { dataset: join(tmp, 'no-dataset'), clips: null, source_label: null, limit: null, questions: 'all', frames: null, config: 'q.yaml', scale: 'road', ...(o.domain !== undefined ? { carla_domain: o.domain } : {}) };
  writeFileSync(`${path}.run.json`, JSON.stringify({ egogeo_run: 1, key, shard: { index: 0, count: 1 }, model: o.model ?? 'egogeo_vo', clips_total: 0, clips: [], status: 'complete', started: '' }));
  if (o.model) writeFileSync(`${path}.manifest.json`, JSON.stringify({ model: o.model, type: 'Baseline', input: 'Vision' }));
}

describe('egogeo report over two runs (CLI)', () => {
  const runs = twoRuns();
  const sim = join(tmp, 'sim.jsonl'), tr = join(tmp, 'tr.jsonl'), lbFile = join(tmp, 'lb.json');
  writeRun(sim, runs[0].records, { domain: 'simulation', model: 'egogeo_simulation' });
  writeRun(tr, runs[1].records, { domain: 'transferred' }); // named by its run record
  const q = (ids: string[]) => Object.fromEntries(ids.flatMap((id) => [[`q_${id}_balanced_acc`, 0.5]]));
  writeFileSync(
    lbFile,
    JSON.stringify([
      { model: 'vlm_a', n_total: 42, balanced_acc: 0.7, src_nuscenes_balanced_acc: 0.5, src_carla_balanced_acc: 0.8, ...q(['x', 'y', 'z']) },
      { model: 'geo_sim', n_total: 8, balanced_acc: 0.6, src_nuscenes_balanced_acc: 0.7, src_carla_balanced_acc: 0.55, ...q([Y, B]) },
    ]),
  );

  it('prints the per-domain table and the placement; writes them to report.md and report.json', () => {
    ensureDist();
    const out = join(tmp, 'two');
    const r = cli(['report', sim, tr, '--leaderboard', lbFile, '--leaderboard-rows', 'all', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^egogeo: 2 runs \(egogeo_simulation, egogeo_transferred\), 6 clips/);
    expect(r.stdout).toMatch(/(^|\n)nuscenes +egogeo_simulation = egogeo_transferred +2 +0\.500 +0\.500 +[\d.]+ +0\.667 +0\.750 /);
    expect(r.stdout).toMatch(/(^|\n)carla simulation +egogeo_simulation +2 +1\.000 +1\.000 +1\.000 +0\.750 +0\.750 /);
    expect(r.stdout).toMatch(/(^|\n)carla transferred +egogeo_transferred +2 +0\.500 +0\.500 /);
    expect(r.stdout).toMatch(/gap carla transferred − carla simulation: balanced accuracy −0\.500 \(6 questions\), −0\.250 \(all\)/);
    expect(r.stdout).toMatch(/egogeo_simulation: coverage 100\.0%; balanced_acc 0\.6000 rank 2\/4; nuScenes 0\.6667 rank 2\/4; CARLA 0\.7500 rank 2\/4; 1\/3 among rows answering the same 2 questions/);
    expect(r.stdout).toMatch(/egogeo_transferred: coverage 100\.0%; balanced_acc 0\.5000 rank 4\/4/);
    expect(r.stdout).toMatch(/† answers other questions than egogeo's rows \(1 row with 3\)/);
    const j = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(j.runs.map((x: { name: string; name_from: string; carla_domain: string }) => [x.name, x.name_from, x.carla_domain])).toEqual([
      ['egogeo_simulation', 'manifest', 'simulation'],
      ['egogeo_transferred', 'run record', 'transferred'],
    ]);
    expect(j.domains.rows.map((x: { domain: string }) => x.domain)).toEqual(['nuscenes', 'carla simulation', 'carla transferred']);
    expect(j.leaderboard.placements.map((p: { rank: { balanced_acc: { rank: number } } }) => p.rank.balanced_acc.rank)).toEqual([2, 4]);
    expect(j.leaderboard.rows[0].src_carla_balanced_acc).toBe(0.75);
    expect(Object.keys(j.per_source)).toEqual(['carla simulation', 'carla transferred', 'nuscenes']);
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toMatch(/## Per domain/);
    expect(md).toMatch(/\| carla transferred \| egogeo_transferred \| 2 \| 4 \| 0\.500 \|/);
    expect(md).toMatch(/## On the leaderboard/);
    expect(md).toMatch(/\| \*\*2\*\* \| \*\*egogeo_simulation\*\* \|/);
    expect(existsSync(join(out, 'leaderboard.svg'))).toBe(true);
  });

  it('a bad leaderboard, the same file twice and two runs claiming one name are one-line errors', () => {
    ensureDist();
    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, '{"rows": []}');
    let r = cli(['report', sim, '--leaderboard', bad, '--out', join(tmp, 'x')]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/bad\.json: not a leaderboard: expected a JSON list of leaderboard rows, each with a string "model" and a numeric "balanced_acc", got object/);
    writeFileSync(bad, '[{"model": "a"}]');
    expect(cli(['report', sim, '--leaderboard', bad]).stderr).toMatch(/bad\.json: not a leaderboard: row 1 \("a"\) has no numeric "balanced_acc"/);
    writeFileSync(bad, '[{"model": ');
    expect(cli(['report', sim, '--leaderboard', bad]).stderr).toMatch(/bad\.json: not a leaderboard: not JSON/);
    expect(cli(['report', sim, '--leaderboard', join(tmp, 'none.json')]).stderr).toMatch(/none\.json: cannot read \(no such file\)/);

    r = cli(['report', sim, `${tmp}/./sim.jsonl`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/sim\.jsonl: given twice/);
    const sim2 = join(tmp, 'sim2.jsonl');
    writeRun(sim2, runs[1].records, { domain: 'simulation', model: 'egogeo_simulation' });
    r = cli(['report', sim, sim2]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/sim2\.jsonl: run 'egogeo_simulation' \(from its manifest\) is also the run of .*sim\.jsonl, and both have clip 'clip_1' of source 'nuscenes'; name the runs apart/);
  });

  it('files without manifest or run record: named by the file; one run keeps the plain sources', () => {
    ensureDist();
    const a = join(tmp, 'a.jsonl'), b = join(tmp, 'b.jsonl');
    writeFileSync(a, jsonl(runs[0].records));
    writeFileSync(b, jsonl(runs[1].records));
    const r = cli(['report', a, b, '--out', join(tmp, 'ab')]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(readFileSync(join(tmp, 'ab/report.json'), 'utf8'));
    expect(j.domains.rows.map((x: { domain: string }) => x.domain)).toEqual(['nuscenes', 'carla (a.jsonl)', 'carla (b.jsonl)']);
    expect(j.leaderboard).toBeNull();
    const one = cli(['report', a, '--out', join(tmp, 'a1')]);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(tmp, 'a1/report.json'), 'utf8')).domains.rows.map((x: { domain: string }) => x.domain)).toEqual(['nuscenes', 'carla']);
    // Without --out, several runs get a folder named for all of them (not the first's), and the
    // summary line says its figure pools every domain.
    const both = cli(['report', a, b]);
    expect(both.code, both.stderr).toBe(0);
    expect(existsSync(join(tmp, 'a+b.report', 'report.json'))).toBe(true);
    expect(both.stderr).toMatch(/clips \(a clip of several runs counted once per domain\), balanced accuracy [\d.]+ pooled over every domain \(per domain: the table below\)/);
  });
});

const PUBLISHED = sharedPath('data/published/egodyn-bench');
const LEADERBOARD = sharedPath('reference/leaderboard.json');
const HAS_PUBLISHED = needsShared('egogeo report against the published leaderboard', 'data/published/egodyn-bench/nuscenes_clips/qa.jsonl', 'data/published/egodyn-bench/carla_clips/qa.jsonl', 'reference/leaderboard.json');

describe.skipIf(!HAS_PUBLISHED)('egogeo report against the published leaderboard (../shared)', () => {
  type Qa = { clip_id: string; question_id: string; category: string; answer: string; choices: string[] };
  const qa = (part: string): Qa[] =>
    readFileSync(join(PUBLISHED, part, 'qa.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Qa);
  // The describe body runs even when skipped: ../shared is read in beforeAll, which a skip does not run.
  let items: (Qa & { source: string })[] = [];
  let published: LeaderboardRow[] = [];
  beforeAll(() => {
    items = [...qa('nuscenes_clips').map((x) => ({ ...x, source: 'nuscenes' })), ...qa('carla_clips').map((x) => ({ ...x, source: 'carla' }))];
    published = JSON.parse(readFileSync(LEADERBOARD, 'utf8')) as LeaderboardRow[];
  });
  const SUBSET = new Set(['yaw_rate_turn_direction', 'speed_trend', 'stop_and_go', 'brake_then_turn', 'significant_heading_change', 'high_lateral_accel']);
  /** Prediction records from the QA answers; `wrong(item)` answers another choice. */
  const preds = (subset: boolean, wrong: (x: (typeof items)[number]) => boolean) =>
    items
      .filter((x) => !subset || SUBSET.has(x.question_id))
      .map((x) => ({ clip_id: x.clip_id, question_id: x.question_id, category: x.category, source: x.source, oracle_label: x.answer, model_answer: wrong(x) ? x.choices.find((c) => c !== x.answer)! : x.answer }));

  it('the oracle answers everywhere: balanced accuracy 1.0 in both runs, rank 1', () => {
    ensureDist();
    const sim = join(tmp, 'pub-sim.jsonl'), tr = join(tmp, 'pub-tr.jsonl');
    writeRun(sim, preds(true, () => false), { domain: 'simulation', model: 'egogeo_simulation' });
    writeRun(tr, preds(true, () => false), { domain: 'transferred', model: 'egogeo_transferred' });
    const r = cli(['report', sim, tr, '--leaderboard', LEADERBOARD, '--out', join(tmp, 'pub')]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(readFileSync(join(tmp, 'pub/report.json'), 'utf8'));
    for (const p of j.leaderboard.placements) {
      expect(p).toMatchObject({ balanced_acc: 1, questions: 6, rank: { balanced_acc: { rank: 1, of: 51 } }, rank_same_questions: { rank: 1, of: 10 } });
      expect(p.rank.src_nuscenes_balanced_acc.rank).toBe(1);
      expect(p.rank.src_carla_balanced_acc.rank).toBe(1);
    }
    expect(j.leaderboard.n_published).toBe(49);
    expect(j.leaderboard.other_questions).toEqual({ 14: 41 });
    expect(j.domains.rows.map((x: { domain: string }) => x.domain)).toEqual(['nuscenes', 'carla simulation', 'carla transferred']);
    expect(r.stdout).toMatch(/egogeo_simulation: coverage 100\.0%; balanced_acc 1\.0000 rank 1\/51; nuScenes 1\.0000 rank 1\/51; CARLA 1\.0000 rank 1\/51; 1\/10 among rows answering the same 6 questions/);
  });

  it('a transferred run wrong on every other CARLA answer ranks where the published rows put it; its row is what egogeo grade gives', () => {
    ensureDist();
    const sim = join(tmp, 'pub2-sim.jsonl'), tr = join(tmp, 'pub2-tr.jsonl');
    let k = 0;
    writeRun(sim, preds(false, () => false), { domain: 'simulation', model: 'egogeo_simulation' });
    writeRun(tr, preds(false, (x) => x.source === 'carla' && k++ % 2 === 0), { domain: 'transferred', model: 'egogeo_transferred' });
    const r = cli(['report', sim, tr, '--leaderboard', LEADERBOARD, '--out', join(tmp, 'pub2')]);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(readFileSync(join(tmp, 'pub2/report.json'), 'utf8'));
    const row = j.leaderboard.rows[1] as LeaderboardRow;
    // The published grader's numbers: egogeo grade on the same answers without the source field.
    const bare = join(tmp, 'pub2-tr-bare.jsonl');
    writeFileSync(bare, jsonl(readFileSync(tr, 'utf8').split('\n').filter((l) => l).map((l) => { const { source: _, ...x } = JSON.parse(l); return x; })));
    expect(cli(['grade', bare, '--json', join(tmp, 'pub2-tr.metrics.json')]).code).toBe(0);
    const m = JSON.parse(readFileSync(join(tmp, 'pub2-tr.metrics.json'), 'utf8'));
    expect([row.balanced_acc, row.accuracy, row.macro_f1, row.n_total]).toEqual([m.global.balanced_acc, m.global.accuracy, m.global.macro_f1, m.n_total]);
    expect([row.src_nuscenes_balanced_acc, row.src_carla_balanced_acc, row.src_carla_emcr]).toEqual([m.per_source.nuscenes.balanced_acc, m.per_source.carla.balanced_acc, m.per_source.carla.consistency.rate]);
    expect(row.q_speed_trend_balanced_acc).toBe(m.per_question.speed_trend.balanced_acc);
    // Ranks by hand from the published file (+1 for the simulation run's 1.0 above it).
    const v = row.balanced_acc;
    expect(v).toBeLessThan(1);
    const above = (f: string, x: number) => published.filter((p) => typeof p[f] === 'number' && (p[f] as number) > x).length;
    const p = j.leaderboard.placements[1];
    expect(p.rank.balanced_acc).toEqual({ rank: 2 + above('balanced_acc', v), of: 51 });
    expect(p.rank.src_carla_balanced_acc.rank).toBe(2 + above('src_carla_balanced_acc', row.src_carla_balanced_acc as number));
    // nuScenes is the same in both runs: 1.0, tied with the simulation run.
    expect(p.rank.src_nuscenes_balanced_acc.rank).toBe(1);
    expect(p.questions).toBe(14);
    expect(p.rank_same_questions.of).toBe(43);
    expect(j.leaderboard.other_questions).toEqual({ 6: 8 });
    const sub = j.domains.rows.find((x: { domain: string }) => x.domain === 'carla transferred');
    expect(sub.subset.balanced_acc).toBeLessThan(1);
    expect(j.domains.rows[0]).toMatchObject({ domain: 'nuscenes', runs: ['egogeo_simulation', 'egogeo_transferred'] });
  });
});
