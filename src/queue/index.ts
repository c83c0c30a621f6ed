export { DEFAULT_QUEUE_NAME, type QueueTarget } from './connection.js';
export { decodeTask, encodeTask, jobId, mapPath, mapTask, type PathMap } from './codec.js';
export { queueExecutor, type QueueExecutorOptions } from './coordinator.js';
export { runQueueWorker, type QueueWorkerOptions, type QueueWorkerSummary } from './worker.js';
