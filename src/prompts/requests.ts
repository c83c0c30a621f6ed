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
}

export type PromptRequest =
  | { qa_id: string; clip_id: string; question_id: string; prompt: string; frames: string[]; video?: string; choices: unknown[] | null }
  | { clip_id: string; qa_ids: string[]; question_ids: string[]; prompt: string; frames: string[]; video?: string };

/** `select_frames` over the clip's image files (a video clip: its path, frames left to the runner). */
function framesOf(c: Clip, n: number): { frames: string[]; video?: string } {
  if (n <= 0) return { frames: [] };
  const paths = (c.frames ?? []).filter((f): f is string => typeof f === 'string');
  if (paths.length > 0) return { frames: selectIndices(paths.length, n).map((i) => paths[i]) };
  return { frames: [], ...(c.video ? { video: c.video } : {}) };
}

export function promptRequests(clips: readonly Clip[], o: PromptOptions): PromptRequest[] {
  const out: PromptRequest[] = [];
  for (const c of clips) {
    if (c.qa.length === 0) continue;
    const g = o.embedding === 'none' || o.embedding === 'summary' ? null : groundTruthArrays(c)?.arrays ?? null;
    const arrays: PromptArrays | null = g;
    const f = framesOf(c, o.numFrames);
    // The reference counts the frames it sends; a video clip's are its --num_frames.
    const sent = f.frames.length > 0 ? f.frames.length : f.video ? o.numFrames : 0;
    const ctx = { framesSent: sent, embedding: o.embedding, features: c.features, arrays };
    if (o.groupByClip) {
      out.push({ clip_id: c.id, qa_ids: c.qa.map((q) => q.qa_id), question_ids: c.qa.map((q) => q.question_id), prompt: buildGroupedPrompt(c.qa, ctx), ...f });
    } else {
      for (const q of c.qa as QaItem[]) out.push({ qa_id: q.qa_id, clip_id: c.id, question_id: q.question_id, prompt: buildPrompt(q, ctx), ...f, choices: q.choices ?? null });
    }
  }
  return out;
}
