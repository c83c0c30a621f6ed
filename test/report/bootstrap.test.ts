/**
 * `egogeo report --bootstrap`: intervals on the per-domain table, paired gaps between the two CARLA
 * domains (the same clips), two-sample gaps against nuScenes, method differences where two methods'
 * runs answer one domain differently, and the whiskers in per_source.svg. Runs made here: 40
 * nuScenes and 40 CARLA clips, answers right with a planted probability.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/core/random.js';
import { PyRandom } from '../../src/core/pyrandom.js';
import { bootstrapClips, bootstrapIntervals } from '../../src/grade/index.js';
import type { Prediction } from '../../src/io/predictions.js';
import { loadQuestions } from '../../src/oracle/index.js';
import { domainTable } from '../../src/report/domains.js';
import { combineRuns, type ReportRun } from '../../src/report/runs.js';
import { cli, ensureDist } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-report-boot-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const questions = loadQuestions();
const QS = questions.questions.filter((q) => q.choices && q.choices.length > 1);

/** Answers to every question of `clips`, right with probability `pRight` (else another choice). */
function answers(clips: string[], source: string, pRight: number, seed: number): Prediction[] {
  const rnd = mulberry32(seed);
  const truth = mulberry32(7); // the same oracle labels in every run
  return clips.flatMap((clip_id) =>
    QS.map((q) => {
      const ch = q.choices!;
      const oracle = ch[Math.floor(truth() * ch.length)];
      const right = rnd() < pRight;
      const wrong = ch[(ch.indexOf(oracle) + 1 + Math.floor(rnd() * (ch.length - 1))) % ch.length];
      return { clip_id, source, question_id: q.id, oracle_label: oracle, model_answer: right ? oracle : wrong, category: 'direct_dynamics' };
    }),
  );
}
const NU = Array.from({ length: 40 }, (_, i) => `clip_${i}`);
const CA = Array.from({ length: 40 }, (_, i) => `Town01_${i}`);
const run = (name: string, domain: string, pNu: number, pCa: number, seed: number): ReportRun => ({
  file: `${name}.jsonl`,
  name,
  name_from: 'manifest',
  carla_domain: domain,
  records: [...answers(NU, 'nuscenes', pNu, 1), ...answers(CA, 'carla', pCa, seed)],
});

describe('one bootstrap per quantity', () => {
  it('a domain\'s balanced accuracy gets one interval: per-domain row = report bootstrap block = grade --bootstrap of the domain\'s records = grade\'s per-source interval of the whole file', async () => {
    const { buildReport } = await import('../../src/report/report.js');
    const runs = [run('egogeo_simulation', 'simulation', 0.8, 0.9, 2)];
    const c = combineRuns(runs);
    const r = buildReport({ name: 'x', records: c.records, questions, clips: new Map(), near: 0.15, runs, domains: c.domains, bootstrap: { n: 200, seed: 7 } });
    const wholeFile = bootstrapIntervals(bootstrapClips(runs[0].records, questions), questions, { n: 200, seed: 7 });
    for (const [domain, source] of [['nuscenes', 'nuscenes'], ['carla simulation', 'carla']]) {
      const row = r.domains.rows.find((d) => d.domain === domain)!;
      const alone = bootstrapIntervals(bootstrapClips(runs[0].records.filter((x) => x.source === source), questions), questions, { n: 200, seed: 7 });
      const iv = [alone.balanced_acc_ci_lo, alone.balanced_acc_ci_hi];
      expect(row.all_ci, domain).toEqual(iv);
      expect([r.bootstrap!.per_source[domain].balanced_acc_ci_lo, r.bootstrap!.per_source[domain].balanced_acc_ci_hi], domain).toEqual(iv);
      expect([wholeFile.per_source[source].balanced_acc_ci_lo, wholeFile.per_source[source].balanced_acc_ci_hi], source).toEqual(iv);
    }
    // A question's interval likewise: the file's own, and the one of its records alone.
    const q = QS[0].id;
    const onlyQ = bootstrapIntervals(bootstrapClips(runs[0].records.filter((x) => x.question_id === q), questions), questions, { n: 200, seed: 7 });
    expect([wholeFile.per_question[q].balanced_acc_ci_lo, wholeFile.per_question[q].balanced_acc_ci_hi]).toEqual([onlyQ.balanced_acc_ci_lo, onlyQ.balanced_acc_ci_hi]);
    expect(r.bootstrap!.seed).toBe(7);
  });
});

