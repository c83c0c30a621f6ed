/**
 * `egogeo sensitivity FILE`: label flip rates and the oracle's own consistency under thresholds × α,
 * and with prediction files their accuracy, balanced accuracy and macro F1 against the relabelled
 * oracle and the stability of their ranking (Kendall's τ), as the reference's
 * scripts/threshold_sensitivity.py; with --per-question, one question's thresholds at a time, as its
 * scripts/per_threshold_sensitivity.py, with heatmaps (--plots).
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../core/errors.js';
import { computeConsistency, groupMetrics, parseAnswerFor } from '../../grade/index.js';
import { clipData, DEFAULT_QUESTIONS_PATH, loadQuestions, type QuestionSet } from '../../oracle/index.js';
import { alphaGrid, type OracleConsistency, type ParsedPredictions, type SensitivityReport, sensitivity } from '../../oracle/sensitivity.js';
import { heatmap, writePlots } from '../../report/svg.js';
import { addInputOptions, guardInputOutputs, INPUT_ARG_HELP, INPUT_HELP, type InputOpts, inputPath, labelInput } from '../inputs.js';
import { parseDuration, selectQuestions } from '../options.js';
import { readInputText } from '../../io/safety.js';
import { writeDirAtomic, writeFileAtomic } from '../../io/atomic.js';

interface SensitivityOpts extends InputOpts {
  from: string;
  to: string;
  step: string;
  predictions?: string;
  questions?: string;
  json?: string;
  perQuestion?: boolean;
  plots?: string;
}

const num = (name: string, s: string): number => {
  const v = Number(s);
  if (s.trim() === '' || !Number.isFinite(v) || v <= 0) throw new InputError(`${name} must be a positive number, got '${s}'`);
  return v;
};

/** Display name of a prediction file: its base name without `.jsonl` and a trailing `_answers` (as the reference). */
export function predictionName(path: string): string {
  return basename(path).replace(/\.jsonl$/i, '').replace(/_answers$/, '');
}

/**
 * Reads one prediction file (benchmark JSONL: clip_id, question_id, model_answer, ...; other fields
 * such as oracle_label are not needed here) and parses each answer with the grader.
 */
export function readParsedPredictions(path: string, set: QuestionSet, clipIndex: Map<string, number>): ParsedPredictions {
  let text = readInputText(path, 'predictions JSONL file');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const items: ParsedPredictions['items'][number][] = [];
  const skipped = { unknown_clip: 0, unknown_question: 0, unparsed: 0 };
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const where = `${path}:${i + 1}`;
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line);
    } catch (e) {
      throw new InputError(`${where}: invalid JSON (${(e as Error).message.split('\n')[0].slice(0, 120)})`);
    }
    if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) throw new InputError(`${where}: expected a JSON object with clip_id, question_id, model_answer`);
    for (const f of ['clip_id', 'question_id'] as const) {
      if (rec[f] === undefined) throw new InputError(`${where}: missing field '${f}'`);
      if (typeof rec[f] !== 'string') throw new InputError(`${where}: field '${f}' must be a string, got ${JSON.stringify(rec[f])}`);
    }
    const ma = rec.model_answer;
    if (ma === undefined) throw new InputError(`${where}: missing field 'model_answer'`);
    if (ma !== null && typeof ma !== 'string') throw new InputError(`${where}: field 'model_answer' must be a string or null, got ${JSON.stringify(ma)}`);
    const clip = clipIndex.get(rec.clip_id as string);
    const q = set.byId.get(rec.question_id as string);
    if (clip === undefined) skipped.unknown_clip++;
    else if (!q) skipped.unknown_question++;
    else {
      const parsed = parseAnswerFor(q, ma);
      if (parsed === null) skipped.unparsed++;
      else items.push({ clip, questionId: q.id, parsed });
    }
  }
  return { name: predictionName(path), items, skipped };
}

/** Short column codes for question ids: the initials of their words (unique by construction). */
function codes(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  return ids.map((id, i) => {
    let c = id.split('_').map((w) => w[0] ?? '').join('');
    if (seen.has(c)) c = `${c}${i}`;
    seen.add(c);
    return c;
  });
}

function table(header: string[], rows: string[][]): string {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]): string => r.map((c, i) => c.padStart(w[i])).join('  ');
  return [fmt(header), w.map((x) => '-'.repeat(x)).join('  '), ...rows.map(fmt)].join('\n');
}

