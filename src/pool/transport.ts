/**
 * Errors across the worker boundary: a piscina worker that throws loses the error's class and
 * fields (only the message is cloned), so a worker module wraps its task function with
 * `transportErrors` — a failure comes back as data — and the calling thread's `unwrapResult`
 * throws it again as its own class (core/errors.ts), a file-system error with its code, syscall
 * and path.
 */
import { type ErrorData, errorFromData, errorToData } from '../core/errors.js';

export interface Failed {
  egogeoFailure: ErrorData;
}

/** A worker module's task function whose failures are returned as data (`Failed`). */
export function transportErrors<T, R>(fn: (task: T) => Promise<R>): (task: T) => Promise<R | Failed> {
  return async (task) => {
    try {
      return await fn(task);
    } catch (e) {
      return { egogeoFailure: errorToData(e) };
    }
  };
}

/** A worker's result, or its failure thrown as the error it was. */
export function unwrapResult<R>(r: R | Failed): R {
  if (r !== null && typeof r === 'object' && 'egogeoFailure' in r) throw errorFromData((r as Failed).egogeoFailure);
  return r as R;
}
