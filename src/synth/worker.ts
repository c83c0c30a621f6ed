/**
 * The pool worker of `egogeo synth`: renders one clip (native renderClip, synchronously — the
 * pool supplies the parallelism) into the staging folder, as JPEG frames or one mp4.
 *
 * JPEG encoder: libjpeg inside the render call by default ('opencv': the bytes cv::imencode wrote,
 * which it replaced). Measured at 1280×720 greyscale, quality 90, one core (bench/render.mjs,
 * bench/results/render.json): ~1.9 ms a frame;
 * sharp (libvips + mozjpeg) ~9 ms a frame plus a copy of every raw frame into JS. `encoder:
 * 'sharp'` keeps that path available (and measured).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { native } from '../native/index.js';
import { transportErrors } from '../pool/transport.js';
import type { RenderTask, RenderTaskResult } from './task.js';

sharp.concurrency(1); // the pool supplies the parallelism (the addon keeps OpenCV to one thread itself)

async function run(task: RenderTask): Promise<RenderTaskResult> {
  if (task.video) {
    mkdirSync(join(task.stage, 'videos'), { recursive: true });
    const r = native().renderClip({
      ...task.request,
      output: { pixels: false, videoPath: join(task.stage, task.videoPath), videoFps: task.fps },
    });
    return { id: task.id, frames: task.request.trajectory.t.length, bytes: 0, timing: r.timing };
  }
  mkdirSync(join(task.stage, 'frames', task.id), { recursive: true });
  let bytes = 0;
  if (task.encoder === 'sharp') {
    const r = native().renderClip({ ...task.request, output: { pixels: true } });
    const t0 = performance.now();
    for (let k = 0; k < r.frames.length; k++) {
      const jpg = await sharp(r.frames[k], { raw: { width: r.width, height: r.height, channels: 1 } })
        .jpeg({ quality: task.jpegQuality })
        .toBuffer();
      writeFileSync(join(task.stage, task.framePaths[k]), jpg);
      bytes += jpg.length;
    }
    return { id: task.id, frames: r.frames.length, bytes, timing: { ...r.timing, encode: performance.now() - t0 } };
  }
  const r = native().renderClip({ ...task.request, output: { pixels: false, jpeg: true, jpegQuality: task.jpegQuality } });
  r.jpegs.forEach((jpg, k) => {
    writeFileSync(join(task.stage, task.framePaths[k]), jpg);
    bytes += jpg.length;
  });
  return { id: task.id, frames: r.jpegs.length, bytes, timing: r.timing };
}

export default transportErrors(run);
