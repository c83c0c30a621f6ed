/** Locates `../shared` (the project's read-only reference data); tests that need it skip without it. */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const SHARED = fileURLToPath(new URL('../../../shared', import.meta.url));
export const HAS_SHARED = existsSync(join(SHARED, 'golden'));
export const sharedPath = (...p: string[]): string => join(SHARED, ...p);

if (!HAS_SHARED) {
  console.warn(`[egogeo tests] ${SHARED} is missing: parity and KITTI tests are skipped (they need ../shared).`);
}
