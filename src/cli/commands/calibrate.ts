/**
 * `egogeo calibrate FILE`: feature distributions, decision-value distributions, label balance and
 * equal-frequency thresholds over a set of trajectories (the reference's calibrate_thresholds).
 */
import type { Command } from 'commander';
import {
  calibrate,
  type CalibrationReport,
  DISTRIBUTION_KEYS,
  type Distribution,
} from '../../oracle/calibrate.js';
import { DEFAULT_QUESTIONS_PATH, loadQuestions } from '../../oracle/index.js';
import { addInputOptions, guardInputOutputs, INPUT_ARG_HELP, INPUT_HELP, type InputOpts, inputPath, labelInput } from '../inputs.js';
import { parseDuration, selectQuestions } from '../options.js';
import { writeFileAtomic } from '../../io/atomic.js';

interface CalibrateOpts extends InputOpts {
  questions?: string;
  json?: string;
}

const num = (v: number): string => {
  if (Number.isNaN(v)) return '-';
  if (Number.isInteger(v) && Math.abs(v) < 1e9) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2) : v.toFixed(4);
};
const short = (v: number): string => (Number.isNaN(v) ? '-' : String(Number(v.toPrecision(5))));
const pct = (v: number): string => (Number.isNaN(v) ? '-' : `${(100 * v).toFixed(1)}%`);

/** A plain-text table; `left` counts the leading text columns (the rest are right-aligned numbers). */
function table(header: string[], rows: string[][], left = 1): string {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]): string => r.map((c, i) => (i < left ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ').trimEnd();
  return [fmt(header), w.map((x) => '-'.repeat(x)).join('  '), ...rows.map(fmt)].join('\n');
}

const distRow = (name: string, d: Distribution): string[] => [name, ...DISTRIBUTION_KEYS.map((k) => num(d[k]))];
const balanceText = (b: Record<string, number>): string => Object.entries(b).map(([l, f]) => `${l} ${pct(f)}`).join(', ');

/** The report as plain-text tables. */
export function formatCalibration(r: CalibrationReport): string {
  const out: string[] = [];
  out.push(`Summary features over ${r.n} trajectories`, '');
  out.push(table(['feature', ...DISTRIBUTION_KEYS], Object.entries(r.features).map(([k, d]) => distRow(k, d))), '');
  const vrows: string[][] = [];
  for (const q of r.questions) for (const v of q.values) vrows.push(distRow(`${q.id}: ${v.name}`, v.distribution));
  if (vrows.length) out.push('Values the rules decide on', '', table(['question: value', ...DISTRIBUTION_KEYS], vrows), '');
  out.push('Label balance at the configured thresholds', '');
  out.push(table(['question', 'rule', 'balance'], r.questions.map((q) => [q.id, q.rule, balanceText(q.balance)]), 3), '');
  const multi = r.questions.filter((q) => q.multiThreshold);
  if (multi.length) {
    out.push('Multi-threshold questions: configured vs equal-frequency thresholds (k classes -> percentiles 100*i/k)', '');
    const rows: string[][] = [];
    for (const q of multi) {
      const m = q.multiThreshold!;
      rows.push([`${q.id} (${m.value})`, 'configured', m.published.thresholds.map(short).join(', '), balanceText(m.published.balance)]);
      rows.push(['', 'equal-frequency', m.equalFrequency.thresholds.map(short).join(', '), balanceText(m.equalFrequency.balance)]);
    }
    out.push(table(['question', 'thresholds', 'values', 'balance'], rows, 4), '');
  }
  return `${out.join('\n')}`;
}

export function registerCalibrate(program: Command): void {
  const cmd = program
    .command('calibrate')
    .description('feature distributions, label balance and equal-frequency thresholds over a set of trajectories')
    .argument('[FILE]', INPUT_ARG_HELP);
  addInputOptions(cmd)
    .option('--questions <ids>', 'comma-separated question ids (default: all)')
    .option('--json <path>', 'also write the full report as JSON (atomically)')
    .addHelpText('after', INPUT_HELP)
    .action((arg: string | undefined, o: CalibrateOpts) => {
      const file = inputPath(arg, o);
      guardInputOutputs(file, o, [o.json !== undefined ? { path: o.json, flag: '--json' } : undefined]);
      const duration = parseDuration(o.duration);
      const set = loadQuestions(o.config ?? DEFAULT_QUESTIONS_PATH);
      const selected = selectQuestions(set, o.questions);
      const report = calibrate(labelInput(file, o, set, duration).results, selected);
      const text = formatCalibration(report);
      if (o.json) writeFileAtomic(o.json, `${JSON.stringify(report, null, 2)}\n`);
      process.stdout.write(`${text}\n`);
    });
}
