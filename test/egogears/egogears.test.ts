/**
 * EgoGears: the option shuffle against CPython's (golden orders from Python 3 in
 * test/fixtures/egogears/options_golden.json: every question id of the two excerpts and the
 * synthetic set, and arbitrary ids × option counts), the scoring against the published
 * `summarize` / `question_groups` (score_golden.json, made by make_golden.py from the published
 * code) on fixtures that reach every branch, the parser, Jaccard by hand, Python's `.2f`, and
 * one-line errors.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPredictions, loadQuestionFile } from '../../src/egogears/load.js';
import { PyRandom } from '../../src/core/pyrandom.js';
import { f2, parseAnswer, questionId, resultRow, type ResultRow, scoreGears, shuffledView, splitReasoning, summarize } from '../../src/egogears/score.js';
import { cli } from '../helpers/cli.js';

const FIX = fileURLToPath(new URL('../fixtures/egogears/', import.meta.url));
const fx = (n: string): string => join(FIX, n);
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-egogears-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface OptGolden {
  file: string | null;
  id: string;
  n: number;
  shown: Record<string, string>;
}
const golden: OptGolden[] = JSON.parse(readFileSync(fx('options_golden.json'), 'utf8'));

describe('egogears options: random.Random(question_id).shuffle, exactly', () => {
  it('matches CPython for every id × option count in the golden file', () => {
    expect(golden.length).toBeGreaterThan(700);
    for (const g of golden) {
      const opts = Object.fromEntries(Object.keys(g.shown).map((l) => [l, `text ${l}`]));
      expect(shuffledView(opts, g.id).back, `${g.id} (${g.n} options)`).toEqual(g.shown);
    }
  });

  it('prints one JSON line per question of both excerpts, id or review_id as the published code takes it', async () => {
    for (const [file, key] of [['single_567_excerpt.jsonl', 'id'], ['mixed_1487_excerpt.jsonl', 'review_id'], ['branches_questions.jsonl', 'review_id']] as const) {
      const r = await cli('egogears', 'options', '--questions', fx(file));
      expect(r.code, r.err).toBe(0);
      const lines = r.out.trim().split('\n').map((l) => JSON.parse(l) as { id: string; shown: Record<string, string> });
      const want = golden.filter((g) => g.file === file);
      expect(lines.length).toBe(want.length);
      lines.forEach((l, i) => expect(l).toEqual({ id: want[i].id, shown: want[i].shown }));
      const qs = readFileSync(fx(file), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
      expect(lines.map((l) => l.id)).toEqual(qs.map((q) => q[key]));
    }
    const one = await cli('egogears', 'options', '--questions', fx('mixed_1487_excerpt.jsonl'), '--id', 'bc8f6fdcd0b8f5ab');
    expect(one.out.trim().split('\n')).toHaveLength(1);
    const arb = await cli('egogears', 'options', '--id', 'two words', '--n-options', '7');
    expect(JSON.parse(arb.out).shown).toEqual(golden.find((g) => g.file === null && g.id === 'two words' && g.n === 7)!.shown);
  });

  it('seeds like CPython from ints too (init_by_array over 32-bit words)', () => {
    // python3 -c "import random; print(random.Random(12345).getrandbits(32), random.Random(2**70).getrandbits(32), random.Random(0).getrandbits(32))"
    expect(new PyRandom(12345).genrandUint32()).toBe(1789368711);
    expect(new PyRandom(2n ** 70n).genrandUint32()).toBe(999817988);
    expect(new PyRandom(0).genrandUint32()).toBe(3626764237);
    expect(new PyRandom('ec9933176eaa2e28').genrandUint32()).toBe(2396262247);
  });
});

interface GoldenGroups {
  [name: string]: { dataset: string; groups: Record<string, Record<string, number>> };
}
const scoreGolden: GoldenGroups = JSON.parse(readFileSync(fx('score_golden.json'), 'utf8'));

function scoreFiles(q: string, p: string) {
  const qf = loadQuestionFile(fx(q));
  const preds = loadPredictions(fx(p));
  const results = new Map<string, ResultRow>();
  for (const qq of qf.questions) {
    const id = questionId(qq, qf.dataset);
    const rec = preds.get(id);
    if (rec) results.set(id, resultRow(qq, id, rec));
  }
  return { qf, results, s: scoreGears(qf.questions, results, qf.dataset) };
}

describe('egogears score: the published summarize over every branch', () => {
  for (const [name, q, p] of [
    ['branches', 'branches_questions.jsonl', 'branches_predictions.jsonl'],
    ['single_excerpt', 'single_567_excerpt.jsonl', 'single_567_predictions.jsonl'],
  ] as const) {
    it(`${name}: every group and field equals the published code's (score_golden.json)`, () => {
      const { s } = scoreFiles(q, p);
      const g = scoreGolden[name];
      expect(s.dataset).toBe(g.dataset);
      expect(Object.keys(s.groups)).toEqual(Object.keys(g.groups));
      for (const [grp, want] of Object.entries(g.groups)) {
        for (const [k, v] of Object.entries(want)) expect((s.groups[grp] as unknown as Record<string, number>)[k], `${grp}.${k}`).toBe(v);
      }
    });
  }

  it('the branch fixture reaches exact, partial, over-selection, failed, missing and every unit', () => {
    const { results, s } = scoreFiles('branches_questions.jsonl', 'branches_predictions.jsonl');
    const rows = [...results.values()];
    expect(rows.some((r) => r.exact === true)).toBe(true);
    expect(rows.some((r) => r.exact === false && (r.overlap as number) > 0 && (r.overlap as number) < 1)).toBe(true);
    expect(rows.some((r) => typeof r.n_pred === 'number' && (r.n_pred as number) > (r.n_select as number))).toBe(true);
    expect(rows.some((r) => typeof r.n_pred === 'number' && (r.n_pred as number) < (r.n_select as number))).toBe(true);
    expect(s.overall.failed).toBe(3 + 0); // published error row, unclosed trace, letter not shown (the no-JSON row is replaced by a later one)
    expect(s.overall.missing).toBe(1);
    expect(Object.keys(s.groups)).toEqual(['overall', 'multi_video_531', 'anonymous_multi_clip', 'cross_recording', 'cross_video', 'multi_caption_multi_clip', 'whole_video']);
  });

  it('prints the published lines with Python formatting and the labelled extras', async () => {
    const r = await cli('egogears', 'score', '--questions', fx('branches_questions.jsonl'), '--predictions', fx('branches_predictions.jsonl'), '--json', join(tmp, 's.json'));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('SCORE mixed_1487 completed=7/11 failed=3 missing=1');
    expect(r.out).toContain('  overall: exact=3/11 (27.27%) [completed-only 3/7 (42.86%)] overlap=44.55% wellformed=27.27% failed=3 missing=1');
    expect(r.out).toContain('chance exact=');
    expect(r.err).toContain('1 prediction(s)');
    const j = JSON.parse(readFileSync(join(tmp, 's.json'), 'utf8'));
    expect(j.groups.overall.exact).toBe(3);
    const byType = await cli('egogears', 'score', '--questions', fx('branches_questions.jsonl'), '--predictions', fx('branches_predictions.jsonl'), '--by', 'question_type');
    expect(byType.out).toContain('question_type=landmark-order:');
  });

  it('Jaccard |P∩G|/|P∪G| beside overlap |P∩G|/|G|, by hand', () => {
    const q = { id: 'q', options: { A: '', B: '', C: '', D: '' }, answer: ['A', 'B'] };
    const r1 = resultRow(q, 'q', { pred: ['A', 'C', 'D'] }); // overlap 1/2, Jaccard 1/4
    const r2 = resultRow(q, 'q2', { pred: ['B', 'A'] }); // exact
    expect(r1.overlap).toBe(0.5);
    expect(r1.exact).toBe(false);
    expect(r2.exact).toBe(true);
    const qs = [q, { ...q, id: 'q2' }, { ...q, id: 'q3' }];
    const s = summarize(qs, new Map([['q', r1], ['q2', r2]]), 'single_567_human');
    expect(s.jaccard_pct).toBeCloseTo((100 * (0.25 + 1)) / 3, 12);
    expect(s.overlap_pct).toBeCloseTo((100 * 1.5) / 3, 12);
    expect(s.missing).toBe(1);
    // chance: C(4,2) = 6 → 1/6; overlap 2²/4 / 2 = 0.5
    expect(s.chance_exact_pct).toBeCloseTo(100 / 6, 12);
    expect(s.chance_overlap_pct).toBeCloseTo(50, 12);
  });
});

describe('the published parser', () => {
  it('takes the last JSON object with an answer key, strictly', () => {
    expect(parseAnswer('x {"answer": ["b", "Option C"]} y', ['A', 'B', 'C'])).toEqual({ letters: ['B', 'C'], error: null });
    expect(parseAnswer('{"answer": "A; (B)"} {"answer": ["C."]}', ['A', 'B', 'C']).letters).toEqual(['C']);
    expect(parseAnswer('{"answer": []}', ['A']).error).toBe('Empty answer');
    expect(parseAnswer('{"answer": 3}', ['A']).error).toBe('Answer is not a list: 3');
    expect(parseAnswer('{"answer": ["D"]}', ['A']).error).toBe('Answer letter D is not among the shown options');
    expect(parseAnswer('{"answer": ["AB"]}', ['A']).error).toMatch(/^Unrecognized answer item/);
    expect(parseAnswer(null, ['A']).error).toBe('No JSON object with an "answer" key');
    expect(splitReasoning('<think> r </think>{"answer":["A"]}')).toEqual(['r', '{"answer":["A"]}']);
    expect(splitReasoning('plain')).toEqual([null, 'plain']);
  });

  it("formats like Python's .2f (exact ties to even)", () => {
    expect([0.125, 0.375, 12.5, 0.0, 27.272727272727273, 1.005].map(f2)).toEqual(['0.12', '0.38', '12.50', '0.00', '27.27', '1.00']);
  });
});

describe('bad input: one line naming the file or field, exit 1', () => {
  const w = (n: string, s: string): string => {
    const p = join(tmp, n);
    writeFileSync(p, s);
    return p;
  };
  it.each([
    ['not JSON', 'bad1.jsonl', '{"id": "a", "options": {"A": "x"}, "answer": ["A"]}\n{oops\n', /bad1\.jsonl:2: invalid JSON/],
    ['answer outside options', 'bad2.jsonl', '{"id": "a", "options": {"A": "x"}, "answer": ["B"]}\n', /bad2\.jsonl:1: "answer"/],
    ['no id', 'bad3.jsonl', '{"options": {"A": "x"}, "answer": ["A"]}\n', /bad3\.jsonl:1: no string "id"/],
  ])('%s', async (_n, name, text, re) => {
    const r = await cli('egogears', 'score', '--questions', w(name, text), '--predictions', fx('single_567_predictions.jsonl'));
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(re);
  });
  it('a missing predictions file', async () => {
    const r = await cli('egogears', 'score', '--questions', fx('single_567_excerpt.jsonl'), '--predictions', join(tmp, 'nope.jsonl'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/nope\.jsonl: cannot read/);
  });
});
