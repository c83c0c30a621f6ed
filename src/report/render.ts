/**
 * A `Report` → files: `report.md`, `report.json` and the SVG plots (plus PNG copies rendered with
 * `sharp` when it is installed): `per_question.svg` (balanced accuracy per question and domain),
 * `per_source.svg` (balanced accuracy per domain, 6-question subset and all questions),
 * `disagreements.svg` (per question: near-threshold cases vs errors), `trajectories.svg` (ground
 * truth vs estimate, worst clips) and, with a leaderboard, `leaderboard.svg` (the runs among their
 * neighbours). Also the plain-text per-domain table and leaderboard placement the CLI prints.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type LeaderboardPlacement, neighbourhood, type RankedRow } from './leaderboard.js';
import { type CoveredGroup, type Difference, DRAW_QUANTILE } from '../grade/index.js';
import type { ErrorKey, Report } from './report.js';
import type { DomainGap } from './domains.js';
import { baseDomain } from './runs.js';
import { CHECK_BOOTSTRAP, type CeilingCheck } from './ceilings.js';
import { barChart, scatterPanels, trajectoryPanels, writePlots } from './svg.js';

const f3 = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : '–');
/** Markdown table cell text (pipes escaped). */
const cell = (s: string): string => s.replace(/\|/g, '\\|');
const pct = (v: number): string => (Number.isFinite(v) ? `${(100 * v).toFixed(1)}%` : '–');
const f4 = (v: number | null): string => (v !== null && Number.isFinite(v) ? v.toFixed(4) : '–');
const signed = (v: number | null): string => (v === null || !Number.isFinite(v) ? '–' : `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(3)}`);
const rk = (x: { rank: number; of: number } | null): string => (x ? `${x.rank}/${x.of}` : '–');
/** A leaderboard figure's bootstrap interval, 4 places. */
const ci4 = (c: [number, number] | null | undefined): string => (c ? ` [${f4(c[0])}, ${f4(c[1])}]` : '');
/** Coverage (answered / gradable) as a percentage. */
const cov = (c: number | null): string => (c === null || !Number.isFinite(c) ? '–' : `${(100 * c).toFixed(c < 1 && c > 0.999 ? 2 : 1)}%`);
/** The grader's balanced accuracy, and where items went unanswered the figure that ranks (unanswered counted as wrong). */
const withAll = (v: number | null, all: number | null): string => (all !== null && v !== null && Math.abs(all - v) > 1e-12 ? `${f4(v)} (${f4(all)} all)` : f4(v));

const ci = (c: [number, number] | null | undefined): string => (c ? ` [${f3(c[0])}, ${f3(c[1])}]` : '');
/** A gap's bootstrap: its interval, p-value and how it was drawn. */
const gapCi = (d: Difference | null | undefined): string =>
  d === undefined
    ? ''
    : d === null
      ? ' (no interval: a side has no parsable answer)'
      : ` [${signed(d.ci_lo)}, ${signed(d.ci_hi)}] p ${d.p < 0.001 ? '< 0.001' : `= ${d.p.toFixed(3)}`} (${d.paired ? `paired, ${nClips(d.clips)}` : `two-sample, ${nClips(d.clips)}`})`;

/** Coverage, and where items went unanswered the balanced accuracy with them counted as wrong. */
const answeredCell = (c: CoveredGroup | null | undefined): string => (!c ? '–' : c.answered === c.total ? cov(1) : `${cov(c.coverage)} (BAcc ${f3(c.balanced_acc_all)} all)`);

/** The gaps worth a line: every domain gap; a method difference only where the two methods' figures differ. */
const shownGaps = (gaps: readonly DomainGap[]): DomainGap[] =>
  gaps.filter((g) => g.kind !== 'method' || Math.abs(g.balanced_acc) > 1e-12 || (g.subset_balanced_acc !== null && Math.abs(g.subset_balanced_acc) > 1e-12));

