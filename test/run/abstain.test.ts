/**
 * Every question answered by default (issue 53): a run at the published protocol over the published
 * layout writes no null answer, even for a clip whose scale failed (its verdict beside it in the run
 * record); `--abstain` leaves that clip's scale-dependent answers null and says so in the run record
 * and manifest; `grade` and `report` then show the coverage, and the report ranks the abstaining run
 * below the answering one (the unanswered counted as wrong), though the grader's own figure over its
 * answers is at least as high.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { publishedDataset } from '../helpers/published.js';
import { NATIVE_BUILT, readJsonl } from './fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-abstain-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(!NATIVE_BUILT)('answering by default, abstaining on request', () => {
  // Two nuScenes clips; the second's road is one flat grey: no metric scale (verdict 'failed').
  const pub = publishedDataset(tmp, [
    { id: 'clip_00001', source: 'nuscenes', speed: 8, yawRate: 0.1, seed: 3 },
    { id: 'clip_00002', source: 'nuscenes', speed: 8, yawRate: 0.1, seed: 3, flatRoad: true },
  ], { qa: 'subset' });
  const run = (out: string, ...extra: string[]) => cli('run', '--dataset', pub.root, '--nuscenes-root', pub.nuscenes, '--no-cache', '--protocol', 'published', '-o', out, '--workers', '1', '--no-progress', ...extra);
  const answering = join(tmp, 'answering.jsonl'), abstaining = join(tmp, 'abstaining.jsonl');

  it('--protocol published writes no null answer by default; the failed clip is flagged beside its answers', async () => {
    const r = await run(answering, '--model', 'answering');
    expect(r.code, r.err).toBe(0);
    const recs = readJsonl(answering) as { clip_id: string; model_answer: string | null }[];
    expect(recs).toHaveLength(12);
    expect(recs.filter((x) => x.model_answer === null)).toEqual([]);
    const rec = JSON.parse(readFileSync(`${answering}.run.json`, 'utf8'));
    expect(rec.quality.flagged.clip_00002.verdict).toBe('failed');
    expect(rec.key.abstain).toBeUndefined();
    expect(JSON.parse(readFileSync(`${answering}.manifest.json`, 'utf8')).settings).toMatchObject({ protocol: 'published', abstain: false });
    expect(r.err).toMatch(/1 failed: scale-dependent answers answered from the estimate/);
  });

  it('--abstain leaves the failed clip\'s scale-dependent answers null, recorded in the run record and manifest', async () => {
    const r = await run(abstaining, '--model', 'abstaining', '--abstain');
    expect(r.code, r.err).toBe(0);
    const recs = readJsonl(abstaining) as { clip_id: string; question_id: string; model_answer: string | null }[];
    const nulls = recs.filter((x) => x.model_answer === null);
    // The 4 scale-dependent questions of the subset; the turn and heading questions keep their answers.
    expect(nulls.map((x) => [x.clip_id, x.question_id]).sort()).toEqual([
      ['clip_00002', 'brake_then_turn'], ['clip_00002', 'high_lateral_accel'], ['clip_00002', 'speed_trend'], ['clip_00002', 'stop_and_go'],
    ]);
    // Everything else is the answering run's, byte for byte.
    const other = (readJsonl(answering) as typeof recs).filter((x) => !nulls.some((n) => n.clip_id === x.clip_id && n.question_id === x.question_id));
    expect(recs.filter((x) => x.model_answer !== null)).toEqual(other);
    expect(JSON.parse(readFileSync(`${abstaining}.run.json`, 'utf8')).key.abstain).toBe(true);
    expect(JSON.parse(readFileSync(`${abstaining}.manifest.json`, 'utf8')).settings.abstain).toBe(true);
    // Resuming the answering output with --abstain is another run: refused.
    expect((await run(answering, '--model', 'answering', '--abstain')).err).toMatch(/other options \(abstain: the default then, true now\)/);
  });

  it('grade shows the coverage; report ranks the abstaining run below the answering one', async () => {
    const g = await cli('grade', abstaining);
    expect(g.out).toMatch(/^global\s+(\S+\s+){4}8\/12\s/m);
    const lb = join(tmp, 'lb.json');
    writeFileSync(lb, JSON.stringify([{ model: 'other', n_total: 12, balanced_acc: 0.01 }]));
    const out = join(tmp, 'report');
    const r = await cli('report', answering, abstaining, '--leaderboard', lb, '--leaderboard-rows', 'all', '--out', out);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    const place = Object.fromEntries(j.leaderboard.placements.map((p: { model: string }) => [p.model, p]));
    expect(place.answering.coverage).toBe(1);
    expect(place.abstaining.coverage).toBeCloseTo(8 / 12, 12);
    expect(place.abstaining.balanced_acc_all).toBeLessThan(place.answering.balanced_acc_all);
    const order = j.leaderboard.ranking.map((x: { model: string }) => x.model);
    expect(order.indexOf('abstaining')).toBeGreaterThan(order.indexOf('answering'));
    expect(r.out).toMatch(/abstaining: coverage 66\.7%/);
  });
});
