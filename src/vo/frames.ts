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
  return Array.from({ length: count }, (_, i) => Math.round((i * (n - 1)) / (count - 1)));
}

/** A loaded clip reduced to the given frame indices (its ground truth stays whole: labels come from all of it). */
export function selectFrames(clip: LoadedClip, idx: readonly number[]): LoadedClip {
  return { ...clip, frames: idx.map((i) => clip.frames[i]), timestamps: Float64Array.from(idx, (i) => clip.timestamps[i]) };
}
