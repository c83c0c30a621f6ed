/**
 * A run checked against the label audit's ceilings, over the run's own clips: per question and
 * pooled (all questions, the 6-question subset), the run's balanced accuracy with its clip-level
 * bootstrap interval beside the noise ceiling (the ground truth's labels under its own jitter) and
 * the sampling ceiling of the run's protocol (the truth kept at its frames, natural spline between).
 * A run whose interval lies wholly above a ceiling — above the upper end of the ceiling's own spread
 * over its noise draws (grade/draws.ts) — has beaten it: that ceiling is no bound. Above
 * the noise ceiling, the noise model is too strong; above the sampling ceiling, the spline is not
 * the best a run at those frames can interpolate. Said, never hidden.
 */
import type { Prediction } from '../core/prediction.js';
import { bootstrapClips, bootstrapIntervals, DEFAULT_SEED } from '../grade/index.js';
import type { QuestionSet } from '../oracle/index.js';
import { GEOMETRIC_SUBSET } from '../baseline/baseline.js';
import { ceilingsOver, type LabelAuditView } from './labelaudit.js';

/** Bootstrap draws of the check when the report is given none (`--bootstrap`), and its seed. */
export const CHECK_BOOTSTRAP = { n: 1000, seed: DEFAULT_SEED } as const;
/** The interpolant the sampling ceiling is read with (the audit also holds the engine's densifier). */
export const SAMPLING_CEILING = 'spline';

export interface CeilingRow {
  /** A question id, 'all' (every question pooled) or 'subset' (the 6-question subset pooled). */
  scope: string;
  balanced_acc: number;
  ci: [number, number];
  noise: number;
  /** The upper end of the noise ceiling's spread over its draws: what the interval is compared with. */
  noise_hi: number;
  /** The sampling ceiling per interpolant at the run's frames (null: the audit has none for them). */
  sampling: Record<string, number> | null;
  /** Which ceilings the interval lies wholly above. */
  beaten: ('noise' | 'sampling')[];
}

export interface CeilingCheck {
  run: string;
  /** The run's frames (null: every frame; absent: unknown, no run record, so no sampling ceiling). */
  frames?: number | null;
  /** The run's clips the audit holds (what every figure of the check is over). */
  n_clips: number;
  rows: CeilingRow[];
  /** One line per beaten ceiling. */
  beaten: string[];
}

const SUBSET = new Set<string>(GEOMETRIC_SUBSET);
const f3 = (x: number): string => x.toFixed(3);

/** One run's check (see the module comment); null when the audit holds none of its clips. */
export function checkCeilings(run: string, records: readonly Prediction[], frames: number | null | undefined, audit: LabelAuditView, questions: QuestionSet, bootstrap: { n: number; seed: number } = CHECK_BOOTSTRAP): CeilingCheck | null {
  const recs = records.filter((r) => audit.clips.has(r.clip_id) && r.oracle_label !== null);
  const c = ceilingsOver(audit, recs, questions, SUBSET, frames);
  if (!c) return null;
  const b = bootstrapIntervals(bootstrapClips(recs, questions), questions, bootstrap);
  const subRecs = recs.filter((r) => SUBSET.has(r.question_id));
  const bs = subRecs.length ? bootstrapIntervals(bootstrapClips(subRecs, questions), questions, bootstrap) : null;
  const rows: CeilingRow[] = [];
  type Figures = { per_question: Record<string, number>; all: number; subset: number };
  const row = (scope: string, iv: { balanced_acc: number; balanced_acc_ci_lo: number; balanced_acc_ci_hi: number }, pick: (g: Figures) => number) => {
    const sampling = c.sampling ? Object.fromEntries(Object.entries(c.sampling.per).map(([how, g]) => [how, pick(g)])) : null;
    const noise = pick(c.noise), noiseHi = pick(c.noise.hi);
    const beaten: CeilingRow['beaten'] = [];
    // Beyond the interval: its lower end above the ceiling's draws (both rounded like the grader's 4 places).
    if (iv.balanced_acc_ci_lo > noiseHi + 5e-5) beaten.push('noise');
    if (sampling && iv.balanced_acc_ci_lo > sampling[SAMPLING_CEILING] + 5e-5) beaten.push('sampling');
    rows.push({ scope, balanced_acc: iv.balanced_acc, ci: [iv.balanced_acc_ci_lo, iv.balanced_acc_ci_hi], noise, noise_hi: noiseHi, sampling, beaten });
  };
  for (const q of questions.questions) if (b.per_question[q.id]) row(q.id, b.per_question[q.id], (g) => g.per_question[q.id]);
  row('all', b, (g) => g.all);
  if (bs) row('subset', bs, (g) => g.subset);
  const name = (s: string) => (s === 'all' ? `all ${questions.questions.length} questions` : s === 'subset' ? 'the 6-question subset' : s);
  const beaten = rows.flatMap((r) =>
    r.beaten.map((k) =>
      k === 'noise'
        ? `${run}: ${name(r.scope)}: ${f3(r.balanced_acc)} [${f3(r.ci[0])}, ${f3(r.ci[1])}] above the noise ceiling ${f3(r.noise)} (its draws up to ${f3(r.noise_hi)}): ceiling beaten: the noise model is too strong`
        : `${run}: ${name(r.scope)}: ${f3(r.balanced_acc)} [${f3(r.ci[0])}, ${f3(r.ci[1])}] above the ${c.sampling!.frames}-frame sampling ceiling ${f3(r.sampling![SAMPLING_CEILING])}: ceiling beaten: the natural spline is not the best interpolant at ${c.sampling!.frames} frames`,
    ),
  );
  return { run, ...(frames !== undefined ? { frames } : {}), n_clips: c.n_clips, rows, beaten };
}
