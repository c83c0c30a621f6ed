/**
 * The pool worker of `egogeo synth`: renders one clip (native renderClip, synchronously — the
 * pool supplies the parallelism) into the staging folder, as JPEG frames or one mp4.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { native } from '../native/index.js';
import type { RenderTask, RenderTaskResult } from './task.js';

native().setThreads(1);

export default function run(task: RenderTask): RenderTaskResult {
  if (task.video) {
    mkdirSync(join(task.stage, 'videos'), { recursive: true });
    const r = native().renderClip({
      ...task.request,
      output: { pixels: false, videoPath: join(task.stage, task.videoPath), videoFps: task.fps },
    });
    return { id: task.id, frames: task.request.trajectory.t.length, bytes: 0, timing: r.timing };
  }
  const r = native().renderClip({ ...task.request, output: { pixels: false, jpeg: true, jpegQuality: task.jpegQuality } });
  mkdirSync(join(task.stage, 'frames', task.id), { recursive: true });
  let bytes = 0;
  r.jpegs.forEach((jpg, k) => {
    writeFileSync(join(task.stage, task.framePaths[k]), jpg);
    bytes += jpg.length;
  });
  return { id: task.id, frames: r.jpegs.length, bytes, timing: r.timing };
}
