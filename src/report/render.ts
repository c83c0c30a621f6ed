/**
 * A `Report` → files: `report.md`, `report.json` and the SVG plots (plus PNG copies rendered with
 * `sharp` when it is installed): `per_question.svg` (balanced accuracy per question and source),
 * `per_source.svg` (balanced accuracy and macro F1 per source), `disagreements.svg` (per question:
 * near-threshold cases vs errors) and `trajectories.svg` (ground truth vs estimate, worst clips).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ErrorKey, Report } from './report.js';
import { barChart, trajectoryPanels } from './svg.js';

const f3 = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : '–');
/** Markdown table cell text (pipes escaped). */
const cell = (s: string): string => s.replace(/\|/g, '\\|');
const pct = (v: number): string => (Number.isFinite(v) ? `${(100 * v).toFixed(1)}%` : '–');

const ERROR_LABELS: [ErrorKey, string][] = [
  ['ate_se3', 'ATE SE(3) m'],
  ['ate_sim3', 'ATE Sim(3) m'],
  ['rpe_trans', 'RPE m/0.1 s'],
  ['rpe_rot', 'RPE rad/0.1 s'],
  ['yaw_rate_rmse', 'yaw-rate RMSE rad/s'],
  ['speed_rmse', 'speed RMSE m/s'],
];

export function plots(r: Report): Record<string, string> {
  const sources = Object.keys(r.per_source);
  const qs = Object.keys(r.per_question);
  return {
    'per_question.svg': barChart(
      qs,
      sources.length > 1 ? ['all', ...sources] : sources,
      qs.map((q) => [...(sources.length > 1 ? [r.per_question[q].balanced_acc] : []), ...sources.map((s) => r.per_source[s].per_question[q]?.balanced_acc ?? NaN)]),
      { title: `Balanced accuracy per question — ${r.name}`, axis: 'balanced accuracy', labels: true },
    ),
    'per_source.svg': barChart(sources, ['balanced accuracy', 'macro F1'], sources.map((s) => [r.per_source[s].balanced_acc, r.per_source[s].macro_f1]), {
      title: `Per source — ${r.name}`,
      labels: true,
    }),
    'disagreements.svg': barChart(
      qs,
      ['near threshold', 'error', 'no ground truth'],
      qs.map((q) => [r.per_question[q].near_threshold, r.per_question[q].errors, r.per_question[q].unknown]),
      { title: `Disagreements with the oracle (near: within ${pct(r.near_threshold)} of the threshold)`, stacked: true, labels: true, axis: 'clips', colors: ['#edc948', '#e15759', '#bab0ac'] },
    ),
    'trajectories.svg': trajectoryPanels(
      r.worst.map((w) => ({ title: `${w.clip_id} (${w.source}) ATE ${w.ate_se3.toFixed(2)} m`, gt: w.gt, estimate: w.estimate })),
      `Ground truth vs estimate — the ${r.worst.length} clips with the largest ATE`,
    ),
  };
}

