/**
 * Clip-level bootstrap (src/grade/bootstrap.ts) against the reference's
 * scripts/bootstrap_confidence.py: the intervals it wrote for a made-up predictions file (any clone)
 * and for the two published baselines' files (../shared), CPython's random() and choices(), and the
 * paired and two-sample differences.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PyRandom } from '../../src/core/pyrandom.js';
import { type BootstrapClip, bootstrapClips, bootstrapDifference, bootstrapIntervals, evaluate } from '../../src/grade/index.js';
import { readPredictions } from '../../src/io/predictions.js';
import { loadQuestions } from '../../src/oracle/questions.js';
import { cli } from '../helpers/cli.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

const FIX = new URL('../fixtures/bootstrap/', import.meta.url).pathname;
const questions = loadQuestions();
const golden = (name: string) => JSON.parse(readFileSync(join(FIX, name), 'utf8')) as Record<string, number | string>[];
const FIELDS = ['balanced_acc', 'balanced_acc_ci_lo', 'balanced_acc_ci_hi', 'wpcr', 'wpcr_ci_lo', 'wpcr_ci_hi'] as const;
const pick = (o: Record<string, unknown>) => Object.fromEntries(FIELDS.map((f) => [f, o[f]]));
const clipsOf = (path: string): BootstrapClip[] => bootstrapClips(readPredictions(path).records, questions);

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-bootstrap-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('CPython random', () => {
  it('random() and choices() draw what CPython draws', () => {
    const r = new PyRandom(42);
    expect([r.random(), r.random(), r.random()]).toEqual([0.6394267984578837, 0.025010755222666936, 0.27502931836911926]);
    expect([...new PyRandom(2 ** 40 + 5).choiceIndices(1000, 8)]).toEqual([504, 268, 925, 530, 817, 786, 908, 891]);
    expect([...new PyRandom(0).choiceIndices(7, 10)]).toEqual([5, 5, 2, 1, 3, 2, 5, 2, 3, 4]);
  });
});

describe('bootstrap intervals', () => {
  it("equal the reference script's on a made-up predictions file (500 draws, seed 7)", () => {
    const b = bootstrapIntervals(clipsOf(join(FIX, 'synthetic.jsonl')), questions, { n: 500, seed: 7 });
    expect(pick(b as unknown as Record<string, unknown>)).toEqual(pick(golden('reference_synthetic.json')[0]));
    expect(b.clips).toBe(60);
    // unparsable answers are left out, as the script's parse_records leaves them
    expect(b.answers).toBeLessThan(60 * 14);
    // per source and question: the point figures equal the grader's
    const m = evaluate(readPredictions(join(FIX, 'synthetic.jsonl')).records, questions);
    for (const [s, g] of Object.entries(b.per_source)) {
      expect(g.balanced_acc).toBe(m.per_source[s].balanced_acc);
      expect(g.balanced_acc_ci_lo).toBeLessThanOrEqual(g.balanced_acc_ci_hi);
    }
    for (const [q, g] of Object.entries(b.per_question)) expect(g.balanced_acc).toBe(m.per_question[q].balanced_acc);
    expect(b.balanced_acc).toBe(m.global.balanced_acc);
  });

  it('depend on the seed and narrow with more clips', () => {
    const clips = clipsOf(join(FIX, 'synthetic.jsonl'));
    const a = bootstrapIntervals(clips, questions, { n: 300, seed: 1 });
    const b = bootstrapIntervals(clips, questions, { n: 300, seed: 2 });
    expect(a.balanced_acc).toBe(b.balanced_acc);
    expect([a.balanced_acc_ci_lo, a.balanced_acc_ci_hi]).not.toEqual([b.balanced_acc_ci_lo, b.balanced_acc_ci_hi]);
    // the same answers four times over (new clip ids): the interval shrinks about twofold
    const many = [0, 1, 2, 3].flatMap((k) => clips.map((c) => ({ ...c, id: `${c.id}_${k}` })));
    const w = (x: typeof a) => x.balanced_acc_ci_hi - x.balanced_acc_ci_lo;
    const big = bootstrapIntervals(many, questions, { n: 300, seed: 1 });
    expect(w(big)).toBeLessThan(0.7 * w(a));
    expect(w(big)).toBeGreaterThan(0.3 * w(a));
  });

  it('reject a bad draw count', () => {
    expect(() => bootstrapIntervals([], questions, { n: 0 })).toThrow(/positive integer/);
  });
});

describe('bootstrap differences', () => {
  const clips = () => clipsOf(join(FIX, 'synthetic.jsonl'));
  /** The same clips with every answer on the first half of them made wrong where it was right. */
  const worse = (cs: BootstrapClip[]): BootstrapClip[] =>
    cs.map((c, i) => (i % 2 ? c : { ...c, answers: c.answers.map((a) => (a.pred === a.oracle ? { ...a, pred: `${a.pred}_wrong` } : a)) }));

  it('pair draws on common clips: a file against itself differs by exactly 0, p = 1', () => {
    const d = bootstrapDifference({ name: 'a', clips: clips() }, { name: 'b', clips: clips() }, questions, { n: 200, seed: 3 });
    expect(d.paired).toBe(true);
    expect([d.diff, d.ci_lo, d.ci_hi, d.p]).toEqual([0, 0, 0, 1]);
  });

  it('find a real difference on the same clips and give its interval', () => {
    const d = bootstrapDifference({ name: 'good', clips: clips() }, { name: 'worse', clips: worse(clips()) }, questions, { n: 500, seed: 3 });
    expect(d.paired).toBe(true);
    expect(d.diff).toBeGreaterThan(0.2);
    expect(d.ci_lo).toBeGreaterThan(0);
    expect(d.ci_lo).toBeLessThan(d.diff);
    expect(d.ci_hi).toBeGreaterThan(d.diff);
    expect(d.p).toBe(0);
    // unpaired (different clips): wider than the paired interval of the same gap
    const other = worse(clips()).map((c) => ({ ...c, id: `x${c.id}` }));
    const u = bootstrapDifference({ name: 'good', clips: clips() }, { name: 'worse', clips: other }, questions, { n: 500, seed: 3 });
    expect(u.paired).toBe(false);
    expect(u.diff).toBeCloseTo(d.diff, 12);
    expect(u.ci_hi - u.ci_lo).toBeGreaterThan(d.ci_hi - d.ci_lo);
  });

  it('say no difference when there is none to find', () => {
    // two halves of one random file: different clips, same answer quality
    const cs = clips();
    const u = bootstrapDifference({ name: 'even', clips: cs.filter((_, i) => i % 2 === 0) }, { name: 'odd', clips: cs.filter((_, i) => i % 2 === 1) }, questions, { n: 500, seed: 3 });
    expect(u.ci_lo).toBeLessThan(0);
    expect(u.ci_hi).toBeGreaterThan(0);
    expect(u.p).toBeGreaterThan(0.05);
  });
});