describe('domain table with a bootstrap', () => {
  it('gives every balanced accuracy an interval, the same as grade --bootstrap on that domain alone', () => {
    const runs = [run('egogeo_simulation', 'simulation', 0.8, 0.9, 2), run('egogeo_transferred', 'transferred', 0.8, 0.5, 3)];
    const c = combineRuns(runs);
    const t = domainTable(c.records, questions, c.domains, { n: 300, seed: 5 });
    expect(t.bootstrap).toEqual({ n: 300, seed: 5, confidence: 0.95 });
    for (const row of t.rows) {
      const [lo, hi] = row.all_ci!;
      expect(lo).toBeLessThan(row.all.balanced_acc);
      expect(hi).toBeGreaterThan(row.all.balanced_acc);
      const alone = bootstrapIntervals(bootstrapClips(c.records.filter((r) => r.source === row.domain), questions), questions, { n: 300, rng: new PyRandom(5) });
      expect([alone.balanced_acc_ci_lo, alone.balanced_acc_ci_hi]).toEqual(row.all_ci);
    }
    const gaps = Object.fromEntries(t.gaps.map((g) => [`${g.a} - ${g.b}`, g]));
    // transferred (50% right) vs simulation (90%) on the same 40 clips: paired, clearly below 0
    const tr = gaps['carla transferred - carla simulation'];
    expect(tr.diff).toMatchObject({ paired: true, clips: 40 });
    expect(tr.diff!.ci_hi).toBeLessThan(0);
    expect(tr.diff!.p).toBeLessThan(0.01);
    expect(tr.diff!.diff).toBeCloseTo(tr.balanced_acc, 3);
    // simulation (90%) vs nuScenes (80%): different clips, two-sample
    const sn = gaps['carla simulation - nuscenes'];
    expect(sn.diff).toMatchObject({ paired: false, clips: 80 });
    expect(sn.diff!.ci_lo).toBeLessThan(sn.diff!.diff);
    expect(sn.subset_diff!.ci_hi).toBeGreaterThan(sn.subset_diff!.ci_lo);
  });

  it('finds no difference between two runs of one method that answer alike in quality', () => {
    const runs = [run('egogeo_simulation', 'simulation', 0.8, 0.8, 2), run('egogeo_transferred', 'transferred', 0.8, 0.8, 3)];
    const c = combineRuns(runs);
    const g = domainTable(c.records, questions, c.domains, { n: 500, seed: 5 }).gaps.find((x) => x.a === 'carla transferred')!;
    expect(g.diff!.ci_lo).toBeLessThan(0);
    expect(g.diff!.ci_hi).toBeGreaterThan(0);
    expect(g.diff!.p).toBeGreaterThan(0.05);
  });

  it('compares two methods on one domain, paired', () => {
    const a = run('egogeo_simulation', 'simulation', 0.9, 0.9, 2);
    const b = { ...run('vo_proxy_simulation', 'simulation', 0.5, 0.5, 4) };
    const c = combineRuns([a, b]);
    const t = domainTable(c.records, questions, c.domains, { n: 300, seed: 5 });
    const m = t.gaps.filter((g) => g.kind === 'method');
    expect(m.map((g) => `${g.a} - ${g.b}`)).toEqual([
      'nuscenes (egogeo_simulation) - nuscenes (vo_proxy_simulation)',
      'carla simulation (egogeo_simulation) - carla simulation (vo_proxy_simulation)',
    ]);
    for (const g of m) {
      expect(g.diff!.paired).toBe(true);
      expect(g.diff!.ci_lo).toBeGreaterThan(0);
    }
  });

  it('a gap whose side has no parsable answer gets no interval, and says so', () => {
    const recs: Prediction[] = [
      ...answers(NU, 'nuscenes', 0.8, 1),
      ...answers(CA, 'carla', 0.8, 2).map((r) => ({ ...r, model_answer: 'I cannot tell' })),
    ];
    const t = domainTable(recs, questions, [{ domain: 'nuscenes', runs: ['a'] }, { domain: 'carla', runs: ['a'] }], { n: 50, seed: 1 });
    const g = t.gaps.find((x) => x.a === 'carla')!;
    expect(g.diff).toBeNull();
    expect(t.rows.find((r) => r.domain === 'carla')!.all_ci).toEqual([0, 0]);
  });

  it('has no intervals without a bootstrap', () => {
    const c = combineRuns([run('egogeo_simulation', 'simulation', 0.8, 0.9, 2)]);
    const t = domainTable(c.records, questions, c.domains);
    expect(t.bootstrap).toBeUndefined();
    expect(t.rows[0].all_ci).toBeUndefined();
  });
});