export function markdown(r: Report, pngs: boolean): string {
  const L: string[] = [];
  const sources = Object.keys(r.per_source);
  L.push(`# Report: ${r.name}`, '');
  L.push(`${r.n_records} predictions over ${r.n_clips} clips; pooled balanced accuracy **${f3(r.overall.balanced_acc)}**, macro F1 ${f3(r.overall.macro_f1)}, accuracy ${f3(r.overall.accuracy)}.`, '');
  for (const n of r.notes) L.push(`> ${n}`, '');

  L.push('## Per source', '');
  L.push('| source | clips | predictions | balanced acc. | macro F1 | accuracy |', '| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const s of sources) {
    const p = r.per_source[s];
    L.push(`| ${s} | ${p.clips} | ${p.n} | ${f3(p.balanced_acc)} | ${f3(p.macro_f1)} | ${f3(p.accuracy)} |`);
  }
  L.push('');
  for (const g of r.gaps) L.push(`Largest gap in ${g.metric === 'balanced_acc' ? 'balanced accuracy' : 'macro F1'}: **${f3(g.gap)}** (${g.best} ${f3(r.per_source[g.best][g.metric])} vs ${g.worst} ${f3(r.per_source[g.worst][g.metric])}).`);
  if (r.gaps.length) L.push('');
  L.push(`![per source](per_source.${pngs ? 'png' : 'svg'})`, '');

  L.push('## Per question: the oracle against the estimated trajectories', '');
  L.push(
    `Agreement of the oracle's labels (ground truth) with the labels the same oracle gives the estimated trajectories; every disagreement is a *near-threshold* case when the deciding value of the ground truth lies within ${pct(r.near_threshold)} of its threshold, else an *error*.`,
    '',
  );
  const qs = Object.keys(r.per_question);
  L.push(`| question | n | agreement | balanced acc. | macro F1 | ${sources.length > 1 ? `${sources.map((s) => `BAcc ${s}`).join(' | ')} | ` : ''}disagree | near thr. | errors |`);
  L.push(`| --- | ---: | ---: | ---: | ---: | ${sources.length > 1 ? sources.map(() => '---: | ').join('') : ''}---: | ---: | ---: |`);
  for (const q of qs) {
    const c = r.per_question[q];
    const per = sources.length > 1 ? `${sources.map((s) => f3(r.per_source[s].per_question[q]?.balanced_acc ?? NaN)).join(' | ')} | ` : '';
    L.push(`| ${q} | ${c.n} | ${pct(c.agreement)} | ${f3(c.balanced_acc)} | ${f3(c.macro_f1)} | ${per}${c.disagreements} | ${c.near_threshold} | ${c.errors}${c.unknown ? ` (+${c.unknown} unknown)` : ''} |`);
  }
  L.push('', `![per question](per_question.${pngs ? 'png' : 'svg'})`, '', `![disagreements](disagreements.${pngs ? 'png' : 'svg'})`, '');

  L.push('### Confusion (rows: oracle label, columns: answer from the estimate)', '');
  for (const q of qs) {
    const c = r.per_question[q].confusion;
    if (c.labels.length === 0) continue;
    L.push(`**${q}**`, '', `| oracle \\ estimate | ${c.labels.join(' | ')} |`, `| --- | ${c.labels.map(() => '---:').join(' | ')} |`);
    c.labels.forEach((l, i) => L.push(`| ${l} | ${c.matrix[i].join(' | ')} |`));
    L.push('');
  }

  const errs = r.disagreements.filter((d) => d.kind === 'error' && d.margin).sort((a, b) => b.margin!.rel - a.margin!.rel);
  const near = r.disagreements.filter((d) => d.kind === 'near-threshold');
  L.push('### Disagreements', '');
  L.push(`${r.disagreements.length} in all: ${near.length} near-threshold, ${errs.length} errors${r.disagreements.length - near.length - errs.length ? `, ${r.disagreements.length - near.length - errs.length} without ground truth` : ''}. The largest errors (all in report.json):`, '');
  if (errs.length) {
    L.push('| clip | source | question | oracle | estimate | deciding value | ground truth | estimate | threshold | distance |', '| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: |');
    for (const d of errs.slice(0, 25)) {
      const m = d.margin!;
      L.push(`| ${d.clip_id} | ${d.source} | ${d.question_id} | ${d.oracle_label} | ${d.model_answer ?? '–'} | ${cell(m.feature)} | ${f3(m.value)} | ${m.estimate === null ? '–' : f3(m.estimate)} | ${f3(m.threshold)} | ${pct(m.rel)} |`);
    }
    L.push('');
  }

  L.push('## Trajectory errors per source', '');
  if (r.trajectory_errors.n_clips === 0) {
    L.push('No clip has both ground truth and an estimated trajectory.', '');
  } else {
    L.push(`${r.trajectory_errors.n_clips} clips, both trajectories resampled to the oracle's 10 Hz grid over 3 s; mean (median) per clip.`, '');
    L.push(`| source | clips | ${ERROR_LABELS.map(([, l]) => l).join(' | ')} |`, `| --- | ---: | ${ERROR_LABELS.map(() => '---:').join(' | ')} |`);
    for (const [s, st] of Object.entries(r.trajectory_errors.per_source)) {
      L.push(`| ${s} | ${st.ate_se3.n} | ${ERROR_LABELS.map(([k]) => `${f3(st[k].mean)} (${f3(st[k].median)})`).join(' | ')} |`);
    }
    L.push('', `![trajectories](trajectories.${pngs ? 'png' : 'svg'})`, '');
  }
  return `${L.join('\n')}\n`;
}

/** Writes the report files into `dir`; returns their names. */
export async function writeReport(r: Report, dir: string): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const svgs = plots(r);
  const written: string[] = [];
  for (const [name, text] of Object.entries(svgs)) {
    writeFileSync(join(dir, name), text);
    written.push(name);
  }
  const sharp = loadSharp();
  if (sharp) {
    for (const [name, text] of Object.entries(svgs)) {
      const png = name.replace(/\.svg$/, '.png');
      await sharp(Buffer.from(text), { density: 144 }).png().toFile(join(dir, png));
      written.push(png);
    }
  }
  writeFileSync(join(dir, 'report.md'), markdown(r, !!sharp));
  writeFileSync(join(dir, 'report.json'), `${JSON.stringify(r, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 1)}\n`);
  written.push('report.md', 'report.json');
  return written;
}

type Sharp = (input: Buffer, o: { density: number }) => { png(): { toFile(path: string): Promise<unknown> } };

/** `sharp`, when a dependency installed it (PNG copies of the plots); else null. */
function loadSharp(): Sharp | null {
  try {
    return createRequire(import.meta.url)('sharp') as Sharp;
  } catch {
    return null;
  }
}
