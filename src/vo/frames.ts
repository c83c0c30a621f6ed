/**
 * A clip's frames as the engine sees them: image paths as they are, a video's frames as references
 * into it (the engine decodes both itself, in the calling worker), and the evenly spread subsets
 * the published baselines use.
 */
import { existsSync } from 'node:fs';
import type { Clip, LoadedClip, VideoFrame } from '../core/clip.js';
import { ClipDataError, firstLine } from '../core/errors.js';
import { probeVideo } from '../native/index.js';

/**
 * The clip with every frame and timestamp known. Image frames are checked to exist; a video's frame
 * count and rate come from its container (probeVideo; the engine checks the count when it decodes).
 * Anything missing or unreadable is a ClipDataError (this clip fails, a run goes on).
 */
export function loadFrames(c: Clip): LoadedClip {
  if (c.problem) throw new ClipDataError(c.problem);
  if (c.frames) {
    for (const f of c.frames) if (typeof f === 'string' && !existsSync(f)) throw new ClipDataError(`missing frame ${f}`);
    if (!c.timestamps || c.timestamps.length !== c.frames.length) throw new ClipDataError(`${c.frames.length} frames but ${c.timestamps?.length ?? 0} timestamps`);
    return { ...c, frames: c.frames, timestamps: Float64Array.from(c.timestamps) };
  }
  if (!c.video) throw new ClipDataError('no frames and no video');
  const video = c.video;
  if (!existsSync(video)) throw new ClipDataError(`missing video ${video}`);
  let info;
  try {
    info = probeVideo(video);
  } catch (e) {
    throw new ClipDataError(`unreadable video ${video} (${firstLine(e).replace(/^probeVideo: /, '')})`);
  }
  const n = info.frames;
  if (!(n > 0)) throw new ClipDataError(`unreadable video ${video} (its container gives no frame count)`);
  let timestamps = c.timestamps;
  if (timestamps && timestamps.length !== n) {
    throw new ClipDataError(`video ${video} has ${n} frames but the record gives ${timestamps.length} frame_timestamps`);
  }
  if (!timestamps) {
    const fps = c.fps ?? info.fps;
    if (!(fps > 0)) throw new ClipDataError(`video ${video}: no frame rate (give 'fps' or 'frame_timestamps' in the record)`);
    timestamps = Array.from({ length: n }, (_, i) => i / fps);
  }
  const frames: VideoFrame[] = Array.from({ length: n }, (_, index) => ({ video, index }));
  return { ...c, frames, timestamps: Float64Array.from(timestamps) };
}

/** `count` frame indices spread evenly over `n` frames (the published baselines use 10). */
export function evenFrames(n: number, count: number): number[] {
  if (count >= n) return Array.from({ length: n }, (_, i) => i);
  return Array.from({ length: count }, (_, i) => roundHalfEven((i * (n - 1)) / (count - 1)));
}

/** Python's round(): halves to the even neighbour (the reference's frame choice `round(i·(n−1)/(k−1))`). */
function roundHalfEven(v: number): number {
  const r = Math.round(v);
  return Math.abs(v - Math.trunc(v)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** A loaded clip reduced to the given frame indices (its ground truth stays whole: labels come from all of it). */
export function selectFrames(clip: LoadedClip, idx: readonly number[]): LoadedClip {
  return { ...clip, frames: idx.map((i) => clip.frames[i]), timestamps: Float64Array.from(idx, (i) => clip.timestamps[i]) };
}

/** The median interval between consecutive timestamps (s; the upper median; 0 for one frame). */
export function medianInterval(ts: ArrayLike<number>): number {
  const d = Array.from({ length: ts.length - 1 }, (_, i) => ts[i + 1] - ts[i]).sort((a, b) => a - b);
  return d[Math.floor(d.length / 2)] ?? 0;
}

/** Seconds: frames further apart than this (median) cannot be tracked, and are most likely not in seconds. */
export const MAX_FRAME_INTERVAL = 5;
/** The frames must cover at least this share of the ground truth's span, and at most its inverse. */
export const MIN_SPAN_SHARE = 0.5;

/**
 * A clip's timing checked against what it claims to be (ClipDataError otherwise): timestamps in
 * seconds (a median interval of more than MAX_FRAME_INTERVAL is named with the likely unit), and,
 * when the clip's ground truth gives its duration (`truthSpan`, seconds), frames that cover it — a
 * 3-frame video of a 3-second clip, or frames spanning a day, would be answered from the wrong motion.
 */
export function checkTiming(clip: LoadedClip, truthSpan?: number): void {
  const ts = clip.timestamps;
  const n = ts.length;
  const span = ts[n - 1] - ts[0];
  const median = medianInterval(ts);
  const where = clip.video ? `video ${clip.video}` : 'frame timestamps';
  if (median > MAX_FRAME_INTERVAL) {
    const unit = median > 5e7 ? 'nanoseconds' : median > 5e4 ? 'microseconds' : median > 50 ? 'milliseconds' : null;
    throw new ClipDataError(`${where}: ${n} frames span ${fmt(span)} s (median interval ${fmt(median)} s); timestamps must be in seconds${unit ? ` (these look like ${unit})` : ''}`);
  }
  if (truthSpan !== undefined && truthSpan > 0 && (span < MIN_SPAN_SHARE * truthSpan || span > truthSpan / MIN_SPAN_SHARE)) {
    throw new ClipDataError(`${where}: ${n} frames span ${fmt(span)} s but the clip's ground truth spans ${fmt(truthSpan)} s`);
  }
}

const fmt = (v: number) => (Math.abs(v) >= 1e4 ? v.toExponential(2) : String(Math.round(v * 1000) / 1000));
