/**
 * The benchmark's VLM prompts, exactly as the reference builds them
 * (`evaluation/evaluator_common.py` in TUM-AVS/EgoDyn-Bench): the frame-count sentence, the
 * trajectory text in one of its embeddings (none, summary, timeseries, coordinates, full), the
 * question with its options and the instruction; per QA item (`build_prompt`) or per clip
 * (`build_grouped_prompt`). Numbers are formatted as Python's f-strings format them (round half to
 * even on the exact binary value). Pure: no I/O.
 */
import { pyRound } from '../core/numeric.js';
import { pyStr } from '../core/pystring.js';

export const EMBEDDINGS = ['none', 'summary', 'timeseries', 'coordinates', 'full'] as const;
export type Embedding = (typeof EMBEDDINGS)[number];

/** The dynamics arrays a clip's npz holds (timestamps, position as x / y, yaw, speed, accel, yaw_rate, jerk). */
export interface PromptArrays {
  timestamps: ArrayLike<number>;
  x: ArrayLike<number>;
  y: ArrayLike<number>;
  yaw?: ArrayLike<number>;
  speed?: ArrayLike<number>;
  accel?: ArrayLike<number>;
  yaw_rate?: ArrayLike<number>;
  jerk?: ArrayLike<number>;
}

/** The fields of a QA record a prompt uses. */
export interface PromptQa {
  question?: string;
  question_text?: string;
  choices?: unknown[] | null;
  answer_type?: string;
  units?: string | null;
}

/**
 * Python's f"{x:.{d}f}": the exact binary value rounded to d decimals (ties to even) with every
 * digit (5e21 → "5000000000000000000000.0", not "5e+21"), `nan` (never signed), `inf` / `-inf`, the
 * sign of a negative that rounds to zero kept ("-0.00").
 */
export function pyFixed(x: number, d: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x < 0 ? '-inf' : 'inf';
  const neg = x < 0 || Object.is(x, -0);
  // |x| = mant * 2^exp exactly; q = |x| * 10^d rounded half to even, an exact integer.
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, Math.abs(x));
  const hi = buf.getUint32(0), lo = buf.getUint32(4);
  const e = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (e !== 0) mant |= 1n << 52n;
  const exp = (e === 0 ? 1 : e) - 1075;
  const ten = 10n ** BigInt(d);
  let q: bigint;
  if (exp >= 0) q = (mant << BigInt(exp)) * ten;
  else {
    const num = mant * ten, den = 1n << BigInt(-exp);
    q = num / den;
    const rem2 = (num % den) * 2n;
    if (rem2 > den || (rem2 === den && q % 2n === 1n)) q += 1n;
  }
  const s = q.toString().padStart(d + 1, '0');
  return `${neg ? '-' : ''}${d > 0 ? `${s.slice(0, -d)}.${s.slice(-d)}` : s}`;
}

/** `_select_indices`: n evenly spaced indices of [0, total) (the middle one when n is 1), Python's round. */
export function selectIndices(total: number, n: number): number[] {
  if (total === 0) return [];
  if (n >= total) return Array.from({ length: total }, (_, i) => i);
  if (n === 1) return [Math.floor(total / 2)];
  return Array.from({ length: n }, (_, i) => pyRound((i * (total - 1)) / (n - 1), 0));
}

const join = (idx: number[], a: ArrayLike<number>, d: number) => idx.map((i) => pyFixed(a[i], d)).join(', ');

/** `format_timeseries_embedding`. */
export function timeseriesEmbedding(a: PromptArrays, points: number): string {
  const n = a.timestamps.length;
  if (n === 0) return '';
  const idx = selectIndices(n, points);
  const duration = a.timestamps[n - 1] - a.timestamps[0];
  const lines = [`Vehicle dynamics (${idx.length} time-steps over ${pyFixed(duration, 1)}s):`, `t(s):    ${join(idx, a.timestamps, 2)}`];
  const channels: [string, keyof PromptArrays, number][] = [
    ['speed(m/s)', 'speed', 1],
    ['accel(m/s²)', 'accel', 2],
    ['yaw_rate(rad/s)', 'yaw_rate', 3],
    ['jerk(m/s³)', 'jerk', 2],
  ];
  for (const [label, key, d] of channels) {
    const v = a[key];
    if (v) lines.push(`${label}: ${join(idx, v, d)}`);
  }
  return lines.join('\n');
}

/** `format_coordinates_embedding`: positions relative to the first sample. */
export function coordinatesEmbedding(a: PromptArrays, points: number): string {
  const n = a.timestamps.length;
  if (n === 0) return '';
  const idx = selectIndices(n, points);
  const duration = a.timestamps[n - 1] - a.timestamps[0];
  const lines = [
    `Vehicle trajectory (${idx.length} waypoints over ${pyFixed(duration, 1)}s, metres):`,
    `t(s): ${join(idx, a.timestamps, 2)}`,
    `x(m): ${idx.map((i) => pyFixed(a.x[i] - a.x[0], 1)).join(', ')}`,
    `y(m): ${idx.map((i) => pyFixed(a.y[i] - a.y[0], 1)).join(', ')}`,
  ];
  if (a.yaw) lines.push(`heading(rad): ${join(idx, a.yaw, 3)}`);
  return lines.join('\n');
}

