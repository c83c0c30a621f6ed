/**
 * `egogeo grade PREDICTIONS.jsonl`: grades model answers exactly as the EgoDyn-Bench reference
 * grader does and prints a table; `--json OUT` writes the reference's metrics JSON (same keys,
 * order and numbers as its `scripts/evaluate.py --output`).
 */
import type { Command } from 'commander';
import { DEFAULT_SEED } from '../../grade/bootstrap.js';
import { InputError } from '../../core/errors.js';
import {
  type BootstrapSummary,
  bootstrapClips,
  bootstrapIntervals,
  coveredGroup,
  evaluate,
  evaluateAnsweredAll,
  metricsToJson,
  sortCodePoints,
  type GradeMetrics,
  type GroupMetrics,
} from '../../grade/index.js';
import { readPredictions } from '../../io/predictions.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../../oracle/questions.js';
import { writeFileAtomic } from '../../io/atomic.js';
import { guardOutputs } from '../../io/safety.js';
import { GEOMETRIC_SUBSET } from '../../baseline/baseline.js';
import { intIn } from '../options.js';

interface GradeOpts {
  json?: string;
  config?: string;
  bootstrap?: string;
  seed: string;
}

const f4 = (x: number): string => x.toFixed(4);

/** A group's row: the grader's figures, then its coverage (answered/gradable) and balanced accuracy with the unanswered counted as wrong. */
function groupRow(name: string, g: GroupMetrics, all: GroupMetrics | undefined, width: number): string {
  const c = coveredGroup(g, all);
  return `${name.padEnd(width)}  ${f4(g.accuracy).padStart(8)}  ${f4(g.balanced_acc).padStart(8)}  ${f4(g.macro_f1).padStart(8)}  ${String(g.n).padStart(7)}  ${`${c.answered}/${c.total}`.padStart(11)}  ${f4(c.balanced_acc_all).padStart(12)}`;
}

/**
 * The human-readable report printed to stdout. `all`: the same records graded with the unanswered
 * counted as wrong (`evaluateAnsweredAll`; `allSubset` likewise for `subset`), for the coverage and
 * bal.acc (all) columns; without it those columns read as if everything were answered.
 */
export function formatReport(file: string, m: GradeMetrics, subset?: GradeMetrics, all?: GradeMetrics, allSubset?: GradeMetrics): string {
  const out: string[] = [];
  out.push(`${file}: ${m.n_total} predictions, ${m.n_parsed} parsed (parsable coverage ${f4(m.parsable_coverage)})`);
  out.push('');
  const rows: [string, GroupMetrics, GroupMetrics | undefined][] = [
    ['global', m.global, all?.global],
    // The published grader over the 6 geometric questions only: the figure the geometric rows report.
    ...(subset ? [['6-question subset', subset.global, allSubset?.global] as [string, GroupMetrics, GroupMetrics | undefined]] : []),
    ['temporal', m.temporal, all?.temporal],
    ...sortCodePoints(Object.keys(m.per_category)).map((c): [string, GroupMetrics, GroupMetrics | undefined] => [`category ${c}`, m.per_category[c], all?.per_category[c]]),
    ...sortCodePoints(Object.keys(m.per_question)).map((q): [string, GroupMetrics, GroupMetrics | undefined] => [`question ${q}`, m.per_question[q], all?.per_question[q]]),
    ...sortCodePoints(Object.keys(m.per_source)).map((s): [string, GroupMetrics, GroupMetrics | undefined] => [`source ${s}`, m.per_source[s], all?.per_source[s]]),
  ];
  // Groups with no answered item at all (every answer unanswered) are missing from the grader's figures.
  if (all) {
    const have = new Set(rows.map(([n]) => n));
    for (const q of sortCodePoints(Object.keys(all.per_question))) if (!have.has(`question ${q}`)) rows.push([`question ${q}`, { accuracy: 0, balanced_acc: 0, macro_f1: 0, n: 0 }, all.per_question[q]]);
  }
  const width = Math.max(16, ...rows.map(([n]) => n.length), ...Object.keys(m.consistency.per_rule).map((r) => r.length));
  out.push(`${''.padEnd(width)}  ${'accuracy'.padStart(8)}  ${'bal.acc'.padStart(8)}  ${'macro-F1'.padStart(8)}  ${'n'.padStart(7)}  ${'answered'.padStart(11)}  ${'bal.acc(all)'.padStart(12)}`);
  for (const [name, g, a] of rows) out.push(groupRow(name, g, a, width));
  out.push('');
  out.push(`bal.acc: the published grader's (answered items only); answered: answered/gradable; bal.acc(all): the unanswered counted as wrong (what ranks an abstaining run)`);
  out.push('');
  out.push(
    `${'consistency'.padEnd(width)}  ${'EMCR'.padStart(8)}  ${'WPCR'.padStart(8)}  ${'mean compl.'.padStart(11)}  ${'rules hit'.padStart(9)}  ${'evaluable/clips'.padStart(15)}`,
  );
  const cons: [string, GradeMetrics['consistency']][] = [
    ['all clips', m.consistency],
    ...sortCodePoints(Object.keys(m.per_source)).map((s): [string, GradeMetrics['consistency']] => [`source ${s}`, m.per_source[s].consistency]),
  ];
  for (const [name, c] of cons) {
    out.push(
      `${name.padEnd(width)}  ${f4(c.rate).padStart(8)}  ${f4(c.wemcr).padStart(8)}  ${f4(c.mean_compliance).padStart(11)}  ${`${c.n_rules_triggered}/${c.n_rules_total}`.padStart(9)}  ${`${c.n_evaluable}/${c.n_clips}`.padStart(15)}`,
    );
  }
  out.push('');
  out.push(`${'rule (all clips)'.padEnd(width)}  ${'applicable'.padStart(10)}  ${'violations'.padStart(10)}  ${'compliance'.padStart(10)}`);
  for (const [name, r] of Object.entries(m.consistency.per_rule)) {
    out.push(`${name.padEnd(width)}  ${String(r.n_applicable).padStart(10)}  ${String(r.n_violations).padStart(10)}  ${f4(r.compliance).padStart(10)}`);
  }
  return `${out.join('\n')}\n`;
}

