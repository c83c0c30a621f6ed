/** `egogeo synth` and `egogeo demo` in-process: one-line errors for bad options, and small real runs. */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

const READY = existsSync(fileURLToPath(new URL('../../build/Release/egogeo_native.node', import.meta.url))) &&
  existsSync(fileURLToPath(new URL('../../dist/synth/worker.js', import.meta.url)));
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-synth-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));


describe('egogeo synth / demo option errors', () => {
  it.each([
    [['synth', '--out', join(tmp, 'x'), '--clips', '0'], /--clips must be an integer in \[1, 1000000\], got '0'/],
    [['synth', '--out', join(tmp, 'x'), '--seed', '1.5'], /--seed must be an integer/],
    [['synth', '--out', join(tmp, 'x'), '--preset', 'waymo'], /--preset must be one of carla, nuscenes, mixed, got 'waymo'/],
    [['synth', '--out', join(tmp, 'x'), '--profile', 'reckless'], /--profile must be one of balanced, comfort, default, sporty, safety/],
    [['synth', '--out', join(tmp, 'x'), '--encoder', 'png'], /--encoder must be opencv or sharp/],
    [['synth', '--out', join(tmp, 'x'), '--noise', '-1'], /--noise must be a number in \[0, 50\]/],
    [['synth', '--out', join(tmp, 'x'), '--blur', '99'], /--blur must be an integer in \[1, 16\]/],
    [['synth', '--out', join(tmp, 'x'), '--speed', '33:20'], /--speed must be MIN:MAX in m\/s with 0 <= MIN <= MAX <= 60 \(e\.g\. 20:33\), got '33:20'/],
    [['synth', '--out', join(tmp, 'x'), '--speed', 'fast'], /--speed must be MIN:MAX/],
    [['demo', '--clips', 'many'], /--clips must be an integer/],
    [['demo', '--frames', '1'], /--frames must be 'all' or an integer >= 2, got '1'/],
  ])('%j → exit 1 with one line', async (args, msg) => {
    const r = await cli(...(args as string[]));
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(msg);
    expect(existsSync(join(tmp, 'x'))).toBe(false);
  });

  it('synth without --out is a usage error', async () => {
    const r = await cli('synth');
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/--out/);
  });
});

describe.skipIf(!READY)('egogeo synth / demo runs', () => {
  it('synth writes the layout and prints the answer distribution (sharp encoder)', async () => {
    const out = join(tmp, 'one');
    const r = await cli('synth', '--clips', '1', '--seed', '4', '--out', out, '--workers', '1', '--encoder', 'sharp', '--profile', 'comfort', '--no-progress');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/wrote 1 clips \(31 frames/);
    expect(r.out).toMatch(/speed_regime\s+stopped \d+, slow \d+, urban \d+, highway \d+/);
    expect(readdirSync(out).sort()).toEqual(['arrays', 'clips_index.jsonl', 'frames', 'metadata.json', 'qa.jsonl']);
    expect(readdirSync(join(out, 'frames'))[0]).toMatch(/^synth4__comfort__w0000$/);
  });

  it('demo renders, runs the baseline and prints the per-question table and per-source summary', async () => {
    const r = await cli('demo', '--clips', '2', '--preset', 'mixed', '--workers', '2', '--no-progress', '--out', join(tmp, 'demo'));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/yaw_rate_turn_direction\s+direct_dynamics\s+\*\s+2\s+\d\.\d{3}/);
    expect(r.out).toMatch(/pooled, 6-question subset\s+n\s+12/);
    expect(r.out).toMatch(/synthetic-carla\s+14/);
    expect(r.out).toMatch(/synthetic-nuscenes\s+14/);
    expect(existsSync(join(tmp, 'demo', 'qa.jsonl'))).toBe(true);
  });
});
