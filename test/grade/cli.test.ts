/**
 * `egogeo grade` in-process, and the predictions reader: the table, the metrics JSON written
 * atomically, the unknown-question warning, and one-line errors (file:line) that leave no file.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.js';
import { evaluate, metricsToJson } from '../../src/grade/index.js';
import { parsePredictionsJsonl } from '../../src/io/predictions.js';
import { loadQuestions } from '../../src/oracle/questions.js';
import { needsShared, sharedPath } from '../helpers/shared.js';
import { cli } from '../helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-cli-grade-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));


const write = (name: string, lines: string[]): string => {
  const p = join(tmp, name);
  writeFileSync(p, `${lines.join('\n')}\n`);
  return p;
};
const line = (o: Record<string, unknown>): string => JSON.stringify(o);
const base = { qa_id: 'qa_1', clip_id: 'clip_00001', question_id: 'speed_trend', category: 'direct_dynamics', oracle_label: 'steady', model_answer: 'Steady.' };
const good = [
  line(base),
  '',
  line({ ...base, qa_id: 'qa_2', question_id: 'mean_speed_low', oracle_label: 'yes', model_answer: 'The mean speed is low: yes' }),
  line({ ...base, qa_id: 'qa_3', clip_id: 'town01_0003', question_id: 'speed_peak_half', category: 'comparative', oracle_label: 'first_half', model_answer: 'second half' }),
  line({ ...base, qa_id: 'qa_4', clip_id: 'town01_0003', question_id: 'stop_and_go', oracle_label: 'no', model_answer: 'I cannot tell.' }),
];

describe('egogeo grade', () => {
  it('prints the table and writes the metrics JSON (reference format) atomically', async () => {
    const file = write('good.jsonl', good);
    const out = join(tmp, 'metrics.json');
    const r = await cli('grade', file, '--json', out);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const expected = evaluate(parsePredictionsJsonl(good.join('\n')).records, loadQuestions());
    expect(readFileSync(out, 'utf8')).toBe(`${metricsToJson(expected)}\n`);
    expect(expected.n_parsed).toBe(3);
    expect(r.out).toContain('4 predictions, 3 parsed (parsable coverage 0.7500)');
    expect(r.out).toMatch(/^global\s+0\.6667\s+/m);
    expect(r.out).toMatch(/^temporal\s+0\.5000\s+/m);
    expect(r.out).toMatch(/^question speed_peak_half\s+/m);
    expect(r.out).toMatch(/^source carla\s+/m);
    expect(r.out).toMatch(/^source nuscenes\s+/m);
    expect(r.out).toContain('EMCR');
    // The reference's published name (README: Weighted Physics Consistency Rate); its JSON key stays `wemcr` (issue 53).
    expect(r.out).toMatch(/^consistency\s+EMCR\s+WPCR\s/m);
    expect(r.out).not.toContain('WEMCR');
    expect(readdirSync(tmp).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('shows coverage and balanced accuracy with the unanswered counted as wrong beside the grader\'s own', async () => {
    const r = await cli('grade', write('cover.jsonl', good));
    expect(r.code).toBe(0);
    // 'I cannot tell.' (stop_and_go, carla) is unanswered: the grader leaves it out; bal.acc(all) counts it wrong.
    expect(r.out).toMatch(/^global\s+0\.6667\s+\S+\s+\S+\s+3\s+3\/4\s+\d\.\d{4}$/m);
    expect(r.out).toMatch(/^question stop_and_go\s+0\.0000\s+0\.0000\s+0\.0000\s+0\s+0\/1\s+0\.0000$/m);
    expect(r.out).toMatch(/^source carla\s+0\.0000\s+0\.0000\s+0\.0000\s+1\s+1\/2\s+0\.0000$/m);
    expect(r.out).toMatch(/^source nuscenes\s+1\.0000\s+1\.0000\s+1\.0000\s+2\s+2\/2\s+1\.0000$/m);
  });

  it('warns once about unknown question ids, naming the first line, and counts them unparsed', async () => {
    const file = write('unknown.jsonl', [
      line(base),
      line({ ...base, question_id: 'lane_change' }),
      line({ ...base, question_id: 'weather' }),
    ]);
    const out = join(tmp, 'unknown.json');
    const r = await cli('grade', file, '--json', out);
    expect(r.code).toBe(0);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain(`${file}:2: unknown question_id 'lane_change'`);
    expect(r.err).toContain('2 records');
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ n_total: 3, n_parsed: 1, parsable_coverage: 0.3333 });
  });

  // What the reference's evaluate.py grades (a malformed line, a missing field, no oracle label) is
  // graded with a warning (test/hostile/round3b.test.ts); what it stops on is refused.
  const bad: [string, string[], RegExp][] = [
    ['a model_answer the reference cannot read', [line(base), line(base), line({ ...base, model_answer: 5 })], /:3: field 'model_answer' must be a string or null, got 5/],
    ['a wrong type', [line({ ...base, clip_id: 7 })], /:1: field 'clip_id' must be a string, got 7/],
    ['an oracle label that is an object', [line({ ...base, oracle_label: { a: 1 } })], /:1: field 'oracle_label' must be a string, number or boolean, got an object/],
    ['a non-object line', [line(base), '', '[1, 2]'], /:3: expected a JSON object/],
  ];
  for (const [what, lines, msg] of bad) {
    it(`fails with one line naming file:line on ${what}, leaving no output file`, async () => {
      const file = write(`bad-${what.replace(/\W+/g, '_')}.jsonl`, lines);
      const out = join(tmp, `bad-${what.replace(/\W+/g, '_')}.json`);
      const r = await cli('grade', file, '--json', out);
      expect(r.code).toBe(1);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toContain(file);
      expect(r.err).toMatch(msg);
      expect(r.out).toBe('');
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(tmp).filter((f) => f.includes('.tmp'))).toEqual([]);
    });
  }

  it('prints the 6-question pool beside the global one when a file answers more than the 6 (the figure the geometric rows report)', async () => {
    const p = write('mixed.jsonl', [
      line({ ...base, question_id: 'speed_trend', oracle_label: 'steady', model_answer: 'steady' }),
      line({ ...base, question_id: 'yaw_rate_turn_direction', oracle_label: 'left', model_answer: 'right' }),
      line({ ...base, question_id: 'driving_smoothness', category: 'x', oracle_label: 'smooth', model_answer: 'smooth' }),
    ]);
    const r = await cli('grade', p);
    expect(r.code).toBe(0);
    const six = evaluate(parsePredictionsJsonl(readFileSync(p, 'utf8')).records.filter((x) => x.question_id !== 'driving_smoothness'), loadQuestions()).global;
    expect(r.out).toMatch(new RegExp(`\\n6-question subset\\s+${six.accuracy.toFixed(4)}\\s+${six.balanced_acc.toFixed(4)}\\s+${six.macro_f1.toFixed(4)}\\s+2\\s+2/2\\s+${six.balanced_acc.toFixed(4)}\\n`));
    const only6 = await cli('grade', write('six.jsonl', [line(base)]));
    expect(only6.out).not.toMatch(/6-question subset/);
  });

  it('--version prints the package version', async () => {
    const r = await cli('--version');
    expect(r.code).toBe(0);
    expect(r.out.trim()).toBe(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
  });

  it('fails on a missing file and on an empty file', async () => {
    const r1 = await cli('grade', join(tmp, 'nope.jsonl'));
    expect(r1.code).toBe(1);
    expect(r1.err).toMatch(/nope\.jsonl: cannot read \(no such file\)/);
    const r2 = await cli('grade', write('empty.jsonl', ['', '  ']));
    expect(r2.code).toBe(1);
    expect(r2.err).toMatch(/empty\.jsonl: no prediction records/);
  });

  it.skipIf(!needsShared('egogeo grade on the golden free-text predictions', 'golden/grader_cases/freetext_predictions.jsonl', 'golden/grader_cases/freetext_predictions.metrics.json', 'reference/questions_template.yaml'))('writes byte-for-byte the reference output for the golden free-text predictions', async () => {
    const out = join(tmp, 'freetext.json');
    const r = await cli('grade', sharedPath('golden/grader_cases/freetext_predictions.jsonl'), '--json', out,
      '--config', sharedPath('reference/questions_template.yaml'));
    expect(r.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(`${readFileSync(sharedPath('golden/grader_cases/freetext_predictions.metrics.json'), 'utf8')}\n`);
  });
});

describe('predictions reader', () => {
  it('skips blank lines, splits \\r\\n and \\r, strips a BOM, keeps line numbers', () => {
    const text = `\ufeff${line(base)}\r\n\r\n   \r${line({ ...base, qa_id: 'x' })}\n\x1c\n`;
    const f = parsePredictionsJsonl(text, 'p.jsonl');
    expect(f.records).toHaveLength(2);
    expect(f.lines).toEqual([1, 4]);
    expect(f.records[0]).toEqual({ qa_id: 'qa_1', clip_id: 'clip_00001', question_id: 'speed_trend', category: 'direct_dynamics', oracle_label: 'steady', model_answer: 'Steady.' });
  });

  it('takes the oracle from "answer" when "oracle_label" is absent; null model answers are allowed', () => {
    const f = parsePredictionsJsonl(line({ clip_id: 'c', question_id: 'q', answer: 'Yes', model_answer: null }));
    expect(f.records[0]).toEqual({ clip_id: 'c', question_id: 'q', oracle_label: 'Yes', model_answer: null });
  });

  it("turns numeric and boolean oracle labels into Python's str()", () => {
    const rows = ['1', '1.0', '2.50', '1e2', '-0', '12345678901234567890', 'true'].map((tok) =>
      parsePredictionsJsonl(`{"clip_id": "c", "question_id": "q", "model_answer": "1", "oracle_label": ${tok}}`).records[0].oracle_label);
    expect(rows).toEqual(['1', '1.0', '2.5', '100.0', '0', '12345678901234567890', 'True']);
    // the last of duplicate keys wins, nested keys are not confused with top-level ones
    const dup = parsePredictionsJsonl('{"x": {"oracle_label": 3}, "oracle_label": 1, "clip_id": "c", "question_id": "q", "model_answer": "", "oracle_label": 2.0}');
    expect(dup.records[0].oracle_label).toBe('2.0');
  });

  it('names the file, line and field in every error', () => {
    const err = (text: string): string => {
      try {
        parsePredictionsJsonl(text, 'preds.jsonl');
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
        return (e as Error).message;
      }
      return '';
    };
    expect(err(`${line(base)}\n\n{oops`)).toMatch(/^preds\.jsonl:3: invalid JSON/);
    expect(err(line({ ...base, clip_id: undefined }))).toBe("preds.jsonl:1: missing field 'clip_id'");
    expect(err(line({ ...base, model_answer: 3 }))).toBe("preds.jsonl:1: field 'model_answer' must be a string or null, got 3");
    expect(err(line({ ...base, oracle_label: ['a'] }))).toBe("preds.jsonl:1: field 'oracle_label' must be a string, number or boolean, got an array");
    expect(err(line({ ...base, category: null }))).toBe("preds.jsonl:1: field 'category' must be a string, got null");
    expect(err(line({ ...base, source: '' }))).toBe(`preds.jsonl:1: field 'source' must be a non-empty string, got ""`);
  });
});