const interval = (v: number, lo: number, hi: number): string => `${f4(v)} [${f4(lo)}, ${f4(hi)}]`;

/** The bootstrap intervals as a table: pooled, per source, per question. */
export function formatBootstrap(b: BootstrapSummary): string {
  const rows: [string, string, string, string][] = [
    ['pooled', interval(b.balanced_acc, b.balanced_acc_ci_lo, b.balanced_acc_ci_hi), interval(b.wpcr, b.wpcr_ci_lo, b.wpcr_ci_hi), String(b.clips)],
    ...Object.entries(b.per_source).map(([s, g]): [string, string, string, string] => [
      `source ${s}`,
      interval(g.balanced_acc, g.balanced_acc_ci_lo, g.balanced_acc_ci_hi),
      interval(g.wpcr, g.wpcr_ci_lo, g.wpcr_ci_hi),
      String(g.clips),
    ]),
    ...Object.entries(b.per_question).map(([q, g]): [string, string, string, string] => [
      `question ${q}`,
      interval(g.balanced_acc, g.balanced_acc_ci_lo, g.balanced_acc_ci_hi),
      '',
      String(g.clips),
    ]),
  ];
  const w = Math.max(16, ...rows.map((r) => r[0].length));
  const pct = Math.round(100 * b.confidence);
  const out = [
    `bootstrap: ${b.n} clip resamples, seed ${b.seed}, ${pct}% intervals (parsed answers only, as scripts/bootstrap_confidence.py)`,
    `${''.padEnd(w)}  ${'bal.acc [lo, hi]'.padEnd(24)}  ${'WPCR [lo, hi]'.padEnd(24)}  ${'clips'.padStart(6)}`,
    ...rows.map(([n, a, c, k]) => `${n.padEnd(w)}  ${a.padEnd(24)}  ${c.padEnd(24)}  ${k.padStart(6)}`),
  ];
  return `${out.join('\n')}\n`;
}

