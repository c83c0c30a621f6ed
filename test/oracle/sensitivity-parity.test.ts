/**
 * `egogeo sensitivity` against the reference's own scripts on the published stand-in's 45 clips
 * (../shared) and 4 prediction files made for it (test/fixtures/sensitivity, see its README):
 * per_threshold_sensitivity.py (flip rates, ranking τ, mean balanced accuracy per question and α)
 * and threshold_sensitivity.py (the oracle's EMCR/WEMCR, each file's accuracy, balanced accuracy
 * and macro F1, τ per α).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

const FIX = new URL('../fixtures/sensitivity/', import.meta.url).pathname;
const preds = ['model_a', 'model_b', 'model_c', 'model_d'].map((m) => join(FIX, 'predictions', `${m}.jsonl`)).join(',');
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-sens-parity-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
/** Python's str() of a factor: "0.5", "1.0". */
const pyKey = (a: number): string => (Number.isInteger(a) ? a.toFixed(1) : String(a));

describe.skipIf(!needsShared('sensitivity parity on the published stand-in', 'data/published/egodyn-bench/selected_clips.json'))('sensitivity parity with the reference scripts', () => {
  it('--per-question equals per_threshold_sensitivity.py: flip rates, τ, mean balanced accuracy', async () => {
    const json = join(tmp, 'pq.json');
    const r0 = await cli('sensitivity', sharedPath('data/published/egodyn-bench'), '--per-question', '--from', '0.5', '--to', '1.5', '--step', '0.1', '--predictions', preds, '--json', json);
    expect(r0.code, r0.err).toBe(0);
    const got = JSON.parse(readFileSync(json, 'utf8'));
    const ref = JSON.parse(readFileSync(join(FIX, 'reference_per_threshold.json'), 'utf8'));
    expect(got.alphas).toEqual(ref.factors);
    expect(got.perQuestion.map((q: { question: string }) => q.question)).toEqual(ref.questions);
    let moving = 0;
    for (const q of got.perQuestion) {
      const rq = ref.per_question[q.question];
      got.alphas.forEach((a: number, k: number) => {
        const at = `${q.question} at ${a}`;
        expect(q.flipRate[k], at).toBe(rq.label_flip_rates[pyKey(a)]);
        expect(q.tau[k], at).toBe(rq.global_rank_tau[pyKey(a)]);
        expect(q.meanBalancedAcc[k], at).toBeCloseTo(rq.per_factor_mean_bacc[pyKey(a)], 12);
        if (q.flipRate[k] > 0) moving++;
      });
    }
    expect(moving).toBeGreaterThan(50); // the set exercises the thresholds
  });

  it('the global analysis equals threshold_sensitivity.py: oracle consistency, each file’s metrics, τ', async () => {
    const json = join(tmp, 'global.json');
    const r0 = await cli('sensitivity', sharedPath('data/published/egodyn-bench'), '--from', '0.8', '--to', '1.2', '--step', '0.05', '--predictions', preds, '--json', json);
    expect(r0.code, r0.err).toBe(0);
    const got = JSON.parse(readFileSync(json, 'utf8'));
    const ref = JSON.parse(readFileSync(join(FIX, 'reference_global.json'), 'utf8'));
    expect(got.alphas).toEqual(ref.factors);
    for (const row of got.rows) {
      const k = pyKey(row.alpha);
      const oc = ref.oracle_consistency[k];
      expect(row.oracleConsistency, `alpha ${k}`).toEqual({ emcr: oc.emcr, wemcr: oc.wemcr, rule_coverage: oc.rule_coverage, n_evaluable: oc.n_evaluable });
      expect(row.tau).toBe(ref.rank_correlations[k]);
      for (const m of Object.keys(ref.model_metrics)) expect(row.metrics[m], `${m} at ${k}`).toEqual(ref.model_metrics[m][k]);
    }
  });
});
