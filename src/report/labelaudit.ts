/**
 * `egogeo report --label-audit FILE`: the JSON `egogeo audit labels --json` writes, read for what
 * the cross-check needs — per clip, how often each label flips under its source's own ground-truth
 * noise (a disagreement on a label that flips in at least `noise_decided_share` of the draws is
 * *noise-decided*), and per question the noise ceiling. The JSON is the interface between the two
 * commands (report/ does not import audit/); every field is checked, one error line naming it.
 */
import { InputError } from '../core/errors.js';
import { readInputText } from '../io/safety.js';

export interface LabelAuditView {
  file: string;
  /** A label flipping in at least this share of its draws is noise-decided. */
  share: number;
  /** clip id → question → share of draws at the source's level in which the label flips. */
  flips: Map<string, Record<string, number>>;
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

/** Parses the audit JSON (see the module comment). */
export function parseLabelAudit(doc: unknown, file: string): LabelAuditView {
  if (!isObj(doc)) throw new InputError(`${file}: not a label audit (expected the JSON object egogeo audit labels --json writes)`);
  const share = doc.noise_decided_share;
  if (typeof share !== 'number' || !(share > 0 && share <= 1)) throw new InputError(`${file}: "noise_decided_share" must be a number in (0, 1] (written by egogeo audit labels --json)`);
  if (!Array.isArray(doc.per_clip)) throw new InputError(`${file}: "per_clip" must be a list (written by egogeo audit labels --json)`);
  const flips = new Map<string, Record<string, number>>();
  doc.per_clip.forEach((c, i) => {
    if (!isObj(c) || typeof c.clip_id !== 'string') throw new InputError(`${file}: per_clip[${i}] has no string "clip_id"`);
    flips.set(c.clip_id, numbers(c.flips, `${file}: per_clip[${i}].flips`));
  });
  const ceiling = doc.ceiling;
  if (!isObj(ceiling) || !isObj(ceiling.pooled) || !isObj(ceiling.per_source)) throw new InputError(`${file}: "ceiling" must hold "pooled" and "per_source"`);
  const perSource: Record<string, Record<string, number>> = {};
  for (const [s, c] of Object.entries(ceiling.per_source)) {
    if (!isObj(c)) throw new InputError(`${file}: ceiling.per_source.${s} is not an object`);
    perSource[s] = numbers(c.per_question, `${file}: ceiling.per_source.${s}.per_question`);
  }
  return { file, share, flips, ceiling: numbers(ceiling.pooled.per_question, `${file}: ceiling.pooled.per_question`), ceilingPerSource: perSource };
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
