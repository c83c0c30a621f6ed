/** `egogeo sensitivity` in-process, with prediction files written here. */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { loadQuestions, runOracle } from '../../src/oracle/index.js';
import { cli } from '../helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-cli-sens-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));


const grid = Array.from({ length: 31 }, (_, i) => i / 10);
const recs = Array.from({ length: 12 }, (_, i) => {
  const v = 1.25 + 1.5 * i, w = i % 3 === 0 ? 0 : 0.1 * (i % 3);
  const x = w ? grid.map((t) => (v / w) * Math.sin(w * t)) : grid.map((t) => v * t);
  const y = w ? grid.map((t) => (v / w) * (1 - Math.cos(w * t))) : grid.map(() => 0);
  return { id: `clip_${i}`, timestamps: grid, x, y, yaw: grid.map((t) => w * t) };
});
const input = join(tmp, 'trajs.jsonl');
writeFileSync(input, recs.map((r) => JSON.stringify(r)).join('\n'));
const Q = loadQuestions();
const labels = recs.map((r) => runOracle(makeTrajectory(r.id, { t: r.timestamps, x: r.x, y: r.y, yaw: r.yaw }), Q).labels);

/** A prediction file answering every question: free text for the grader's parser. */
function predictions(name: string, answer: (i: number, q: string, label: string) => string | null): string {
  const p = join(tmp, name);
  const lines: string[] = [];
  labels.forEach((l, i) => {
    for (const [q, lab] of Object.entries(l)) lines.push(JSON.stringify({ clip_id: `clip_${i}`, question_id: q, model_answer: answer(i, q, lab) }));
  });
  lines.push(JSON.stringify({ clip_id: 'not_a_clip', question_id: 'speed_trend', model_answer: 'steady' }));
  writeFileSync(p, `${lines.join('\n')}\n`);
  return p;
}
const oracleFile = predictions('oracle_answers.jsonl', (_i, _q, lab) => `The answer is: ${lab.replace('_', ' ')}.`);
const noisyFile = predictions('noisy.jsonl', (i, q, lab) => (i % 2 ? lab : q === 'speed_regime' ? 'stopped' : 'I cannot tell'));

