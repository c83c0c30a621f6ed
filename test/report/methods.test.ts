/**
 * A report over several methods' runs (issue 53): runs that gave the same answers on a domain are
 * one row (one method's two CARLA-domain runs share their nuScenes clips), the headline is per
 * method, a method difference is printed only where the figures differ, the trajectory panels draw
 * each clip once per domain, and long figure titles wrap instead of running off the figure.
 */
import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../../src/core/trajectory.js';
import type { Prediction } from '../../src/io/predictions.js';
import { computeDynamics, loadQuestions } from '../../src/oracle/index.js';
import { domainTable } from '../../src/report/domains.js';
import { buildReport, clipKey, type ClipTruth } from '../../src/report/report.js';
import { domainLines, markdown, plots } from '../../src/report/render.js';
import { combineRuns, type ReportRun } from '../../src/report/runs.js';
import { barChart, titleLines } from '../../src/report/svg.js';

const questions = loadQuestions();
const Y = 'yaw_rate_turn_direction';
const rec = (clip_id: string, source: string, oracle_label: string, model_answer: string): Prediction => ({ clip_id, source, question_id: Y, oracle_label, model_answer, category: 'direct_dynamics' });
const nu = (c2: string) => [rec('clip_1', 'nuscenes', 'left', 'left'), rec('clip_2', 'nuscenes', 'left', c2), rec('clip_3', 'nuscenes', 'right', 'right')];
const carla = [rec('Town01_a', 'carla', 'left', 'left'), rec('Town01_b', 'carla', 'straight', 'left')];
const run = (name: string, method: string, domain: string, c2: string): ReportRun => ({ file: `${name}.jsonl`, name, name_from: 'manifest', carla_domain: domain, method, records: [...nu(c2), ...carla] });
// egogeo in two CARLA domains (the same nuScenes answers), vo-proxy: clip_2 wrong another way (the same figures), flow: right.
const runs = [run('eg_sim', 'egogeo', 'simulation', 'right'), run('eg_tr', 'egogeo', 'transferred', 'right'), run('vo_sim', 'vo-proxy', 'simulation', 'straight'), run('fl_sim', 'flow-heuristic', 'simulation', 'left')];

