/**
 * What every dataset layout reader shares (datasets/benchmark.ts for the benchmark layout and KITTI
 * sequences, datasets/published.ts for the published one, datasets/groundtruth.ts for their ground
 * truth): the clip record, QA items, JSONL and clip-list readers, the canonical clip order. Kept
 * apart from the readers so that they import it, not each other. May import: core/, io/.
 */
import { sourceFromClipId } from '../core/prediction.js';
import type { Clip, QaItem } from '../core/clip.js';
import { InputError } from '../core/errors.js';
import { readInputText } from '../io/safety.js';

// ClipDataError (a clip's data is missing or unreadable: that clip fails, the run goes on) is core/errors.ts's.
export { ClipDataError } from '../core/errors.js';

// The clip model (core/clip.ts) is what every layout reader here produces.
export type { Clip, QaItem } from '../core/clip.js';

export interface Benchmark {
  dir: string;
  clips: Clip[];
  /** True when `qa.jsonl` exists. */
  hasQa: boolean;
}

export interface BenchmarkOptions {
  /** A `selected_clips.json`-style list: keeps only these clips, in this order. */
  selected?: string;
  /** Overrides every clip's source (e.g. `carla-transferred` for the style-transferred videos). */
  sourceLabel?: string;
  /** Published layout: the nuScenes data root (frames, timestamps and cameras of nuScenes clips). */
  nuscenesRoot?: string;
  /** Published layout: which CARLA videos to read (default simulation). */
  carlaDomain?: CarlaDomain;
  /** `--cameras FILE`: per-source cameras over what the dataset says. */
  cameras?: string;
  /** Where the nuScenes join is cached (null: no cache; default: defaultCacheDir()). */
  cacheDir?: string | null;
  /**
   * False: clips only for their metadata and ground truth (reports), so a published root's
   * nuScenes clips need no --nuscenes-root. Default true.
   */
  needFrames?: boolean;
  /** One line per slow or noteworthy step (reading the nuScenes tables, a fallback taken). */
  log?: (line: string) => void;
}

export const CARLA_DOMAINS = ['simulation', 'transferred'] as const;
export type CarlaDomain = (typeof CARLA_DOMAINS)[number];


/** Reads a JSONL file into records; errors name `file:line`. Blank lines are skipped. */
export function readJsonlRecords(path: string): { rec: Record<string, unknown>; line: number }[] {
  const text = readInputText(path, 'JSONL file');
  const out: { rec: Record<string, unknown>; line: number }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const s = lines[i].trim();
    if (!s) continue;
    let rec: unknown;
    try {
      rec = JSON.parse(s);
    } catch (e) {
      throw new InputError(`${path}:${i + 1}: invalid JSON (${(e as Error).message.split('\n')[0].slice(0, 120)})`);
    }
    if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) throw new InputError(`${path}:${i + 1}: expected a JSON object`);
    out.push({ rec: rec as Record<string, unknown>, line: i + 1 });
  }
  return out;
}

/** A `selected_clips.json`-style list → [{id, source?}] in file order; duplicates are an error. */
export function readClipList(path: string): { id: string; source?: string }[] {
  const text = readInputText(path, 'clip list');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new InputError(`${path}: invalid JSON (${(e as Error).message.split('\n')[0]})`);
  }
  const list = Array.isArray(doc) ? doc : (doc as { clips?: unknown })?.clips;
  if (!Array.isArray(list)) throw new InputError(`${path}: expected a JSON list of clip ids or of {id, source} objects`);
  const seen = new Set<string>();
  return list.map((e, i) => {
    const id = typeof e === 'string' ? e : (e as { id?: unknown; clip_id?: unknown })?.id ?? (e as { clip_id?: unknown })?.clip_id;
    if (typeof id !== 'string' || !id) throw new InputError(`${path}: entry ${i} has no string 'id'`);
    if (seen.has(id)) throw new InputError(`${path}: entry ${i}: clip '${id}' is listed twice`);
    seen.add(id);
    const source = typeof e === 'object' && e && typeof (e as { source?: unknown }).source === 'string' ? (e as { source: string }).source : undefined;
    return { id, source };
  });
}

/** `qa.jsonl` → QA items per clip, in file order; errors name `file:line` and the field. */
export function readQa(qaPath: string): Map<string, QaItem[]> {
  const qaByClip = new Map<string, QaItem[]>();
  {
    for (const { rec, line } of readJsonlRecords(qaPath)) {
      const where = `${qaPath}:${line}`;
      for (const f of ['qa_id', 'clip_id', 'question_id'] as const) {
        if (typeof rec[f] !== 'string' || !rec[f]) throw new InputError(`${where}: field '${f}' must be a non-empty string`);
      }
      if (rec.answer === undefined) throw new InputError(`${where}: missing field 'answer'`);
      const item: QaItem = {
        qa_id: rec.qa_id as string,
        clip_id: rec.clip_id as string,
        question_id: rec.question_id as string,
        category: typeof rec.category === 'string' ? rec.category : 'unknown',
        answer: rec.answer,
        ...(typeof rec.question === 'string' ? { question: rec.question } : {}),
        ...(Array.isArray(rec.choices) || rec.choices === null ? { choices: rec.choices as unknown[] | null } : {}),
        ...(typeof rec.answer_type === 'string' ? { answer_type: rec.answer_type } : {}),
        ...(typeof rec.units === 'string' || rec.units === null ? { units: rec.units as string | null } : {}),
      };
      let list = qaByClip.get(item.clip_id);
      if (!list) qaByClip.set(item.clip_id, (list = []));
      list.push(item);
    }
  }
  return qaByClip;
}

/** The clips in canonical order: the list's (filtered, its sources filling in) or the index's. */
export function arrange(
  byId: Map<string, Clip>,
  order: string[],
  opts: BenchmarkOptions,
  recordSource: ReadonlySet<string>,
  indexName: string,
  qaByClip: ReadonlyMap<string, QaItem[]> = new Map(),
): Clip[] {
  let clips: Clip[];
  if (opts.selected) {
    clips = readClipList(opts.selected).map(({ id, source }) => {
      const c = byId.get(id);
      if (c) return { ...c, source: recordSource.has(id) || !source ? c.source : source };
      return { index: 0, id, source: source ?? sourceFromClipId(id), camera: {}, qa: qaByClip.get(id) ?? [], problem: `not in ${indexName}` };
    });
  } else {
    clips = order.map((id) => byId.get(id)!);
  }
  clips.forEach((c, i) => {
    c.index = i;
    if (opts.sourceLabel) c.source = opts.sourceLabel;
  });
  return clips;
}
