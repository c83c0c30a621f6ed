/**
 * The shipped question file parsed at build time (src/oracle/questions.ts `prebuilt`,
 * scripts/parse-questions.mjs): the same document js-yaml gives, used only for the text it was
 * made from, and not made where JSON cannot hold the parse.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import jsyaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { compileQuestions, DEFAULT_QUESTIONS_PATH, parsedQuestions } from '../../src/oracle/questions.js';

const text = readFileSync(DEFAULT_QUESTIONS_PATH, 'utf8');
const strip = (set: { questions: { label: unknown }[] }) => set.questions.map(({ label, ...q }) => q);
const DIST = fileURLToPath(new URL('../../dist/oracle/questions.js', import.meta.url));

describe('the question file parsed at build time', () => {
  it("holds js-yaml's document for the shipped file, under the text's SHA-256", () => {
    const p = parsedQuestions(text, DEFAULT_QUESTIONS_PATH);
    expect(p).not.toBeNull();
    expect(p!.document).toEqual(jsyaml.load(text));
    expect(p!.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(parsedQuestions(`${text}\n`, DEFAULT_QUESTIONS_PATH)!.sha256).not.toBe(p!.sha256);
  });

  it('is not made where JSON would change the parse', () => {
    expect(parsedQuestions('questions: [{question_id: a, rule: {name: x, params: {t: .inf}}}]\n', 'q.yaml')).toBeNull();
    expect(() => parsedQuestions('questions: [\n', 'q.yaml')).toThrow(/q\.yaml: invalid YAML/);
  });

  // The compiled loader next to the build's file (after `npm run build`, as CI and `npm run setup` run it).
  it.skipIf(!existsSync(DIST))('is what the compiled loader compiles the shipped file from, and only that file', async () => {
    const dist = (await import(DIST)) as typeof import('../../src/oracle/questions.js');
    expect(strip(dist.questionsFromText(text, DEFAULT_QUESTIONS_PATH))).toEqual(strip(compileQuestions(jsyaml.load(text), DEFAULT_QUESTIONS_PATH)));
    // Another text (one threshold changed) is parsed, not taken from the build's file.
    const edited = text.replace('threshold_positive: 0.04', 'threshold_positive: 123.5');
    expect(edited).not.toBe(text);
    const set = dist.questionsFromText(edited, 'edited.yaml');
    expect(JSON.stringify(set.document)).toContain('123.5');
  });
});