describe('several methods in one report', () => {
  it('runs with the same answers on a domain are one row; each other way of answering its own', () => {
    const c = combineRuns(runs);
    expect(c.domains.map((d) => d.domain)).toEqual(['nuscenes (eg_sim = eg_tr)', 'nuscenes (vo_sim)', 'nuscenes (fl_sim)', 'carla simulation', 'carla transferred']);
    expect(c.notes[0]).toMatch(/^nuscenes: eg_sim, eg_tr, vo_sim, fl_sim answer 3 items in 3 different ways, reported once per way \(the same answers, counted once: eg_sim = eg_tr\)$/);
    const t = domainTable(c.records, questions, c.domains);
    // The CARLA rows' gap is taken against the nuScenes row holding their run.
    expect(t.gaps.filter((g) => g.kind === 'domain').map((g) => `${g.a} − ${g.b}`)).toContain('carla transferred − nuscenes (eg_sim = eg_tr)');
  });

  it('a method difference is printed only where the figures differ; the headline is per method', () => {
    const c = combineRuns(runs);
    const r = buildReport({ name: 'four', records: c.records, questions, clips: new Map(), near: 0.15, runs, domains: c.domains });
    const lines = domainLines(r).join("\n");

    // egogeo and vo-proxy answer clip_2 differently but both wrong: the same figures, no line.
    expect(lines).not.toMatch(/method difference nuscenes \(eg_sim = eg_tr\) − nuscenes \(vo_sim\)/);
    expect(lines).toMatch(/method difference nuscenes \(eg_sim = eg_tr\) − nuscenes \(fl_sim\): balanced accuracy −0\.250/);
    expect(lines).toMatch(/\(1 method pair with the same balanced accuracies not shown\)/);
    expect(lines).not.toMatch(/method difference .*\+0\.000/);
    expect(r.methods.map((m) => [m.method, m.runs.join(',')])).toEqual([['egogeo', 'eg_sim,eg_tr'], ['vo-proxy', 'vo_sim'], ['flow-heuristic', 'fl_sim']]);
    // egogeo: nuScenes once (3 items), both CARLA domains (4): left 3/4, right 1/1, straight 0/2 → 0.5833.
    expect(r.methods[0]).toMatchObject({ clips: 7, overall: { balanced_acc: 0.5833, n: 7 } });
    expect(r.methods[2].overall.balanced_acc).toBe(0.6667);
    const md = markdown(r, false);
    expect(md).toMatch(/3 methods/);
    expect(md).toMatch(/- \*\*egogeo\*\* \(eg_sim, eg_tr; 7 clips\): balanced accuracy \*\*0\.583\*\*/);
    expect(md).not.toMatch(/pooled balanced accuracy/);
    expect(r.gaps).toEqual([]); // no "largest gap" across methods
    expect(plots(r)['per_question.svg']).not.toMatch(/>all</); // no bar pooling the methods
  });

  it('draws each clip once per domain, however many runs split the domain', () => {
    const c = combineRuns([runs[0], runs[3]]); // nuScenes split: 'nuscenes (eg_sim)', 'nuscenes (fl_sim)'
    const t = Array.from({ length: 31 }, (_, i) => i / 10);
    const traj = (v: number) => makeTrajectory('clip_1', { t, x: t.map((s) => v * s), y: t.map(() => 0), yaw: t.map(() => 0) });
    const gt = computeDynamics(traj(8));
    const clips = new Map<string, ClipTruth>();
    for (const d of ['nuscenes (eg_sim)', 'nuscenes (fl_sim)']) clips.set(clipKey(d, 'clip_1'), { gt, estimate: traj(10) });
    const r = buildReport({ name: 'two', records: c.records, questions, clips, near: 0.15, runs: [runs[0], runs[3]], domains: c.domains });
    expect(r.trajectory_errors.per_clip).toHaveLength(2);
    expect(r.worst.map((w) => w.clip_id)).toEqual(['clip_1']);
    expect(plots(r)['trajectories.svg']).toMatch(/>\(nuscenes\) ATE/);
  });
});

describe('figure titles', () => {
  it('a title wider than the figure wraps onto lines that fit; the figure grows to hold them', () => {
    const long = 'Balanced accuracy per question — egogeo_simulation + egogeo_transferred + vo_proxy_simulation + flow_heuristic_simulation (4 runs, 153 clips), 95% bootstrap intervals';
    const lines = titleLines(long, 700);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.join(' ')).toBe(long);
    for (const l of lines) expect(l.length * 8.8).toBeLessThanOrEqual(700 - 24);
    const short = barChart(['a'], ['x'], [[0.5]], { title: 'Short' });
    const wide = barChart(['a'], ['x'], [[0.5]], { title: long });
    const h = (svg: string) => Number(/height="(\d+(\.\d+)?)"/.exec(svg)![1]);
    expect(h(wide) - h(short)).toBe((titleLines(long, Number(/width="(\d+)"/.exec(wide)![1])).length - 1) * 19);
    expect((wide.match(/font-size="15"/g) ?? []).length).toBeGreaterThan(1);
    expect(wide).toMatch(/<g transform="translate\(0 \d+\)">/);
  });
  it('a legend wider than the figure wraps onto rows inside it; the plot moves down', () => {
    const series = Array.from({ length: 8 }, (_, i) => `nuscenes (method_number_${i}_simulation)`);
    const svg = barChart(['q'], series, [series.map(() => 0.5)], { title: 't' });
    const width = Number(/width="(\d+)"/.exec(svg)![1]);
    const entries = [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="12" height="12"[^>]*\/>\n<text x="[\d.]+" y="[\d.]+">([^<]+)</g)];
    expect(entries).toHaveLength(8);
    for (const [, x, , label] of entries) expect(Number(x) + 16 + label.length * 7).toBeLessThanOrEqual(width);
    expect(new Set(entries.map((e) => e[2])).size).toBeGreaterThan(1);
  });
});