const pct = (v: number): string => (100 * v).toFixed(1);

/** The reference's oracle consistency (`compute_oracle_consistency`) of relabelled clips. */
export function oracleConsistency(labels: readonly Record<string, string>[]): OracleConsistency {
  const c = computeConsistency(new Map(labels.map((l, i) => [String(i), l])));
  return { emcr: c.rate, wemcr: c.wemcr, rule_coverage: c.rule_coverage, n_evaluable: c.n_evaluable };
}

export function formatSensitivity(r: SensitivityReport): string {
  const out: string[] = [];
  const cs = codes(r.questions);
  out.push(`Label flip rate (%) vs alpha = 1 over ${r.trajectories} trajectories (all thresholds x alpha)`, '');
  out.push(
    table(
      ['alpha', 'all', ...cs],
      r.rows.map((row) => [row.alpha.toFixed(2), pct(row.overallFlipRate), ...r.questions.map((q) => pct(row.flipRate[q]))]),
    ),
  );
  const legend = r.questions.map((q, i) => `${cs[i]} = ${q}`);
  out.push('');
  for (let i = 0; i < legend.length; i += 4) out.push(`  ${legend.slice(i, i + 4).join(', ')}`);
  if (r.rows[0]?.oracleConsistency) {
    out.push('', "The oracle's own consistency (physics rules over its labels) at each alpha", '');
    out.push(
      table(
        ['alpha', 'EMCR', 'WPCR', 'rule coverage', 'evaluable'],
        r.rows.map((row) => {
          const c = row.oracleConsistency!;
          return [row.alpha.toFixed(2), c.emcr.toFixed(4), c.wemcr.toFixed(4), c.rule_coverage.toFixed(4), String(c.n_evaluable)];
        }),
      ),
    );
  }
  if (r.predictions) {
    const names = r.predictions.map((p) => p.name);
    out.push('', 'Against the relabelled oracle: balanced accuracy (macro F1) per prediction file, and Kendall tau of the ranking vs alpha = 1', '');
    out.push(
      table(
        ['alpha', ...names, 'tau'],
        r.rows.map((row) => [row.alpha.toFixed(2), ...names.map((n) => `${row.metrics![n].balanced_acc.toFixed(4)} (${row.metrics![n].macro_f1.toFixed(4)})`), row.tau!.toFixed(3)]),
      ),
    );
    out.push('', `  ranking at alpha = 1: ${r.nominalRanking!.join(' > ')}`);
    for (const p of r.predictions) {
      const sk = Object.entries(p.skipped).filter(([, v]) => v > 0).map(([k, v]) => `${v} ${k.replace('_', ' ')}`);
      out.push(`  ${p.name}: ${p.used} answers graded${sk.length ? `; skipped ${sk.join(', ')}` : ''}`);
    }
  }
  if (r.perQuestion) out.push('', ...formatPerQuestion(r));
  return out.join('\n');
}

/** The per-question analysis: the reference script's summary table, then mean balanced accuracy per question and alpha. */
export function formatPerQuestion(r: SensitivityReport): string[] {
  const pq = r.perQuestion!;
  const out = ['Per question: only its thresholds x alpha, the others as published', ''];
  out.push(
    table(
      ['question', 'max flip %', 'min tau', 'max mean |dBAcc| %'],
      pq.map((q) => [q.question, pct(Math.max(...q.flipRate)), Math.min(...q.tau).toFixed(3), r.predictions ? (100 * Math.max(...q.meanAbsDelta)).toFixed(2) : '–']),
    ),
  );
  if (r.predictions) {
    out.push('', `Mean balanced accuracy over the ${r.predictions.length} prediction file${r.predictions.length === 1 ? '' : 's'} on each question, per alpha`, '');
    out.push(table(['question', ...r.alphas.map((a) => a.toFixed(2))], pq.map((q) => [q.question, ...q.meanBalancedAcc.map((v) => v.toFixed(3))])));
  }
  return out;
}