describe('egogeo grade --bootstrap', () => {
  it('prints the intervals and writes them under "bootstrap" with the script field names', async () => {
    const out = join(tmp, 'syn.json');
    const r = await cli('grade', join(FIX, 'synthetic.jsonl'), '--bootstrap', '500', '--seed', '7', '--json', out);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/bootstrap: 500 clip resamples, seed 7, 95% intervals/);
    expect(r.out).toMatch(/pooled\s+0\.7524 \[0\.7154, 0\.7884\]\s+0\.5167 \[0\.3833, 0\.6333\]\s+60/);
    const j = JSON.parse(readFileSync(out, 'utf8'));
    expect(pick(j.bootstrap)).toEqual(pick(golden('reference_synthetic.json')[0]));
    expect(j.bootstrap).toMatchObject({ n: 500, seed: 7, confidence: 0.95 });
    expect(Object.keys(j.bootstrap.per_source)).toEqual(['carla', 'nuscenes']);
    expect(j.global.balanced_acc).toBe(j.bootstrap.balanced_acc);
  });

  it('rejects a bad --bootstrap with one line', async () => {
    const r = await cli('grade', join(FIX, 'synthetic.jsonl'), '--bootstrap', 'ten');
    expect(r.code).not.toBe(0);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/--bootstrap/);
  });
});

describe.skipIf(!needsShared("bootstrap parity on the published baselines' predictions", 'golden/reference_results/vod.jsonl', 'golden/reference_results/flow_heuristic.jsonl'))(
  "bootstrap on the published baselines' predictions",
  () => {
    it("equals the reference script's intervals for each file alone (1000 draws, seed 42)", () => {
      for (const [file, gold] of [['vod', 'reference_vod.json'], ['flow_heuristic', 'reference_flow_heuristic.json']]) {
        const b = bootstrapIntervals(clipsOf(sharedPath(`golden/reference_results/${file}.jsonl`)), questions, { n: 1000, seed: 42 });
        expect(pick(b as unknown as Record<string, unknown>), file).toEqual(pick(golden(gold)[0]));
      }
    });

    it('equals them for both files in one run, one generator shared in sorted file order', () => {
      const rng = new PyRandom(42);
      const got = ['flow_heuristic', 'vod'].map((f) =>
        pick(bootstrapIntervals(clipsOf(sharedPath(`golden/reference_results/${f}.jsonl`)), questions, { n: 1000, rng }) as unknown as Record<string, unknown>),
      );
      expect(got).toEqual(golden('reference_both.json').map(pick));
    });
  },
);
