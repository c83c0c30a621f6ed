/**
 * core/prediction — the benchmark's prediction record (one type: what egogeo writes, what the
 * grader, the report and the viewer read), the oracle label's text, and the one place that names a
 * clip's source from its id.
 */
import { pyNumberTokenStr } from './pystring.js';

/**
 * A prediction record, the one type for what egogeo writes (every field, in the benchmark's field
 * order: qa_id, clip_id, question_id, category, oracle_label, model_answer, source) and what
 * `readPredictions` returns (qa_id, category and source when the line has them). The grader scores
 * these (grade/metrics.ts takes them as the reference takes its JSON objects).
 */
export interface Prediction {
  qa_id?: unknown;
  clip_id: string;
  question_id: string;
  category?: string;
  /**
   * The oracle's answer as text: read, `oracle_label` or else `answer` (a number or boolean as
   * Python's str() gives it); written, the QA item's answer (`oracleText`), or null when unknown.
   */
  oracle_label: string | null;
  model_answer: string | null;
  source?: string;
}

/** A QA item's answer (string, number or boolean in the file) as a prediction's oracle label: the text the grader compares. */
export function oracleText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return pyNumberTokenStr(String(v));
  return JSON.stringify(v);
}

/**
 * The reference's per-source rule (its grader and leaderboard): a clip id starting `clip_` is
 * nuScenes, anything else CARLA. A record without a `source` is bucketed by it.
 */
export function referenceSource(clipId: string): 'nuscenes' | 'carla' {
  return clipId.startsWith('clip_') ? 'nuscenes' : 'carla';
}

/** A record's source as the grader and the report bucket it: its `source` field when non-empty, else the reference's rule. */
export function recordSource(r: { clip_id: string; source?: unknown }): string {
  return typeof r.source === 'string' && r.source !== '' ? r.source : referenceSource(r.clip_id);
}

/**
 * The source a dataset reader gives a clip whose record names none: the reference's rule, with the
 * benchmark's KITTI windows (`kitti{SEQ}_{START}`) named KITTI rather than CARLA.
 */
export function sourceFromClipId(clipId: string): string {
  return /^kitti\d+_/.test(clipId) ? 'kitti' : referenceSource(clipId);
}
