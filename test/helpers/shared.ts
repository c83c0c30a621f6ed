/**
 * Locates `../shared` (the project's read-only reference data). A user's clone has none, so every
 * test that needs it asks `needsShared` for the exact files first and skips without them; nothing
 * under it is read while the suite is collected (reads happen inside tests or their beforeAll).
 * EGOGEO_SHARED overrides the location: `.ci/run` points it at a folder that does not exist to run
 * the suite as a fresh clone would.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SHARED = process.env.EGOGEO_SHARED ? resolve(process.env.EGOGEO_SHARED) : fileURLToPath(new URL('../../../shared', import.meta.url));
export const sharedPath = (...p: string[]): string => join(SHARED, ...p);
/** Whether every `rel` path exists under the shared folder (no message: for optional comparisons). */
export const hasShared = (...rel: string[]): boolean => rel.every((r) => existsSync(sharedPath(r)));

const warned = new Set<string>();

/**
 * True when every `rel` path exists under the shared folder; otherwise prints one line naming the
 * first missing one and what is skipped, and returns false (for `describe.skipIf(!…)`).
 */
export function needsShared(what: string, ...rel: string[]): boolean {
  const missing = rel.find((r) => !hasShared(r));
  if (missing === undefined) return true;
  const line = `[egogeo tests] skipped: ${what} (needs ${sharedPath(missing)}, missing)`;
  if (!warned.has(line)) console.warn(line);
  warned.add(line);
  return false;
}