describe('egogeo sensitivity', () => {
  it('flip-rate table; 0 at α = 1', async () => {
    const json = join(tmp, 'flip.json');
    const { code, out, err } = await cli('sensitivity', input, '--from', '0.8', '--to', '1.2', '--step', '0.1', '--json', json);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('Label flip rate (%) vs alpha = 1 over 12 trajectories');
    expect(out).toMatch(/^\s*1\.00\s+0\.0(\s+0\.0){14}$/m);
    const r = JSON.parse(readFileSync(json, 'utf8'));
    expect(r.alphas).toEqual([0.8, 0.9, 1, 1.1, 1.2]);
    expect(r.rows[2].overallFlipRate).toBe(0);
    expect(r.predictions).toBeUndefined();
  });

  it('with predictions: graded by the grader’s parser, BAcc 1 for the oracle’s own answers at α = 1, τ = 1 there', async () => {
    const json = join(tmp, 'pred.json');
    const { code, out } = await cli('sensitivity', input, '--from', '0.9', '--to', '1.1', '--step', '0.1', '--predictions', `${noisyFile},${oracleFile}`, '--json', json);
    expect(code).toBe(0);
    const r = JSON.parse(readFileSync(json, 'utf8'));
    const one = r.rows.find((x: { alpha: number }) => x.alpha === 1);
    expect(one.scores.oracle).toBe(1); // name without "_answers", as the reference
    expect(one.scores.noisy).toBeLessThan(1);
    expect(one.tau).toBe(1);
    expect(r.nominalRanking).toEqual(['oracle', 'noisy']);
    const byName = Object.fromEntries(r.predictions.map((p: { name: string }) => [p.name, p]));
    expect(byName.oracle).toEqual({ name: 'oracle', used: 12 * 14, skipped: { unknown_clip: 1, unknown_question: 0, unparsed: 0 } });
    // "I cannot tell" parses to nothing for most questions
    expect(byName.noisy.skipped.unparsed).toBeGreaterThan(0);
    expect(out).toContain('ranking at alpha = 1: oracle > noisy');
  });

  it('one prediction file: τ = 1', async () => {
    const json = join(tmp, 'one.json');
    expect((await cli('sensitivity', input, '--predictions', oracleFile, '--json', json)).code).toBe(0);
    const r = JSON.parse(readFileSync(json, 'utf8'));
    expect(r.alphas).toHaveLength(21);
    expect(r.rows.every((x: { tau: number }) => x.tau === 1)).toBe(true);
  });

  it('bad options and inputs: exit 1, one stderr line, no JSON file', async () => {
    const bad = join(tmp, 'bad_pred.jsonl');
    writeFileSync(bad, '{"clip_id": "clip_0", "question_id": "speed_trend", "model_answer": "steady"}\n{"clip_id": "clip_0", "model_answer": "x"}\n');
    const cases: [string[], RegExp][] = [
      [['--from', 'abc'], /--from must be a positive number, got 'abc'/],
      [['--step', '0'], /--step must be a positive number/],
      [['--from', '1.5', '--to', '0.5'], /--to \(0\.5\) must not be below --from \(1\.5\)/],
      [['--questions', 'speed_trend,nope'], /--questions: unknown question 'nope'/],
      [['--predictions', bad], /bad_pred\.jsonl:2: missing field 'question_id'$/],
      [['--predictions', join(tmp, 'missing.jsonl')], /missing\.jsonl: cannot read \(no such file\)$/],
      [['--predictions', `${oracleFile},${join(tmp, 'x', 'oracle.jsonl')}`], /have the same name 'oracle'/],
      [['--scale', '2'], /unknown option '--scale'/],
    ];
    for (const [args, re] of cases) {
      const json = join(tmp, 'never.json');
      const { code, out, err } = await cli('sensitivity', input, ...args, '--json', json);
      expect(code, args.join(' ')).toBe(1);
      expect(out).toBe('');
      const lines = err.split('\n').filter(Boolean);
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(lines[0]).toMatch(re);
      expect(existsSync(json)).toBe(false);
    }
  });

  it('--per-question: the summary table, per-question metrics in the JSON, heatmaps in --plots', async () => {
    const json = join(tmp, 'pq.json'), plots = join(tmp, 'pq-plots');
    const { code, out, err } = await cli('sensitivity', input, '--per-question', '--from', '0.5', '--to', '1.5', '--step', '0.25', '--predictions', `${noisyFile},${oracleFile}`, '--json', json, '--plots', plots);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain("Per question: only its thresholds x alpha, the others as published");
    expect(out).toMatch(/^\s*mean_speed_low\s+\d+\.\d\s+-?\d\.\d{3}\s+\d+\.\d\d$/m);
    expect(out).toContain('Mean balanced accuracy over the 2 prediction files on each question, per alpha');
    expect(out).toContain("The oracle's own consistency");
    expect(out).toMatch(/^\s*alpha\s+EMCR\s+WPCR\s+rule coverage/m);
    expect(out).not.toContain('WEMCR');
    const r = JSON.parse(readFileSync(json, 'utf8'));
    expect(r.perQuestion).toHaveLength(14);
    const one = r.alphas.indexOf(1);
    for (const q of r.perQuestion) expect(q.metrics[one].oracle.balanced_acc).toBe(1);
    expect(r.rows[one].metrics.oracle).toEqual({ accuracy: 1, balanced_acc: 1, macro_f1: 1, n: 12 * 14 });
    const svg = readFileSync(join(plots, 'per_threshold_heatmap.svg'), 'utf8');
    expect(svg).toContain('Mean |ΔBAcc| per question over 2 prediction files');
    expect((svg.match(/<rect [^>]*><title>/g) ?? []).length).toBe(14 * 5);
    expect(existsSync(join(plots, 'per_threshold_flip_rate.svg'))).toBe(true);
  });

  it('--plots without --per-question: one line, nothing written', async () => {
    const plots = join(tmp, 'lonely-plots');
    const { code, err } = await cli('sensitivity', input, '--plots', plots);
    expect(code).not.toBe(0);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toMatch(/--plots needs --per-question/);
    expect(existsSync(plots)).toBe(false);
  });
});
