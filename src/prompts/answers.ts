/**
 * VLM answers back into prediction records, as the reference's batch collector turns them
 * (`evaluate_openai_batch.py collect`, `parse_grouped_response`): a results file of OpenAI Batch
 * API lines (hosted batches, `vllm run-batch`), each `custom_id` → the model's text, matched to the
 * dataset's QA items (per item by QA id; per clip, the numbered answers split in its QA order).
 * Pure: no I/O.
 */
import type { Clip, QaItem } from '../core/clip.js';
import { oracleText, type Prediction } from '../core/prediction.js';
import { digitValue, isPySpace, pySplitlines, pyStrip } from '../core/pystring.js';

/**
 * `parse_grouped_response`: "A1. left" / "1) left" / "A2: none" lines → one answer per question
 * ('' where none), with Python's semantics throughout: `str.strip()` and `str.splitlines()` (see
 * core/pystring: U+2028, \x85, \v … break lines; a BOM is no whitespace, so "\ufeffA1. x" is no
 * answer), and `re.match(r"[Aa]?(\d+)[.):]\s*(.+)")` with `\d` any Unicode decimal digit
 * ("A١. left" answers question 1) and `\s` Python's whitespace.
 */
export function parseGroupedResponse(text: string, n: number): string[] {
  const answers = new Array<string>(n).fill('');
  for (const raw of pySplitlines(pyStrip(text))) {
    const line = pyStrip(raw);
    if (!line) continue;
    const m = matchNumbered(line);
    if (!m) continue;
    const i = m.number - 1;
    if (i >= 0 && i < n) answers[i] = pyStrip(m.answer);
  }
  return answers;
}

/**
 * `re.match(r"[Aa]?(\d+)[.):]\s*(.+)", line)` on a stripped line (no line breaks in it, so `.`
 * takes every character): the number and the text after the separator, or null.
 */
function matchNumbered(line: string): { number: number; answer: string } | null {
  let i = line[0] === 'A' || line[0] === 'a' ? 1 : 0;
  let number = 0, digits = 0;
  for (;;) {
    const cp = line.codePointAt(i);
    const v = cp === undefined ? -1 : digitValue(cp);
    if (v < 0) break;
    number = number * 10 + v;
    digits++;
    i += cp! > 0xffff ? 2 : 1;
  }
  if (digits === 0 || !'.):'.includes(line[i] ?? 'x')) return null;
  i++;
  let j = i;
  while (j < line.length && isPySpace(line.charCodeAt(j))) j++;
  // `\s*` gives back one character when nothing else is left for `(.+)`.
  if (j === line.length) j = j > i ? j - 1 : j;
  return j < line.length ? { number, answer: line.slice(j) } : null;
}

/** One line of a batch results file: its custom_id and the model's text ('' for a failed request). */
export function resultText(line: Record<string, unknown>): { id: string; text: string; ok: boolean } {
  const id = String(line.custom_id ?? '');
  const res = (line.response ?? {}) as { status_code?: number; body?: { choices?: { message?: { content?: unknown } }[] } };
  const choice = res.status_code === 200 ? res.body?.choices?.[0] : undefined;
  const content = choice?.message?.content;
  return { id, text: typeof content === 'string' ? pyStrip(content) : '', ok: choice !== undefined };
}

/** A model's answer to one QA item, as the benchmark's prediction record (the oracle label as text, as `egogeo run` writes it). */
const record = (c: Clip, q: QaItem, answer: string): Required<Prediction> => ({
  qa_id: q.qa_id,
  clip_id: c.id,
  question_id: q.question_id,
  category: q.category,
  oracle_label: oracleText(q.answer),
  model_answer: answer,
  source: c.source,
});

/**
 * The prediction records of `results` against the dataset's `clips`: grouped (custom_id = clip id)
 * or per QA item (custom_id = QA id, or `clip:qa` where QA ids repeat across parts). Unknown ids are
 * counted, not guessed.
 */
export function answersFromResults(clips: readonly Clip[], results: readonly Record<string, unknown>[], grouped: boolean): { records: Required<Prediction>[]; ok: number; failed: number; unknown: string[] } {
  const byClip = new Map(clips.map((c) => [c.id, c]));
  const byQa = new Map<string, [Clip, QaItem][]>();
  for (const c of clips) for (const q of c.qa) byQa.set(q.qa_id, [...(byQa.get(q.qa_id) ?? []), [c, q]]);
  const out: Required<Prediction>[] = [];
  let ok = 0, failed = 0;
  const unknown: string[] = [];
  for (const line of results) {
    const r = resultText(line);
    if (r.ok) ok++;
    else failed++;
    if (grouped) {
      const c = byClip.get(r.id);
      if (!c) {
        unknown.push(r.id);
        continue;
      }
      parseGroupedResponse(r.text, c.qa.length).forEach((a, i) => out.push(record(c, c.qa[i], a)));
      continue;
    }
    const k = r.id.lastIndexOf(':');
    const cands = byQa.get(k >= 0 ? r.id.slice(k + 1) : r.id) ?? [];
    const hit = k >= 0 ? cands.find(([c]) => c.id === r.id.slice(0, k)) : cands.length === 1 ? cands[0] : undefined;
    if (!hit) {
      unknown.push(r.id);
      continue;
    }
    out.push(record(hit[0], hit[1], r.text));
  }
  return { records: out, ok, failed, unknown };
}