/** The per-domain table as plain text (the CLI prints it). */
export function domainLines(r: Report): string[] {
  const d = r.domains;
  // Each run's protocol first: runs made with other frames, questions or methods do not compare as equals.
  const runLines = r.runs.map((x) => `run ${x.name}: ${x.protocol ?? 'protocol unknown (no run record)'}, ${x.n_clips} clip${x.n_clips === 1 ? '' : 's'}`);
  const head = ['domain', 'runs', 'clips', 'BAcc 6q', 'acc 6q', 'F1 6q', 'BAcc all', 'acc all', 'F1 all', 'questions', 'answered 6q', 'answered all'];
  const rows = d.rows.map((x) => [
    x.domain,
    x.runs.join(' = '),
    String(x.clips),
    f3(x.subset?.balanced_acc ?? NaN) + ci(x.subset_ci),
    f3(x.subset?.accuracy ?? NaN),
    f3(x.subset?.macro_f1 ?? NaN),
    f3(x.all.balanced_acc) + ci(x.all_ci),
    f3(x.all.accuracy),
    f3(x.all.macro_f1),
    String(x.questions),
    answeredCell(x.subset_coverage),
    answeredCell(x.all_coverage),
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (c: string[]) => c.map((v, i) => (i < 2 ? v.padEnd(w[i]) : v.padStart(w[i]))).join('  ').trimEnd();
  const boot = d.bootstrap ? [`intervals: ${Math.round(100 * d.bootstrap.confidence)}% clip-level bootstrap, ${d.bootstrap.n} draws, seed ${d.bootstrap.seed}`] : [];
  const cover = d.rows.some((x) => x.all_coverage.answered < x.all_coverage.total) ? ['answered: answered/gradable items; the grader leaves the unanswered out of BAcc ("all": counted as wrong)'] : [];
  const out = [...runLines, ...boot, line(head), ...rows.map(line), ...cover];
  for (const g of shownGaps(d.gaps)) {
    out.push(`${g.kind === 'method' ? 'method difference' : 'gap'} ${g.a} − ${g.b}: balanced accuracy ${signed(g.subset_balanced_acc)}${gapCi(g.subset_diff)} (6 questions), ${signed(g.balanced_acc)}${gapCi(g.diff)} (all)`);
  }
  const hidden = d.gaps.length - shownGaps(d.gaps).length;
  if (hidden) out.push(`(${hidden} method pair${hidden === 1 ? '' : 's'} with the same balanced accuracies not shown)`);
  return out;
}

/** The leaderboard placement as plain text: one line per run and the neighbourhood table. */
export function placementLines(lb: LeaderboardPlacement, context: number): string[] {
  const out = [`leaderboard ${lb.file}: ${lb.n_published} published rows + ${lb.rows.length} egogeo row${lb.rows.length === 1 ? '' : 's'} (rank 1 = best)`];
  for (const p of lb.placements) {
    out.push(
      `  ${p.model}: coverage ${cov(p.coverage)}; balanced_acc ${withAll(p.balanced_acc, p.balanced_acc_all)}${ci4(p.ci?.balanced_acc)} rank ${rk(p.rank.balanced_acc)}; nuScenes ${withAll(p.src_nuscenes_balanced_acc, p.src_nuscenes_balanced_acc_all)}${ci4(p.ci?.src_nuscenes_balanced_acc)} rank ${rk(p.rank.src_nuscenes_balanced_acc)}; ` +
        `CARLA ${withAll(p.src_carla_balanced_acc, p.src_carla_balanced_acc_all)}${ci4(p.ci?.src_carla_balanced_acc)} rank ${rk(p.rank.src_carla_balanced_acc)}; ${rk(p.rank_same_questions)} among rows answering the same ${p.questions} questions`,
    );
    if (p.subset) out.push(`    on the ${p.subset.questions} questions of the rows marked †: balanced_acc ${f4(p.subset.balanced_acc)} (nuScenes ${f4(p.subset.src_nuscenes_balanced_acc)}, CARLA ${f4(p.subset.src_carla_balanced_acc)}), rank ${rk(p.subset.rank)} among them`);
  }
  const head = ['rank', 'model', 'n_total', 'q', 'coverage', 'BAcc', 'nuScenes', 'CARLA'];
  const rows = neighbourhood(lb.ranking, context).map((x) =>
    x === null
      ? ['…', '', '', '', '', '', '', '']
      : [String(x.rank), `${x.model}${x.egogeo ? '  ◀' : ''}`, x.n_total === null ? '–' : String(x.n_total), `${x.questions}${x.same_questions ? '' : '†'}`, cov(x.coverage), withAll(x.balanced_acc, x.rank_balanced_acc) + ci4(x.ci?.balanced_acc), f4(x.src_nuscenes_balanced_acc) + ci4(x.ci?.src_nuscenes_balanced_acc), f4(x.src_carla_balanced_acc) + ci4(x.ci?.src_carla_balanced_acc)],
  );
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (c: string[]) => `  ${c.map((v, i) => (i === 1 ? v.padEnd(w[i]) : v.padStart(w[i]))).join('  ')}`.trimEnd();
  out.push(line(head), ...rows.map(line));
  const other = Object.entries(lb.other_questions);
  if (other.length) out.push(`  † answers other questions than egogeo's rows (${other.map(([q, n]) => `${n} row${n === 1 ? '' : 's'} with ${q}`).join(', ')}): its pooled balanced accuracy is over other questions`);
  out.push(`  coverage: answered / gradable items; BAcc: the published grader's (answered items only); "(x all)": the unanswered counted as wrong, what egogeo's rows rank by`);
  for (const n of lb.notes) out.push(`  ${n}`);
  return out;
}

function leaderboardMarkdown(lb: LeaderboardPlacement, context: number, pngs: boolean): string[] {
  const L: string[] = ['## On the leaderboard', ''];
  L.push(
    `Each run is one leaderboard row, made as the reference's \`build_leaderboard.py\` makes one (the published grader; per source by clip id: \`clip_*\` nuScenes, else CARLA), placed among the ${lb.n_published} rows of \`${cell(lb.file)}\`. Rank 1 = best; rows with the same value share a rank. Coverage: the answered share of the gradable items; the grader leaves the unanswered out of balanced accuracy, so egogeo's rows rank by the figure with them counted as wrong ("all", shown where it differs); the published rows rank by their published figure.`,
    '',
  );
  L.push('| run | questions | predictions | coverage | balanced acc. | rank | nuScenes BAcc | rank | CARLA BAcc | rank | rank among the same questions |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const p of lb.placements) {
    L.push(`| **${cell(p.model)}** | ${p.questions} | ${p.n_total} | ${cov(p.coverage)} | ${withAll(p.balanced_acc, p.balanced_acc_all)}${ci4(p.ci?.balanced_acc)} | ${rk(p.rank.balanced_acc)} | ${withAll(p.src_nuscenes_balanced_acc, p.src_nuscenes_balanced_acc_all)}${ci4(p.ci?.src_nuscenes_balanced_acc)} | ${rk(p.rank.src_nuscenes_balanced_acc)} | ${withAll(p.src_carla_balanced_acc, p.src_carla_balanced_acc_all)}${ci4(p.ci?.src_carla_balanced_acc)} | ${rk(p.rank.src_carla_balanced_acc)} | ${rk(p.rank_same_questions)} |`);
  }
  for (const p of lb.placements) {
    if (p.subset) L.push('', `${cell(p.model)} on the ${p.subset.questions} questions of the rows marked † (the published grader over those answers only): balanced accuracy **${f4(p.subset.balanced_acc)}** (nuScenes ${f4(p.subset.src_nuscenes_balanced_acc)}, CARLA ${f4(p.subset.src_carla_balanced_acc)}), rank **${rk(p.subset.rank)}** among those rows.`);
  }
  L.push('', Number.isFinite(context) ? `The neighbourhood (${context} published rows either side; all rows in report.json):` : 'All rows:', '');
  L.push('| rank | model | n_total | questions | coverage | accuracy | balanced acc. | macro F1 | nuScenes BAcc | CARLA BAcc |', '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const x of neighbourhood(lb.ranking, context)) {
    if (x === null) {
      L.push('| … | | | | | | | | | |');
      continue;
    }
    const m = (s: string) => (x.egogeo ? `**${s}**` : s);
    L.push(`| ${m(String(x.rank))} | ${m(cell(x.model))} | ${x.n_total ?? '–'} | ${x.questions}${x.same_questions ? '' : ' †'} | ${cov(x.coverage)} | ${f4(x.accuracy)} | ${m(withAll(x.balanced_acc, x.rank_balanced_acc))}${ci4(x.ci?.balanced_acc)} | ${f4(x.macro_f1)} | ${f4(x.src_nuscenes_balanced_acc)}${ci4(x.ci?.src_nuscenes_balanced_acc)} | ${f4(x.src_carla_balanced_acc)}${ci4(x.ci?.src_carla_balanced_acc)} |`);
  }
  L.push('');
  const other = Object.entries(lb.other_questions);
  if (other.length) {
    L.push(`† answers other questions than egogeo's rows (${other.map(([q, n]) => `${n} row${n === 1 ? '' : 's'} with ${q} questions`).join(', ')}): the geometric baselines answer the 6-question subset, the VLMs all 14, so pooled balanced accuracies over different question sets do not compare directly; the last column of the first table ranks each run among the rows that answer the same questions.`, '');
  }
  for (const n of lb.notes) L.push(`> ${n}`, '');
  L.push(`![leaderboard](leaderboard.${pngs ? 'png' : 'svg'})`, '');
  return L;
}

const ERROR_LABELS: [ErrorKey, string][] = [
  ['ate_se3', 'ATE SE(3) m'],
  ['ate_sim3', 'ATE Sim(3) m'],
  ['rpe_trans', 'RPE m/0.1 s'],
  ['rpe_rot', 'RPE rad/0.1 s'],
  ['yaw_rate_rmse', 'yaw-rate RMSE rad/s'],
  ['speed_rmse', 'speed RMSE m/s'],
  ['accel_rmse', 'accel RMSE m/s²'],
];

export function plots(r: Report, leaderboardRows = 3): Record<string, string> {
  // What the figures show, in their titles: the run's protocol (one run) or how many runs, and clips.
  const protocols = [...new Set(r.runs.map((x) => x.protocol ?? 'protocol unknown'))];
  const what = `${protocols.length === 1 ? protocols[0] : `${r.runs.length} runs`}, ${nClips(r.n_clips)}`;
  const sources = Object.keys(r.per_source);
  const qs = Object.keys(r.per_question);
  // A bar pooling every domain, but never several methods (the domains' own bars say it per method).
  const pooledBar = sources.length > 1 && r.methods.length <= 1;
  const lb = r.leaderboard ? (neighbourhood(r.leaderboard.ranking, leaderboardRows).filter((x) => x !== null) as RankedRow[]) : [];
  return {
    ...(r.leaderboard
      ? {
          'leaderboard.svg': barChart(
            lb.map((x) => `${x.egogeo ? '▶ ' : ''}${x.model}${x.same_questions ? '' : ' †'} (${x.rank})`),
            ['balanced accuracy', 'nuScenes', 'CARLA'],
            lb.map((x) => [x.balanced_acc, x.src_nuscenes_balanced_acc ?? NaN, x.src_carla_balanced_acc ?? NaN]),
            {
              title: `On the leaderboard (▶ egogeo: ${what}; † other questions)${lb.some((x) => x.ci) && r.bootstrap ? `, egogeo's ${Math.round(100 * r.bootstrap.confidence)}% bootstrap intervals` : ''}`,
              axis: 'balanced accuracy',
              labels: true,
              ...(lb.some((x) => x.ci) ? { intervals: lb.map((x) => [x.ci?.balanced_acc ?? null, x.ci?.src_nuscenes_balanced_acc ?? null, x.ci?.src_carla_balanced_acc ?? null]) } : {}),
            },
          ),
        }
      : {}),
    'per_question.svg': barChart(
      qs,
      pooledBar ? ['all', ...sources] : sources,
      qs.map((q) => [...(pooledBar ? [r.per_question[q].balanced_acc] : []), ...sources.map((s) => r.per_source[s].per_question[q]?.balanced_acc ?? NaN)]),
      {
        title: `Balanced accuracy per question — ${r.name} (${what})${r.bootstrap && pooledBar ? `, ${Math.round(100 * r.bootstrap.confidence)}% bootstrap intervals` : ''}`,
        axis: 'balanced accuracy',
        labels: true,
        // The pooled column's intervals (every domain): the first series.
        ...(r.bootstrap && pooledBar ? { intervals: qs.map((q) => { const g = r.bootstrap!.per_question[q]; return [g ? [g.balanced_acc_ci_lo, g.balanced_acc_ci_hi] as [number, number] : null]; }) } : {}),
      },
    ),
    'per_source.svg': barChart(
      r.domains.rows.map((d) => `${d.domain} (${nClips(d.clips)})`),
      ['balanced accuracy, 6 questions', 'balanced accuracy, all'],
      r.domains.rows.map((d) => [d.subset?.balanced_acc ?? NaN, d.all.balanced_acc]),
      {
        title: `Per domain — ${r.name} (${what})${r.domains.bootstrap ? `, ${Math.round(100 * r.domains.bootstrap.confidence)}% bootstrap intervals` : ''}`,
        labels: true,
        ...(r.domains.bootstrap ? { intervals: r.domains.rows.map((d) => [d.subset_ci ?? null, d.all_ci ?? null]) } : {}),
      },
    ),
    'disagreements.svg': barChart(
      qs,
      [...(r.label_audit ? ['noise-decided'] : []), 'near threshold', 'error', 'no ground truth'],
      qs.map((q) => [...(r.label_audit ? [r.per_question[q].noise_decided] : []), r.per_question[q].near_threshold, r.per_question[q].errors, r.per_question[q].unknown]),
      {
        title: `Disagreements over ${nClips(r.n_clips)} (near: either value within ${pct(r.near_threshold)} of the threshold)`,
        stacked: true,
        labels: true,
        axis: 'clips',
        colors: [...(r.label_audit ? ['#76b7b2'] : []), '#edc948', '#e15759', '#bab0ac'],
      },
    ),
    'feature_errors.svg': scatterPanels(
      qs.flatMap((q) => (r.feature_errors[q] ?? []).map((f) => ({ title: q, subtitle: `${f.feature}: median ratio ${f.median_ratio.toPrecision(3)}`, points: f.points.map((p) => [p.truth, p.estimate] as [number, number]), threshold: f.threshold }))),
      `Deciding values, estimate against ground truth (${nClips(r.trajectory_errors.n_clips)}; dashed: threshold; grey: y = x)`,
    ),
    'trajectories.svg': trajectoryPanels(
      // One panel per clip and domain (report.ts): the domain without the run that split it fits the panel.
      r.worst.map((w) => ({ title: `${w.clip_id} (${baseDomain(w.source)}) ATE ${w.ate_se3.toFixed(2)} m`, gt: w.gt, estimate: w.estimate })),
      `Ground truth vs estimate — the ${r.worst.length === 1 ? "clip" : `${r.worst.length} clips`} with the largest ATE`,
    ),
  };
}

/** The pooled bootstrap: balanced accuracy and WPCR per domain, balanced accuracy per question, with intervals. */
function bootstrapMarkdown(b: NonNullable<Report['bootstrap']>): string[] {
  const iv = (v: number, lo: number, hi: number) => `${f3(v)} [${f3(lo)}, ${f3(hi)}]`;
  const L = ['## Intervals', '', `${Math.round(100 * b.confidence)}% clip-level bootstrap over every domain's clips (${b.n} draws, seed ${b.seed}), as \`egogeo grade --bootstrap\`; a domain's figures from the drawn clips of that domain.`, ''];
  L.push('| | clips | balanced acc. | WPCR |', '| --- | ---: | ---: | ---: |');
  L.push(`| all domains | ${b.clips} | ${iv(b.balanced_acc, b.balanced_acc_ci_lo, b.balanced_acc_ci_hi)} | ${iv(b.wpcr, b.wpcr_ci_lo, b.wpcr_ci_hi)} |`);
  for (const [d, g] of Object.entries(b.per_source)) L.push(`| ${cell(d)} | ${g.clips} | ${iv(g.balanced_acc, g.balanced_acc_ci_lo, g.balanced_acc_ci_hi)} | ${iv(g.wpcr, g.wpcr_ci_lo, g.wpcr_ci_hi)} |`);
  for (const [q, g] of Object.entries(b.per_question)) L.push(`| ${q} | ${g.clips} | ${iv(g.balanced_acc, g.balanced_acc_ci_lo, g.balanced_acc_ci_hi)} | |`);
  L.push('');
  return L;
}

/** Coverage in a few words: "all answered", or the share and the figure with the unanswered counted as wrong. */
const answeredShort = (c: CoveredGroup): string => (c.answered === c.total ? 'every item answered' : `${c.answered}/${c.total} items answered; ${f3(c.balanced_acc_all)} with the unanswered counted as wrong`);

/** "1 clip", "45 clips". */
const nClips = (n: number): string => `${n} clip${n === 1 ? '' : 's'}`;

export function markdown(r: Report, pngs: boolean, leaderboardRows = 3): string {
  const L: string[] = [];
  const sources = Object.keys(r.per_source);
  L.push(`# Report: ${r.name}`, '');
  if (r.methods.length > 1) {
    // Several methods: one headline each (pooling them would average unlike things).
    L.push(`${r.n_records} predictions over ${r.n_clips} clips of ${r.runs.length} runs, ${r.methods.length} methods (each domain counted once per method):`, '');
    for (const m of r.methods) L.push(`- **${cell(m.method)}** (${cell(m.runs.join(', '))}; ${nClips(m.clips)}): balanced accuracy **${f3(m.overall.balanced_acc)}** (${answeredShort(m.coverage)}), macro F1 ${f3(m.overall.macro_f1)}, accuracy ${f3(m.overall.accuracy)}`);
    L.push('');
  } else {
    L.push(`${r.n_records} predictions over ${r.n_clips} clips${r.runs.length > 1 ? ` of ${r.runs.length} runs (each domain counted once)` : ''}; pooled balanced accuracy **${f3(r.overall.balanced_acc)}** (${answeredShort(r.coverage)}), macro F1 ${f3(r.overall.macro_f1)}, accuracy ${f3(r.overall.accuracy)}.`, '');
  }
  for (const n of r.notes) L.push(`> ${n}`, '');

  L.push('| run | file | named by | protocol | CARLA domain | clips | predictions |', '| --- | --- | --- | --- | --- | ---: | ---: |');
  for (const x of r.runs) L.push(`| ${cell(x.name)} | ${cell(x.file)} | ${x.name_from} | ${x.protocol ?? '–'} | ${x.carla_domain ?? '–'} | ${x.n_clips} | ${x.n_records} |`);
  L.push('');
  L.push('## Per domain', '');
  L.push(`Graded with the benchmark's grader, pooled over the 6 questions every published geometric baseline answers (${r.domains.subset.join(', ')}) and over all questions present.`, '');
  L.push('| domain | runs | clips | predictions | BAcc, 6 q. | accuracy, 6 q. | macro F1, 6 q. | BAcc, all | accuracy, all | macro F1, all | answered, 6 q. | answered, all |', '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const d of r.domains.rows) {
    L.push(`| ${cell(d.domain)} | ${cell(d.runs.join(' = '))} | ${d.clips} | ${d.all.n} | ${f3(d.subset?.balanced_acc ?? NaN)}${ci(d.subset_ci)} | ${f3(d.subset?.accuracy ?? NaN)} | ${f3(d.subset?.macro_f1 ?? NaN)} | ${f3(d.all.balanced_acc)}${ci(d.all_ci)} | ${f3(d.all.accuracy)} | ${f3(d.all.macro_f1)} | ${answeredCell(d.subset_coverage)} | ${answeredCell(d.all_coverage)} |`);
  }
  L.push('', 'Answered: the share of gradable items with a parsable answer; the grader leaves the rest out of every figure, so where it is below 100% the balanced accuracy with them counted as wrong ("all") stands beside it.');
  L.push('');
  if (r.domains.bootstrap) L.push(`Intervals: ${Math.round(100 * r.domains.bootstrap.confidence)}% clip-level bootstrap (${r.domains.bootstrap.n} draws, seed ${r.domains.bootstrap.seed}; \`scripts/bootstrap_confidence.py\`'s resampling); a gap's is paired when both sides hold the same clips, else two-sample, with a two-sided p-value for no difference.`, '');
  const hiddenGaps = r.domains.gaps.length - shownGaps(r.domains.gaps).length;
  if (hiddenGaps) L.push(`${hiddenGaps} method pair${hiddenGaps === 1 ? '' : 's'} with the same balanced accuracies (different answers, the same figures) not listed.`, '');
  for (const g of shownGaps(r.domains.gaps)) {
    L.push(`- ${g.kind === 'method' ? 'Method difference' : 'Gap'} ${cell(g.a)} − ${cell(g.b)}: balanced accuracy **${signed(g.subset_balanced_acc)}**${gapCi(g.subset_diff)} (6 questions), ${signed(g.balanced_acc)}${gapCi(g.diff)} (all questions).`);
  }
  if (r.domains.gaps.length) L.push('');
  for (const g of r.gaps) L.push(`Largest gap in ${g.metric === 'balanced_acc' ? 'balanced accuracy' : 'macro F1'} (all questions): **${f3(g.gap)}** (${g.best} ${f3(r.per_source[g.best][g.metric])} vs ${g.worst} ${f3(r.per_source[g.worst][g.metric])}).`);
  if (r.gaps.length) L.push('');
  L.push(`![per domain](per_source.${pngs ? 'png' : 'svg'})`, '');
  if (r.bootstrap) L.push(...bootstrapMarkdown(r.bootstrap));
  if (r.leaderboard) L.push(...leaderboardMarkdown(r.leaderboard, leaderboardRows, pngs));

  L.push('## Per question: the oracle against the estimated trajectories', '');
  L.push(
    `Agreement of the oracle's labels (ground truth) with the labels the same oracle gives the estimated trajectories; every disagreement is ${r.label_audit ? `*noise-decided* when the oracle label itself flips in at least ${pct(r.label_audit.noise_decided_share)} of the ground-truth noise draws at its source's level (\`egogeo audit labels\`, ${cell(r.label_audit.file)}), else ` : ''}a *near-threshold* case when the deciding value of the ground truth or of the estimate lies within ${pct(r.near_threshold)} of its threshold, else an *error*.${r.label_audit ? ` The noise ceiling is the balanced accuracy of the ground truth's own labels under that noise against the oracle's, over these clips: what an estimator whose errors are the ground truth's own jitter scores. Levels: ${Object.entries(r.label_audit.levels).map(([s, l]) => `${s} ${l.key} (${l.basis})`).join(', ')}.` : ''}${r.cross_check_left_out.length ? ` Left out (no trajectory): ${r.cross_check_left_out.map(cell).join(', ')}.` : ''}`,
    '',
  );
  const qs = Object.keys(r.per_question);
  const au = r.label_audit !== null;
  L.push(`| question | n | agreement | balanced acc. | ${au ? 'noise ceiling | ' : ''}macro F1 | ${sources.length > 1 ? `${sources.map((s) => `BAcc ${s}`).join(' | ')} | ` : ''}disagree | ${au ? 'noise-decided | ' : ''}near thr. | errors |`);
  L.push(`| --- | ---: | ---: | ---: | ${au ? '---: | ' : ''}---: | ${sources.length > 1 ? sources.map(() => '---: | ').join('') : ''}---: | ${au ? '---: | ' : ''}---: | ---: |`);
  for (const q of qs) {
    const c = r.per_question[q];
    const per = sources.length > 1 ? `${sources.map((s) => f3(r.per_source[s].per_question[q]?.balanced_acc ?? NaN)).join(' | ')} | ` : '';
    L.push(`| ${q} | ${c.n} | ${pct(c.agreement)} | ${f3(c.balanced_acc)} | ${au ? `${c.noise_ceiling === null ? '–' : f3(c.noise_ceiling)} | ` : ''}${f3(c.macro_f1)} | ${per}${c.disagreements} | ${au ? `${c.noise_decided} | ` : ''}${c.near_threshold} | ${c.errors}${c.unknown ? ` (+${c.unknown} unknown)` : ''} |`);
  }
  if (r.ceiling_checks.length) L.push('', ...ceilingMarkdown(r.ceiling_checks));
  const fe = qs.flatMap((q) => (r.feature_errors[q] ?? []).map((f) => ({ q, ...f })));
  if (fe.length) {
    L.push('', '### Signed errors of the deciding values', '');
    L.push("Each question's deciding value on the estimate against the ground truth's, over the clips with both trajectories: the median ratio estimate / truth, the bias (mean of estimate − truth) and its spread (standard deviation). A ratio far from 1 or a bias beyond the spread is a systematic lean, not noise.", '');
    L.push('| question | deciding value | clips | threshold | median ratio | bias | spread |', '| --- | --- | ---: | ---: | ---: | ---: | ---: |');
    for (const f of fe) L.push(`| ${f.q} | ${cell(f.feature)} | ${f.n} | ${f3(f.threshold)} | ${f3(f.median_ratio)} | ${signed(f.bias)} | ${f3(f.spread)} |`);
    L.push('', `![signed errors](feature_errors.${pngs ? 'png' : 'svg'})`);
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
  const noisy = r.disagreements.filter((d) => d.kind === 'noise-decided');
  const unknown = r.disagreements.length - near.length - errs.length - noisy.length;
  L.push('### Disagreements', '');
  const share = (k: keyof Report['class_shares']) => ` (${pct(r.class_shares[k])})`;
  L.push(`${r.disagreements.length} in all: ${r.label_audit ? `${noisy.length} noise-decided${share('noise-decided')}, ` : ''}${near.length} near-threshold${share('near-threshold')}, ${errs.length} errors${share('error')}${unknown ? `, ${unknown} without ground truth${share('unknown')}` : ''}. The largest errors (all in report.json):`, '');
  if (errs.length) {
    L.push('| clip | source | question | oracle | estimate | deciding value | ground truth | estimate | threshold | distance (truth) | distance (estimate) |', '| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |');
    for (const d of errs.slice(0, 25)) {
      const m = d.margin!;
      L.push(`| ${d.clip_id} | ${d.source} | ${d.question_id} | ${d.oracle_label} | ${d.model_answer ?? '–'} | ${cell(m.feature)} | ${f3(m.value)} | ${m.estimate === null ? '–' : f3(m.estimate)} | ${f3(m.threshold)} | ${pct(m.rel)} | ${m.estimate_rel === null ? '–' : pct(m.estimate_rel)} |`);
    }
    L.push('');
  }

  const verdicts = Object.entries(r.quality);
  if (verdicts.length > 0) {
    L.push('## Estimate quality per source', '');
    L.push("Each clip's verdict from what the engine could measure (`src/vo/quality.ts`): *failed* — the metric scale collapsed (its scale-dependent answers rest on what the estimate could measure; a run made with \`--abstain\` withheld them); *weak* — the engine's own uncertainty says the speeds may be off (the smoother's mean relative speed sigma above 7.5%, or the two tracking sizes more than a third apart).", '');
    L.push('| source | ok | weak | failed |', '| --- | ---: | ---: | ---: |');
    for (const [s, q] of verdicts) L.push(`| ${s} | ${q.ok} | ${q.weak} | ${q.failed} |`);
    const failed = verdicts.flatMap(([s, q]) => q.flagged.filter((f) => f.verdict === 'failed').map((f) => ({ s, ...f })));
    if (failed.length > 0) {
      L.push('', '| failed clip | source | why |', '| --- | --- | --- |');
      for (const f of failed.slice(0, 40)) L.push(`| ${f.clip_id} | ${f.s} | ${f.reasons.join('; ')} |`);
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
    const clips = r.trajectory_errors.per_clip.slice().sort((a, b) => b.accel_rmse - a.accel_rmse || a.clip_id.localeCompare(b.clip_id));
    const shown = clips.slice(0, 40);
    L.push('', '### Speed and acceleration per clip', '');
    L.push(`RMSE of the oracle's speed and acceleration arrays against the ground truth, largest acceleration error first${clips.length > shown.length ? ` (${shown.length} of ${clips.length} clips; report.json has all)` : ''}.`, '');
    L.push('| clip | source | speed RMSE m/s | accel RMSE m/s² |', '| --- | --- | ---: | ---: |');
    for (const c of shown) L.push(`| ${c.clip_id} | ${c.source} | ${f3(c.speed_rmse)} | ${f3(c.accel_rmse)} |`);
    L.push('', `![trajectories](trajectories.${pngs ? 'png' : 'svg'})`, '');
  }
  return `${L.join('\n')}\n`;
}

/** Writes the report files into `dir`; returns their names. */
export async function writeReport(r: Report, dir: string, o: { leaderboardRows?: number } = {}): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const written = await writePlots(dir, plots(r, o.leaderboardRows));
  const pngs = written.some((f) => f.endsWith('.png'));
  writeFileSync(join(dir, 'report.md'), markdown(r, pngs, o.leaderboardRows));
  writeFileSync(join(dir, 'report.json'), `${JSON.stringify(r, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 1)}\n`);
  written.push('report.md', 'report.json');
  return written;
}

/** The check of each run against the label audit's ceilings (report/ceilings.ts). */
function ceilingMarkdown(checks: readonly CeilingCheck[]): string[] {
  const L: string[] = ['### Ceiling check', ''];
  L.push(
    `Each run's balanced accuracy with its clip-level bootstrap interval (${CHECK_BOOTSTRAP.n} draws unless \`--bootstrap\` says otherwise) against the label audit's ceilings over the same clips: the noise ceiling (the ground truth's labels under its own jitter) and the sampling ceiling of the run's frames (the truth kept at them, a natural spline between; the engine's densifier beside it). An interval wholly above a ceiling (above the noise ceiling's spread over its draws, their ${DRAW_QUANTILE * 100}th percentile) beats it: that ceiling is no bound, and the line says why.`,
    '',
  );
  for (const c of checks) {
    const sampled = c.rows.find((r) => r.sampling)?.sampling;
    const hows = sampled ? Object.keys(sampled) : [];
    L.push(`**${cell(c.run)}** (${c.frames === undefined ? 'frames unknown' : c.frames === null ? 'all frames' : `${c.frames} frames`}, ${c.n_clips} clips in the audit)`, '');
    L.push(`| question | balanced acc. | interval | noise ceiling | its draws up to | ${hows.map((h) => `sampling (${h}) | `).join('')}verdict |`, `| --- | ---: | ---: | ---: | ---: | ${hows.map(() => '---: | ').join('')}--- |`);
    for (const r of c.rows) {
      const name = r.scope === 'all' ? '**all questions (pooled)**' : r.scope === 'subset' ? '**6-question subset (pooled)**' : r.scope;
      const verdict = r.beaten.length ? r.beaten.map((k) => `ceiling beaten (${k})`).join(', ') : 'under';
      L.push(`| ${name} | ${f3(r.balanced_acc)} | [${f3(r.ci[0])}, ${f3(r.ci[1])}] | ${f3(r.noise)} | ${f3(r.noise_hi)} | ${hows.map((h) => `${r.sampling ? f3(r.sampling[h]) : '–'} | `).join('')}${verdict} |`);
    }
    L.push('');
    for (const b of c.beaten) L.push(`- ${b}`);
    if (c.beaten.length) L.push('');
  }
  return L;
}