/** The heatmaps of the per-question analysis: flip rate, and with predictions mean |ΔBAcc| (the reference's figure). */
export function perQuestionPlots(r: SensitivityReport): Record<string, string> {
  const pq = r.perQuestion!;
  const cols = r.alphas.map((a) => a.toFixed(2));
  const rows = pq.map((q) => q.question);
  const pctf = (d: number) => (v: number) => `${(100 * v).toFixed(d)}%`;
  const plots: Record<string, string> = {
    'per_threshold_flip_rate.svg': heatmap(rows, cols, pq.map((q) => q.flipRate), {
      title: `Oracle label flip rate per question (${r.trajectories} trajectories; one question's thresholds × α)`,
      format: pctf(0),
      legend: 'share of trajectories whose label differs from α = 1',
    }),
  };
  if (r.predictions) {
    plots['per_threshold_heatmap.svg'] = heatmap(rows, cols, pq.map((q) => q.meanAbsDelta), {
      title: `Mean |ΔBAcc| per question over ${r.predictions.length} prediction file${r.predictions.length === 1 ? '' : 's'} (one question's thresholds × α)`,
      format: pctf(1),
      legend: 'mean over the files of |balanced accuracy at α − at α = 1|',
    });
  }
  return plots;
}

export function registerSensitivity(program: Command): void {
  const cmd = program
    .command('sensitivity')
    .description('label flip rates and prediction rankings when every threshold is multiplied by alpha')
    .argument('[FILE]', INPUT_ARG_HELP);
  addInputOptions(cmd)
    .option('--from <alpha>', 'smallest alpha', '0.5')
    .option('--to <alpha>', 'largest alpha', '1.5')
    .option('--step <d>', 'alpha step (alpha = 1 is always included)', '0.05')
    .option('--predictions <files>', 'comma-separated prediction JSONL files (clip_id, question_id, model_answer); clip_id = trajectory id')
    .option('--questions <ids>', 'comma-separated question ids for the flip-rate table (default: all)')
    .option('--json <path>', 'also write the full report as JSON (atomically)')
    .option('--per-question', "also scale one question's thresholds at a time (scripts/per_threshold_sensitivity.py): flip rate, per-question metrics of each prediction file, ranking stability")
    .option('--plots <dir>', 'with --per-question: write heatmaps (per_threshold_flip_rate, and with predictions per_threshold_heatmap) as SVG, and PNG when sharp is installed')
    .addHelpText('after', INPUT_HELP)
    .action(async (arg: string | undefined, o: SensitivityOpts) => {
      const file = inputPath(arg, o);
      const predFiles = o.predictions ? o.predictions.split(',').map((s) => s.trim()).filter(Boolean) : [];
      if (o.plots !== undefined && !o.perQuestion) throw new InputError('--plots needs --per-question');
      guardInputOutputs(file, o, [o.json !== undefined ? { path: o.json, flag: '--json' } : undefined, o.plots !== undefined ? { path: o.plots, flag: '--plots', kind: 'dir' } : undefined], predFiles);
      const alphas = alphaGrid(num('--from', o.from), num('--to', o.to), num('--step', o.step));
      const duration = parseDuration(o.duration);
      const config = o.config ?? DEFAULT_QUESTIONS_PATH;
      const nominal = loadQuestions(config);
      const qids = selectQuestions(nominal, o.questions).map((q) => q.id);
      const files = o.predictions ? o.predictions.split(',').map((s) => s.trim()).filter(Boolean) : [];
      const seen = new Map<string, string>();
      for (const f of files) {
        const nm = predictionName(f);
        if (seen.has(nm)) throw new InputError(`--predictions: ${seen.get(nm)} and ${f} have the same name '${nm}'`);
        seen.set(nm, f);
      }
      const { ids, results } = labelInput(file, o, nominal, duration);
      const clipIndex = new Map(ids.map((id, i) => [id, i]));
      const predictions = files.map((f) => readParsedPredictions(f, nominal, clipIndex));
      const report = sensitivity({
        clips: results.map((r) => clipData(r.arrays, r.features)),
        questionsAt: (a) => loadQuestions(config, a),
        alphas,
        questionIds: qids,
        predictions,
        metric: (or, pr) => groupMetrics(or, pr),
        consistency: oracleConsistency,
        perQuestion: !!o.perQuestion,
      });
      if (o.plots) {
        const svgs = perQuestionPlots(report);
        await writeDirAtomic(o.plots, (stage) => writePlots(stage, svgs), {
          replaceable: (d) => existsSync(join(d, 'per_threshold_flip_rate.svg')),
          what: 'an egogeo sensitivity plots folder',
        });
      }
      if (o.json) writeFileAtomic(o.json, `${JSON.stringify(report, null, 2)}\n`);
      process.stdout.write(`${formatSensitivity(report)}\n`);
    });
}
