export { DEFAULT_QUEUE_NAME, parseQueueUrl, type QueueTarget } from './connection.js';
export { decodeTask, encodeTask, jobId, mapPath, mapTask, parsePathMap, type PathMap } from './codec.js';
export { queueExecutor, type QueueExecutorOptions } from './coordinator.js';
export { runQueueWorker, type QueueWorkerOptions, type QueueWorkerSummary } from './worker.js';