describe('egogeo report --bootstrap (CLI)', () => {
  it('prints intervals and p-values, and draws whiskers in per_source.svg', () => {
    ensureDist();
    const files = [run('egogeo_simulation', 'simulation', 0.8, 0.9, 2), run('egogeo_transferred', 'transferred', 0.8, 0.5, 3)].map((r) => {
      const p = join(tmp, r.file);
      writeFileSync(p, r.records.map((x) => `${JSON.stringify(x)}\n`).join(''));
      writeFileSync(`${p}.manifest.json`, JSON.stringify({ model: r.name, type: 'Baseline', input: 'Vision' }));
      const key = { dataset: join(tmp, 'none'), clips: null, source_label: null, limit: null, questions: 'all', frames: null, config: 'q.yaml', scale: 'road', carla_domain: r.carla_domain };
      writeFileSync(`${p}.run.json`, JSON.stringify({ egogeo_run: 1, key, shard: { index: 0, count: 1 }, model: r.name, clips_total: 0, clips: [], status: 'complete', started: '' }));
      return p;
    });
    const out = join(tmp, 'rep');
    const r = cli(['report', ...files, '--bootstrap', '200', '--seed', '3', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/intervals: 95% clip-level bootstrap, 200 draws, seed 3/);
    expect(r.stdout).toMatch(/carla transferred +egogeo_transferred +40 +0\.\d{3} \[0\.\d{3}, 0\.\d{3}\]/);
    expect(r.stdout).toMatch(/gap carla transferred − carla simulation: balanced accuracy −0\.\d{3} \[−0\.\d{3}, −0\.\d{3}\] p < 0\.001 \(paired, 40 clips\)/);
    expect(r.stdout).toMatch(/gap carla simulation − nuscenes: .*\(two-sample, 80 clips\)/);
    const j = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(j.domains.bootstrap).toEqual({ n: 200, seed: 3, confidence: 0.95 });
    expect(j.domains.gaps[0].diff).toMatchObject({ paired: true, metric: 'balanced_acc' });
    const svg = readFileSync(join(out, 'per_source.svg'), 'utf8');
    expect(svg.match(/class="interval"/g)!.length).toBe(6);
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toMatch(/Intervals: 95% clip-level bootstrap \(200 draws, seed 3/);
    // The pooled intervals name the seed they drew with, not "seed null" (issue 53).
    expect(md).toMatch(/clip-level bootstrap over every domain's clips \(200 draws, seed 3\)/);
    expect(md).not.toMatch(/seed null/);
    expect(j.bootstrap.seed).toBe(3);
    // the pooled intervals: per domain with WPCR, per question
    expect(md).toMatch(/\| carla transferred \| 40 \| 0\.\d{3} \[0\.\d{3}, 0\.\d{3}\] \| \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] \|/);
    expect(md).toMatch(/\| yaw_rate_turn_direction \| 120 \| /);
    expect(j.bootstrap.per_source['carla transferred']).toMatchObject({ clips: 40 });
    expect(Object.keys(j.bootstrap.per_question)).toHaveLength(14);
    expect(readFileSync(join(out, 'per_question.svg'), 'utf8').match(/class="interval"/g)!.length).toBe(14);
    const bad = cli(['report', ...files, '--bootstrap', '-1', '--out', join(tmp, 'bad')]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });
});
