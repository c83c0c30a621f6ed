/**
 * The pool worker of `egogeo run`: one clip a task (src/run/task.ts). One OpenCV thread per
 * worker (the addon pins it at load) — the pool supplies the parallelism.
 */
import { transportErrors } from '../pool/transport.js';
import { type ClipOutput, type ClipTask, runClipTask } from './task.js';

export default transportErrors((task: ClipTask): Promise<ClipOutput> => runClipTask(task));

/** A one-worker run on the calling thread (src/pool): the engine on libuv's thread pool. */
export function inProcess(task: ClipTask): Promise<ClipOutput> {
  return runClipTask(task, { async: true });
}
