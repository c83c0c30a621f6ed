/**
 * egogeo's errors, one module: what a failure means decides what a run does with it.
 * - InputError: the user's input is wrong (a file, a field, an option) — one line, exit 1.
 * - ClipDataError: one clip's data is missing or unreadable — that clip goes to the errors file,
 *   the run goes on.
 * - CancelledError: the run was interrupted — the clip is neither answered nor failed.
 * - InternalError: the engine failed where its input was fine (a bug) — the run stops, exit 2.
 * Errors cross worker threads as data (`errorToData` / `errorFromData`): a thrown subclass would
 * arrive as a plain Error with its message only. May import: nothing.
 */
export class InputError extends Error {
  override name = 'InputError';
}

export class ClipDataError extends Error {
  override name = 'ClipDataError';
}

export class CancelledError extends Error {
  override name = 'CancelledError';
  constructor(message = 'cancelled: the run was interrupted') {
    super(message);
  }
}

export class InternalError extends Error {
  override name = 'InternalError';
}

/** The native engine's tag on the errors it throws (native/napi_util.h): bad input or its own failure. */
export const NATIVE_INPUT = 'EGOGEO_INPUT';
export const NATIVE_INTERNAL = 'EGOGEO_INTERNAL';

/** An error's first line: the one-line message every report uses. */
export function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split('\n')[0];
}

/** An error as plain data: its kind, message and the fields a file-system error carries. */
export interface ErrorData {
  name: string;
  message: string;
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
}

export function errorToData(e: unknown): ErrorData {
  const x = e as Partial<NodeJS.ErrnoException>;
  const d: ErrorData = { name: e instanceof Error ? e.name : 'Error', message: e instanceof Error ? e.message : String(e) };
  if (typeof x?.code === 'string') d.code = x.code;
  if (typeof x?.errno === 'number') d.errno = x.errno;
  if (typeof x?.syscall === 'string') d.syscall = x.syscall;
  if (typeof x?.path === 'string') d.path = x.path;
  return d;
}

const KINDS: Record<string, new (m: string) => Error> = { InputError, ClipDataError, CancelledError, InternalError };

/** The error `errorToData` described, as its own class again (a file-system error with its fields). */
export function errorFromData(d: ErrorData): Error {
  const E = KINDS[d.name];
  const e = E ? new E(d.message) : new Error(d.message);
  if (!E && d.name !== 'Error') e.name = d.name;
  for (const k of ['code', 'errno', 'syscall', 'path'] as const) if (d[k] !== undefined) Object.assign(e, { [k]: d[k] });
  return e;
}
