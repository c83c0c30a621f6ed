/**
 * OpenCV's image buffers from huge-page slabs (native/huge_pages.h): the engine's results are the
 * same with the allocator and without it (EGOGEO_HUGE_PAGES=0), it serves the large buffers, and a
 * clip run again reuses its blocks instead of reserving more. Each case runs in a fresh process:
 * the allocator is installed once per process, by the first load of the addon.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { drivingClip } from '../helpers/render.js';

const ADDON = process.env.EGOGEO_NATIVE ?? fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url));
const BUILT = existsSync(ADDON);
if (!BUILT) console.warn(`[egogeo tests] ${ADDON} is not built (npx cmake-js compile): huge-page tests are skipped.`);

/** Child body: the clip three times; prints the results and the allocator's counters after each. */
const BODY = `
const addon = require(process.argv[1]);
const c = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const clip = { ...c, frames: c.frames.map((f) => ({ ...f, data: Uint8Array.from(f.data) })), timestamps: Float64Array.from(c.timestamps) };
const runs = [];
for (let i = 0; i < 3; i++) {
  const r = addon.processClip(clip, {});
  runs.push({ result: JSON.stringify([r.rotations, r.positions, r.pairs, r.speeds]), stats: addon.hugePages() });
}
console.log(JSON.stringify({ buildType: addon.buildType, runs }));
`;

function child(env: Record<string, string>) {
  const c = drivingClip({ frames: 6, speed: 10, yawRate: 0.05, seed: 11 });
  const input = JSON.stringify({ frames: c.frames.map((f) => ({ ...f, data: Array.from(f.data) })), timestamps: Array.from(c.timestamps), intrinsics: c.intrinsics });
  const { EGOGEO_HUGE_PAGES: _drop, ...base } = process.env;
  const r = spawnSync(process.execPath, ['-e', BODY, ADDON], { input, encoding: 'utf8', env: { ...base, ...env }, timeout: 60_000, maxBuffer: 1 << 26 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string);
}

describe.skipIf(!BUILT)('image buffers from huge-page slabs', () => {
  it('the same results with and without the allocator; blocks served, then reused', () => {
    const on = child({});
    const off = child({ EGOGEO_HUGE_PAGES: '0' });
    expect(off.runs.every((r: { stats: unknown }) => r.stats === null)).toBe(true);
    for (const k of [0, 1, 2]) expect(on.runs[k].result).toBe(off.runs[0].result);
    if (on.buildType === 'asan') {
      // Sanitizer builds keep OpenCV's own allocation, so that ASan sees every buffer.
      expect(on.runs[0].stats).toBeNull();
      return;
    }
    const [a, b, c] = on.runs.map((r: { stats: { slabBytes: number; blocksInUse: number; blocksServed: number } }) => r.stats);
    expect(a.blocksServed).toBeGreaterThan(0);
    expect(a.slabBytes).toBeGreaterThan(0);
    // The second and third runs take the first one's freed blocks: no new slab, the same blocks held.
    expect(c.slabBytes).toBe(a.slabBytes);
    expect(c.blocksInUse).toBe(b.blocksInUse);
    expect(c.blocksServed - b.blocksServed).toBe(b.blocksServed - a.blocksServed);
  }, 90_000);
});
