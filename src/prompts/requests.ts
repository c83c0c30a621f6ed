/**
 * VLM request records from a dataset's clips: per QA item `{qa_id, clip_id, question_id, prompt,
 * frames, choices}` or per clip `{clip_id, qa_ids, question_ids, prompt, frames}`, the prompt as
 * the reference builds it (prompt.ts) with the clip's ground-truth trajectory (its npz arrays, the
 * summary from its record's features) and the frames chosen as the reference chooses them
 * (`select_frames`). May import: core/, datasets/, prompts/.
 */
import type { Clip, QaItem } from '../core/clip.js';
import { groundTruthArrays } from '../datasets/groundtruth.js';
import { buildGroupedPrompt, buildPrompt, type Embedding, type PromptArrays, selectIndices } from './prompt.js';

export interface PromptOptions {
  embedding: Embedding;
  groupByClip: boolean;
  /** Frames per request (the reference's --num_frames, default 10); 0: text only. */
  numFrames: number;
  /**
   * The trajectory a clip's prompt embeds (arrays on the oracle's 10 Hz grid, summary features);
   * default its ground truth (npz arrays, the record's features), as the reference embeds it.
   */
  trajectoryOf?: (c: Clip) => { arrays: PromptArrays | null; features?: Record<string, unknown> };
  /** A video clip's frames as image files (the CLI extracts them as the reference does); absent: the video is named. */
  videoFrames?: (c: Clip, n: number) => string[];
}

export type PromptRequest =
  | { qa_id: string; clip_id: string; question_id: string; prompt: string; frames: string[]; video?: string; choices: unknown[] | null }
  | { clip_id: string; qa_ids: string[]; question_ids: string[]; prompt: string; frames: string[]; video?: string };

/** `select_frames` over the clip's image files; a video clip's frames as `videoFrames` extracts them, else its path. */
function framesOf(c: Clip, n: number, videoFrames?: PromptOptions['videoFrames']): { frames: string[]; video?: string } {
  if (n <= 0) return { frames: [] };
  const paths = (c.frames ?? []).filter((f): f is string => typeof f === 'string');
  if (paths.length > 0) return { frames: selectIndices(paths.length, n).map((i) => paths[i]) };
  if (c.video && videoFrames) return { frames: videoFrames(c, n) };
  return { frames: [], ...(c.video ? { video: c.video } : {}) };
}

/**
 * The requests one at a time, clip by clip (a clip's per-item requests together), so that a caller
 * writing them as they come holds one clip's at most.
 */
export function* iteratePromptRequests(clips: readonly Clip[], o: PromptOptions): Generator<PromptRequest> {
  for (const c of clips) {
    if (c.qa.length === 0) continue;
    const t =
      o.embedding === 'none'
        ? { arrays: null, features: c.features }
        : o.trajectoryOf
          ? o.trajectoryOf(c)
          : { arrays: o.embedding === 'summary' ? null : (groundTruthArrays(c)?.arrays ?? null), features: c.features };
    const f = framesOf(c, o.numFrames, o.videoFrames);
    // The reference counts the frames it sends; a video clip's are its --num_frames.
    const sent = f.frames.length > 0 ? f.frames.length : f.video ? o.numFrames : 0;
    const ctx = { framesSent: sent, embedding: o.embedding, features: t.features, arrays: t.arrays };
    if (o.groupByClip) {
      yield { clip_id: c.id, qa_ids: c.qa.map((q) => q.qa_id), question_ids: c.qa.map((q) => q.question_id), prompt: buildGroupedPrompt(c.qa, ctx), ...f };
    } else {
      for (const q of c.qa as QaItem[]) yield { qa_id: q.qa_id, clip_id: c.id, question_id: q.question_id, prompt: buildPrompt(q, ctx), ...f, choices: q.choices ?? null };
    }
  }
}

export function promptRequests(clips: readonly Clip[], o: PromptOptions): PromptRequest[] {
  return [...iteratePromptRequests(clips, o)];
}

/**
 * Whether the batch lines' custom_ids must be qualified by the clip (`clip:qa`): when the requests'
 * own ids (QA ids, or clip ids when grouped) repeat across the dataset, as the published root's
 * parts' QA ids do. Known from the clips before any request is built.
 */
export function qualifiedIds(clips: readonly Clip[], groupByClip: boolean): boolean {
  const ids = clips.filter((c) => c.qa.length > 0).flatMap((c) => (groupByClip ? [c.id] : c.qa.map((q) => q.qa_id)));
  return new Set(ids).size !== ids.length;
}

/** What `--format openai-batch` adds: the model and the reference's request settings (evaluate_openai_batch.py). */
export interface BatchOptions {
  model: string;
  frameDetail: string;
  temperature: number;
  maxTokens?: number;
  /** A frame file's bytes (read by the caller; the data URI is built here). */
  readFrame: (path: string) => Buffer;
  /** A frame's URL instead of its data URI (a caller's cache of them, or `file://` URLs for a runner that reads local files). */
  frameUrl?: (path: string) => string;
}

const MIME: Record<string, string> = { '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.png': 'image/png', '.webp': 'image/webp', '.gif': 'image/gif' };

/**
 * The OpenAI Batch API request lines the reference's `_build_batch_line` writes (vllm run-batch and
 * hosted batch APIs take them): custom_id the QA id (grouped: the clip id; qualified by the clip
 * when QA ids repeat across a dataset's parts, as the published root's do), the prompt text and
 * the frames as data URIs.
 */
export function batchLines(reqs: readonly PromptRequest[], o: BatchOptions): Record<string, unknown>[] {
  const ids = reqs.map((r) => ('qa_id' in r ? r.qa_id : r.clip_id));
  const qualified = new Set(ids).size !== ids.length;
  return reqs.map((r) => batchLine(r, o, qualified));
}

/** One request's batch line (`batchLines`); `qualified`: custom_id `clip:id` (`qualifiedIds`). */
export function batchLine(r: PromptRequest, o: BatchOptions, qualified: boolean): Record<string, unknown> {
  const id = 'qa_id' in r ? r.qa_id : r.clip_id;
  const tokenKey = o.model.startsWith('gpt-5') || o.model.startsWith('o') ? 'max_completion_tokens' : 'max_tokens';
  const content: Record<string, unknown>[] = [{ type: 'text', text: r.prompt }];
  for (const f of r.frames) content.push({ type: 'image_url', image_url: { url: o.frameUrl ? o.frameUrl(f) : frameDataUri(f, o.readFrame(f)), detail: o.frameDetail } });
  return {
    custom_id: qualified ? `${r.clip_id}:${id}` : id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: o.model, messages: [{ role: 'user', content }], [tokenKey]: o.maxTokens ?? 256, temperature: o.temperature },
  };
}

/** A frame file's bytes as a data URI, the MIME type from its extension (JPEG otherwise), as the reference builds it. */
export function frameDataUri(path: string, bytes: Buffer): string {
  const dot = path.lastIndexOf('.');
  const mime = MIME[dot >= 0 ? path.slice(dot).toLowerCase() : ''] ?? 'image/jpeg';
  return `data:${mime};base64,${bytes.toString('base64')}`;
}
