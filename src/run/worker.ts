/**
 * The pool worker of `egogeo run`: one clip a task (src/run/task.ts). One OpenCV thread per
 * worker — the pool supplies the parallelism.
 */
import { native } from '../native/index.js';
import { type ClipOutput, type ClipTask, runClipTask } from './task.js';

native().setThreads(1);

export default function run(task: ClipTask): Promise<ClipOutput> {
  return runClipTask(task);
}

/** A one-worker run on the calling thread (src/pool): the engine on libuv's thread pool. */
export function inProcess(task: ClipTask): Promise<ClipOutput> {
  return runClipTask(task, { async: true });
}
