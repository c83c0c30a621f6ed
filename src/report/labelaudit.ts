/**
 * `egogeo report --label-audit FILE`: the JSON `egogeo audit labels --json` writes, read for what
 * the cross-check needs — per clip, how often each label flips under its source's own ground-truth
 * noise (a disagreement on a label that flips in at least `noise_decided_share` of the draws is
 * *noise-decided*), and per question the noise ceiling. The JSON is the interface between the two
 * commands (report/ does not import audit/); every field is checked, one error line naming it.
 * Per clip it also carries the labels of every noise draw and of each protocol's sampling, so the
 * report grades the ceilings over a run's own clips (`ceilingsOver`).
 */
import { InputError } from '../core/errors.js';
import { readInputText } from '../io/safety.js';
import type { Prediction } from '../core/prediction.js';
import { type DrawnClip, type DrawnGrade, gradeDraws } from '../grade/draws.js';
import type { QuestionSet } from '../oracle/questions.js';

/** One clip of the audit: its labels at its source's level in every draw, and as each protocol's sampling leaves them. */
export interface AuditClipView {
  source: string;
  clean: Record<string, string>;
  /** Per question whose label flips in some draw, its label in each draw (elsewhere: `clean`). */
  drawn: Record<string, string[]>;
  /** Frame count ('10', 'all') → interpolant ('spline', 'densify') → labels. */
  sampled: Record<string, Record<string, Record<string, string>>>;
}

export interface LabelAuditView {
  file: string;
  /** A label flipping in at least this share of its draws is noise-decided. */
  share: number;
  /** Noise draws per clip at its source's level. */
  draws: number;
  /** clip id → question → share of draws at the source's level in which the label flips. */
  flips: Map<string, Record<string, number>>;
  clips: Map<string, AuditClipView>;
  /** Per audit source: its level's key, how it was chosen (measured, literature, exact, given). */
  levels: Record<string, { key: string; basis: string }>;
  /** Per question: the noise ceiling pooled over the audit's clips (each at its source's level). */
  ceiling: Record<string, number>;
  /** Per audit source, per question. */
  ceilingPerSource: Record<string, Record<string, number>>;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function numbers(v: unknown, where: string): Record<string, number> {
  if (!isObj(v)) throw new InputError(`${where}: expected an object of numbers`);
  const out: Record<string, number> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null) continue; // NaN is written as null
    if (typeof x !== 'number' || !Number.isFinite(x)) throw new InputError(`${where}.${k}: expected a number, got ${JSON.stringify(x)}`);
    out[k] = x;
  }
  return out;
}

function strings(v: unknown, where: string): Record<string, string> {
  if (!isObj(v)) throw new InputError(`${where}: expected an object of labels`);
  for (const [k, x] of Object.entries(v)) if (typeof x !== 'string') throw new InputError(`${where}.${k}: expected a label (string), got ${JSON.stringify(x)}`);
  return v as Record<string, string>;
}

const REWRITE = '(written by egogeo audit labels --json; an audit from before the sampling ceiling lacks it: run it again)';

