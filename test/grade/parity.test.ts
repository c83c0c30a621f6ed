/**
 * Parity with the published reference grader: every golden parse case (shipped in
 * test/fixtures/reference), and, with ../shared, the full metrics (values, key order, and the exact
 * JSON text) of three golden prediction sets.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Prediction } from '../../src/core/prediction.js';
import { evaluate, metricsToJson, parseAnswerFor } from '../../src/grade/index.js';
import { readPredictions } from '../../src/io/predictions.js';
import { loadQuestions } from '../../src/oracle/questions.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

const readJsonl = (p: string): Record<string, unknown>[] =>
  readFileSync(p, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

/** Values equal (numbers by value: Python's 1.0 is JS 1) and keys in the same order, recursively. */
function sameShape(got: unknown, want: unknown, path: string, out: string[]): void {
  if (out.length > 10) return;
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) {
      out.push(`${path}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
      return;
    }
    want.forEach((w, i) => sameShape(got[i], w, `${path}[${i}]`, out));
  } else if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object') {
      out.push(`${path}: not an object`);
      return;
    }
    const gk = Object.keys(got);
    const wk = Object.keys(want);
    if (gk.join('\u0000') !== wk.join('\u0000')) out.push(`${path}: keys ${gk.join(',')} != ${wk.join(',')}`);
    for (const k of wk) sameShape((got as Record<string, unknown>)[k], (want as Record<string, unknown>)[k], `${path}.${k}`, out);
  } else if (got !== want) {
    out.push(`${path}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
  }
}

describe('grader parity with the published reference: parse cases (test/fixtures/reference)', () => {
  const questions = loadQuestions();

  it('parses all 2000 golden parse cases exactly (null where the reference finds none)', () => {
    const cases = readJsonl(fileURLToPath(new URL('../fixtures/reference/parse_cases.jsonl', import.meta.url))) as {
      question_id: string;
      model_answer: string;
      parsed: string | null;
    }[];
    expect(cases.length).toBe(2000);
    const wrong: string[] = [];
    for (const c of cases) {
      const q = questions.byId.get(c.question_id);
      expect(q, c.question_id).toBeDefined();
      const got = parseAnswerFor(q!, c.model_answer);
      if (got !== c.parsed) wrong.push(`${JSON.stringify(c.model_answer)} (${c.question_id}): ${got} != ${c.parsed}`);
    }
    expect(wrong).toEqual([]);
    expect(cases.filter((c) => c.parsed === null).length).toBeGreaterThan(0);
  });
});

const METRICS = ['grader_cases/freetext_predictions', 'reference_results/vod', 'reference_results/flow_heuristic'];
describe.skipIf(!needsShared('grader metrics parity', 'reference/questions_template.yaml', ...METRICS.flatMap((n) => [`golden/${n}.jsonl`, `golden/${n}.metrics.json`])))(
  'grader parity with the published reference: metrics (../shared/golden)',
  () => {
    for (const name of METRICS) {
      it(`${name}.jsonl → ${name}.metrics.json (values, key order, exact JSON text)`, () => {
        const goldenText = readFileSync(sharedPath(`golden/${name}.metrics.json`), 'utf8');
        const golden = JSON.parse(goldenText);
        // The golden records carry no "source" field: per_source uses the reference's clip_id rule.
        const raw = readJsonl(sharedPath(`golden/${name}.jsonl`));
        expect(raw.some((r) => 'source' in r)).toBe(false);

        // Through the library, with the records as JSON.parse gives them ...
        const questions = loadQuestions(sharedPath('reference/questions_template.yaml'));
        const m = evaluate(raw as Prediction[], questions);
        const diffs: string[] = [];
        sameShape(m, golden, '$', diffs);
        sameShape(JSON.parse(metricsToJson(m)), golden, '$', diffs);
        expect(diffs).toEqual([]);
        expect(metricsToJson(m)).toBe(goldenText);

        // ... and through the predictions reader.
        const viaReader = evaluate(readPredictions(sharedPath(`golden/${name}.jsonl`)).records, questions);
        expect(metricsToJson(viaReader)).toBe(goldenText);
      });
    }
  },
);