/** `_format_summary_embedding`: the clip record's summary features. */
export function summaryEmbedding(features: Record<string, unknown> | undefined): string {
  const f = (k: string) => (typeof features?.[k] === 'number' ? (features[k] as number) : 0);
  const ms = f('max_speed');
  return (
    'Vehicle dynamics:' +
    ` max_speed=${pyFixed(ms, 1)}m/s (${pyFixed(ms * 3.6, 0)}km/h),` +
    ` mean_speed=${pyFixed(f('mean_speed'), 1)}m/s,` +
    ` min_accel=${pyFixed(f('min_accel'), 2)}m/s²,` +
    ` max_yaw_rate=${pyFixed(f('max_abs_yaw_rate'), 3)}rad/s,` +
    ` max_jerk=${pyFixed(f('max_abs_jerk'), 2)}m/s³,` +
    ` mean_jerk=${pyFixed(f('mean_abs_jerk'), 2)}m/s³,` +
    ` max_lat_accel=${pyFixed(f('max_lateral_accel'), 2)}m/s²,` +
    ` heading_change=${pyFixed(f('total_heading_change'), 3)}rad`
  );
}

/** `_build_trajectory_text` (summary where arrays are missing, as the reference falls back). */
export function trajectoryText(mode: Embedding, features: Record<string, unknown> | undefined, arrays: PromptArrays | null, points: number): string | null {
  if (mode === 'none') return null;
  if (mode === 'summary' || !arrays) return summaryEmbedding(features);
  if (mode === 'timeseries') return timeseriesEmbedding(arrays, points);
  if (mode === 'coordinates') return coordinatesEmbedding(arrays, points);
  const parts = [timeseriesEmbedding(arrays, points), coordinatesEmbedding(arrays, points)].filter(Boolean);
  return parts.length ? parts.join('\n') : summaryEmbedding(features);
}

/** What a prompt is built from besides the question(s). */
export interface PromptContext {
  framesSent: number;
  embedding: Embedding;
  features?: Record<string, unknown>;
  arrays: PromptArrays | null;
  /** Trajectory samples shown (the reference's num_trajectory_points, default 10). */
  points?: number;
}

function frameSentence(n: number): string | null {
  if (n <= 0) return null;
  return `The ${n === 1 ? 'image shows' : `${n} images show`} the forward camera view ${n === 1 ? 'from' : 'at evenly spaced moments across'} a 3-second driving clip.`;
}

const questionOf = (q: PromptQa): string => q.question ?? q.question_text ?? '';
/** `" / ".join(str(c) for c in choices)`: Python's str() of what json.loads gave (True, None, 1.5). */
const optionsOf = (q: PromptQa): string | null => (q.choices && q.choices.length ? q.choices.map((c) => pyStr(c)).join(' / ') : null);

function head(c: PromptContext): string[] {
  const parts: string[] = [];
  const f = frameSentence(c.framesSent);
  if (f) parts.push(f);
  const t = c.embedding === 'none' ? null : trajectoryText(c.embedding, c.features, c.arrays, c.points ?? 10);
  if (t) parts.push(t);
  return parts;
}

/** `build_prompt`: one QA item. */
export function buildPrompt(q: PromptQa, c: PromptContext): string {
  const parts = head(c);
  const opts = optionsOf(q);
  if (opts !== null) parts.push(`${questionOf(q)} [${opts}]`, 'Answer with ONLY the chosen option.');
  else if (q.answer_type === 'numeric') parts.push(`${questionOf(q)} [number${q.units ? `, ${q.units}` : ''}]`, 'Answer with ONLY the number.');
  else parts.push(questionOf(q), 'Answer concisely.');
  return parts.join('\n');
}

/** `build_grouped_prompt`: every question of a clip, numbered, answered as "A1. …". */
export function buildGroupedPrompt(qs: readonly PromptQa[], c: PromptContext): string {
  const parts = head(c);
  parts.push('\nAnswer each question. Reply ONLY with the numbered answers.');
  qs.forEach((q, i) => {
    const opts = optionsOf(q);
    if (opts !== null) parts.push(`Q${i + 1}. ${questionOf(q)} [${opts}]`);
    else if (q.answer_type === 'numeric') parts.push(`Q${i + 1}. ${questionOf(q)} [number${q.units ? `, ${q.units}` : ''}]`);
    else parts.push(`Q${i + 1}. ${questionOf(q)}`);
  });
  parts.push(`\nFormat:\nA1. answer\nA2. answer\n...\nA${qs.length}. answer`);
  return parts.join('\n');
}
