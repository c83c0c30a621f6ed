/**
 * `egogeo sensitivity FILE`: label flip rates under thresholds × α, and with prediction files their
 * balanced accuracy against the relabelled oracle and the stability of their ranking (Kendall's τ),
 * as the reference's scripts/threshold_sensitivity.py.
 */
import { basename } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../core/errors.js';
import { groupMetrics, parseAnswerFor } from '../../grade/index.js';
import { clipData, DEFAULT_QUESTIONS_PATH, loadQuestions, type QuestionSet } from '../../oracle/index.js';
import { alphaGrid, type ParsedPredictions, type SensitivityReport, sensitivity } from '../../oracle/sensitivity.js';
import { selectQuestions } from './calibrate.js';
import { addInputOptions, guardInputOutputs, INPUT_HELP, type InputOpts, labelInput, parseDuration } from './oracle.js';
import { readInputText } from '../../io/safety.js';
import { writeFileAtomic } from '../../io/atomic.js';

interface SensitivityOpts extends InputOpts {
  from: string;
  to: string;
  step: string;
  predictions?: string;
  questions?: string;
  json?: string;
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
  if (r.predictions) {
    const names = r.predictions.map((p) => p.name);
    out.push('', 'Balanced accuracy against the relabelled oracle, and Kendall tau of the ranking vs alpha = 1', '');
    out.push(
      table(
        ['alpha', ...names, 'tau'],
        r.rows.map((row) => [row.alpha.toFixed(2), ...names.map((n) => row.scores![n].toFixed(4)), row.tau!.toFixed(3)]),
      ),
    );
    out.push('', `  ranking at alpha = 1: ${r.nominalRanking!.join(' > ')}`);
    for (const p of r.predictions) {
      const sk = Object.entries(p.skipped).filter(([, v]) => v > 0).map(([k, v]) => `${v} ${k.replace('_', ' ')}`);
      out.push(`  ${p.name}: ${p.used} answers graded${sk.length ? `; skipped ${sk.join(', ')}` : ''}`);
    }
  }
  return out.join('\n');
}

export function registerSensitivity(program: Command): void {
  const cmd = program
    .command('sensitivity')
    .description('label flip rates and prediction rankings when every threshold is multiplied by alpha')
    .argument('<FILE>', 'trajectories (JSONL, a KITTI sequence directory or poses.txt, a TUM file) or a dataset folder (EgoDyn-Bench as published, the benchmark layout)');
  addInputOptions(cmd)
    .option('--from <alpha>', 'smallest alpha', '0.5')
    .option('--to <alpha>', 'largest alpha', '1.5')
    .option('--step <d>', 'alpha step (alpha = 1 is always included)', '0.05')
    .option('--predictions <files>', 'comma-separated prediction JSONL files (clip_id, question_id, model_answer); clip_id = trajectory id')
    .option('--questions <ids>', 'comma-separated question ids for the flip-rate table (default: all)')
    .option('--json <path>', 'also write the full report as JSON (atomically)')
    .addHelpText('after', INPUT_HELP)
    .action((file: string, o: SensitivityOpts) => {
      const predFiles = o.predictions ? o.predictions.split(',').map((s) => s.trim()).filter(Boolean) : [];
      guardInputOutputs(file, o, [o.json !== undefined ? { path: o.json, flag: '--json' } : undefined], predFiles);
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
        metric: (or, pr) => groupMetrics(or, pr).balanced_acc,
      });
      if (o.json) writeFileAtomic(o.json, `${JSON.stringify(report, null, 2)}\n`);
      process.stdout.write(`${formatSensitivity(report)}\n`);
    });
}