/** Parses the audit JSON (see the module comment). */
export function parseLabelAudit(doc: unknown, file: string): LabelAuditView {
  if (!isObj(doc)) throw new InputError(`${file}: not a label audit (expected the JSON object egogeo audit labels --json writes)`);
  const share = doc.noise_decided_share;
  if (typeof share !== 'number' || !(share > 0 && share <= 1)) throw new InputError(`${file}: "noise_decided_share" must be a number in (0, 1] (written by egogeo audit labels --json)`);
  const draws = doc.draws;
  if (typeof draws !== 'number' || !Number.isInteger(draws) || draws < 1) throw new InputError(`${file}: "draws" must be a positive integer ${REWRITE}`);
  if (!Array.isArray(doc.per_clip)) throw new InputError(`${file}: "per_clip" must be a list (written by egogeo audit labels --json)`);
  const flips = new Map<string, Record<string, number>>();
  const clips = new Map<string, AuditClipView>();
  doc.per_clip.forEach((c, i) => {
    const at = `${file}: per_clip[${i}]`;
    if (!isObj(c) || typeof c.clip_id !== 'string') throw new InputError(`${at} has no string "clip_id"`);
    flips.set(c.clip_id, numbers(c.flips, `${at}.flips`));
    if (typeof c.source !== 'string') throw new InputError(`${at} has no string "source"`);
    if (!isObj(c.draws) || !isObj(c.sampled)) throw new InputError(`${at}: "draws" and "sampled" must be objects ${REWRITE}`);
    const drawn: Record<string, string[]> = {};
    for (const [q, v] of Object.entries(c.draws)) {
      if (!Array.isArray(v) || v.length !== draws || v.some((y) => typeof y !== 'string')) throw new InputError(`${at}.draws.${q}: expected ${draws} labels (one per draw)`);
      drawn[q] = v as string[];
    }
    const sampled: AuditClipView['sampled'] = {};
    for (const [k, byHow] of Object.entries(c.sampled)) {
      if (!isObj(byHow)) throw new InputError(`${at}.sampled.${k}: expected an object of interpolants`);
      sampled[k] = Object.fromEntries(Object.entries(byHow).map(([how, labels]) => [how, strings(labels, `${at}.sampled.${k}.${how}`)]));
    }
    clips.set(c.clip_id, { source: c.source, clean: strings(c.clean, `${at}.clean`), drawn, sampled });
  });
  const ceiling = doc.ceiling;
  if (!isObj(ceiling) || !isObj(ceiling.pooled) || !isObj(ceiling.per_source)) throw new InputError(`${file}: "ceiling" must hold "pooled" and "per_source"`);
  const perSource: Record<string, Record<string, number>> = {};
  for (const [s, c] of Object.entries(ceiling.per_source)) {
    if (!isObj(c)) throw new InputError(`${file}: ceiling.per_source.${s} is not an object`);
    perSource[s] = numbers(c.per_question, `${file}: ceiling.per_source.${s}.per_question`);
  }
  const basis = doc.source_level_basis;
  if (!isObj(basis)) throw new InputError(`${file}: "source_level_basis" must be an object ${REWRITE}`);
  const levels: LabelAuditView['levels'] = {};
  for (const [s, b] of Object.entries(basis)) {
    if (!isObj(b) || typeof b.key !== 'string' || typeof b.basis !== 'string') throw new InputError(`${file}: source_level_basis.${s} must hold strings "key" and "basis"`);
    levels[s] = { key: b.key, basis: b.basis };
  }
  return { file, share, draws, flips, clips, levels, ceiling: numbers(ceiling.pooled.per_question, `${file}: ceiling.pooled.per_question`), ceilingPerSource: perSource };
}

export function readLabelAudit(file: string): LabelAuditView {
  const text = readInputText(file, 'label audit (JSON)');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new InputError(`${file}: not JSON (${(e as Error).message})`);
  }
  return parseLabelAudit(doc, file);
}

/** The ceilings graded over some records' own clips (those in the audit), against those records' oracle labels. */
export interface CeilingsOver {
  n_clips: number;
  /** The noise ceiling: each clip's labels in every draw at its source's level. */
  noise: DrawnGrade;
  /** The sampling ceiling at `frames` (a key of the audit's `sampled`, e.g. '10'), per interpolant; null where the audit has none. */
  sampling: { frames: string; per: Record<string, DrawnGrade> } | null;
}

/**
 * `audit`'s ceilings over the clips of `records` it holds (see CeilingsOver); null when it holds
 * none. `frames`: the protocol the records were answered at (null: every frame; undefined:
 * unknown, no sampling ceiling).
 */
export function ceilingsOver(audit: LabelAuditView, records: readonly Prediction[], questions: QuestionSet, subset: ReadonlySet<string>, frames: number | null | undefined): CeilingsOver | null {
  const byClip = new Map<string, DrawnClip>();
  for (const r of records) {
    const a = audit.clips.get(r.clip_id);
    if (!a || r.oracle_label === null) continue;
    let c = byClip.get(r.clip_id);
    if (!c) byClip.set(r.clip_id, (c = { id: r.clip_id, source: a.source, reference: {} }));
    (c.reference as Record<string, string>)[r.question_id] = r.oracle_label.toLowerCase();
  }
  const clips = [...byClip.values()];
  if (clips.length === 0) return null;
  const views = clips.map((c) => audit.clips.get(c.id)!);
  const noise = gradeDraws(clips, audit.draws, (i, k) => {
    const v = views[i];
    const out: Record<string, string> = { ...v.clean };
    for (const [q, ys] of Object.entries(v.drawn)) out[q] = ys[k];
    return out;
  }, questions, subset);
  const key = frames === null ? 'all' : String(frames);
  const hows = frames !== undefined && views.every((v) => v.sampled[key]) ? Object.keys(views[0].sampled[key]) : [];
  const sampling = hows.length ? { frames: key, per: Object.fromEntries(hows.map((how) => [how, gradeDraws(clips, 1, (i) => views[i].sampled[key][how] ?? {}, questions, subset)])) } : null;
  return { n_clips: clips.length, noise, sampling };
}