export function registerGrade(program: Command): void {
  program
    .command('grade')
    .description("grade model answers exactly as the EgoDyn-Bench reference grader (accuracy, balanced accuracy, macro F1, consistency)")
    .argument('<PREDICTIONS>', 'predictions JSONL: {clip_id, question_id, category, oracle_label|answer, model_answer[, source]} per line')
    .option('--json <out>', "write the reference's metrics JSON here (atomically)")
    .option('--config <yaml>', 'question file (choices; default: the published EgoDyn-Bench questions)')
    .option('--bootstrap <N>', 'clip-level bootstrap: 95% intervals of balanced accuracy and WPCR from N resamples (the reference uses 1000)')
    .option('--seed <S>', "the bootstrap's random.Random seed", String(DEFAULT_SEED))
    .addHelpText(
      'after',
      `
Answers are parsed with the reference's cascade (exact choice, "_"/space, last line, whole word);
records with an unknown question_id or an unparsable answer count against parsable coverage.
--bootstrap resamples clips as the reference's scripts/bootstrap_confidence.py (same seed, same
intervals); it reads the answers as that script does, leaving unparsable ones out. --json then
carries them under "bootstrap" with the script's field names.
Per source: a record's "source" field if present, else "nuscenes" for clip ids starting with
"clip_" and "carla" for the rest (the reference's rule).`,
    )
    .action((file: string, o: GradeOpts) => {
      const nBoot = o.bootstrap === undefined ? 0 : intIn('--bootstrap', o.bootstrap, 1, 1_000_000);
      const seed = intIn('--seed', o.seed, 0, Number.MAX_SAFE_INTEGER);
      guardOutputs([o.json !== undefined ? { path: o.json, flag: '--json' } : undefined], [file, o.config]);
      const questions = loadQuestions(o.config ?? DEFAULT_QUESTIONS_PATH);
      // As the reference's evaluate.py reads it: malformed lines skipped, incomplete records unparsed.
      const { records, lines, unparsed, skipped } = readPredictions(file, { asReference: true });
      if (skipped.length > 0) {
        process.stderr.write(`egogeo: warning: ${file}:${skipped[0].line}: ${skipped[0].reason}; ${skipped.length} malformed line${skipped.length === 1 ? '' : 's'} skipped, as the reference grader does\n`);
      }
      if (records.length === 0) throw new InputError(`${file}: no prediction records`);
      if (unparsed.length > 0) {
        process.stderr.write(`egogeo: warning: ${file}:${unparsed[0].line}: ${unparsed[0].reason}; ${unparsed.length} record${unparsed.length === 1 ? '' : 's'} counted as unparsed, as the reference grader does\n`);
      }
      let unknown = 0;
      let first = -1;
      for (let i = 0; i < records.length; i++) {
        if (typeof records[i].question_id === 'string' && !questions.byId.has(records[i].question_id)) {
          if (first < 0) first = i;
          unknown++;
        }
      }
      if (first >= 0) {
        process.stderr.write(
          `egogeo: warning: ${file}:${lines[first]}: unknown question_id '${records[first].question_id}' ` +
            `(${unknown} record${unknown === 1 ? '' : 's'} with unknown question ids counted as unparsed)\n`,
        );
      }
      // Never silently: duplicate (clip, question) records and oracle labels outside the choices.
      const seen = new Map<string, number>();
      let dups = 0, firstDup = -1, badLabel = 0, firstBad = -1;
      for (let i = 0; i < records.length; i++) {
        const r = records[i];
        const k = `${r.clip_id}\0${r.question_id}`;
        if (seen.has(k)) {
          dups++;
          if (firstDup < 0) firstDup = i;
        } else seen.set(k, i);
        const q = questions.byId.get(r.question_id);
        if (q?.choices && r.oracle_label !== null && !q.choices.includes(String(r.oracle_label).toLowerCase())) {
          badLabel++;
          if (firstBad < 0) firstBad = i;
        }
      }
      if (dups > 0) {
        const r = records[firstDup];
        process.stderr.write(
          `egogeo: warning: ${file}:${lines[firstDup]}: clip '${r.clip_id}' question '${r.question_id}' repeats line ${lines[seen.get(`${r.clip_id}\0${r.question_id}`)!]} ` +
            `(${dups} duplicate record${dups === 1 ? '' : 's'}, each graded as the reference grader does)\n`,
        );
      }
      if (badLabel > 0) {
        const r = records[firstBad];
        process.stderr.write(
          `egogeo: warning: ${file}:${lines[firstBad]}: oracle label '${r.oracle_label}' is not one of question '${r.question_id}''s choices ` +
            `(${questions.byId.get(r.question_id)!.choices!.join(', ')}; ${badLabel} record${badLabel === 1 ? '' : 's'} with such labels, graded as given)\n`,
        );
      }
      const metrics = evaluate(records, questions);
      const boot = nBoot ? bootstrapIntervals(bootstrapClips(records, questions), questions, { n: nBoot, seed }) : undefined;
      if (o.json) writeFileAtomic(o.json, `${metricsToJson(boot ? { ...metrics, bootstrap: boot } : metrics)}\n`);
      const six = new Set<string>(GEOMETRIC_SUBSET);
      const inSubset = records.filter((r) => six.has(r.question_id));
      const answered = new Set(records.map((r) => r.question_id));
      // Only when the file answers more than the 6: otherwise 'global' already is that figure.
      const subset = inSubset.length > 0 && [...answered].some((q) => !six.has(q)) ? evaluate(inSubset, questions) : undefined;
      const all = evaluateAnsweredAll(records, questions);
      process.stdout.write(formatReport(file, metrics, subset, all, subset ? evaluateAnsweredAll(inSubset, questions) : undefined));
      if (boot) process.stdout.write(`\n${formatBootstrap(boot)}`);
    });
}
