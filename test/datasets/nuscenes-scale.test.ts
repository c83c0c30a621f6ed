/**
 * The real nuScenes `sample_data.json` is ~1 GB: more than one V8 string holds. A 700 MB table made
 * here (rows shaped like nuScenes', indented as it ships) is joined in a child process whose peak
 * RSS must stay under 600 MB; the second join comes from the cache without reading the table.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDist, ROOT } from '../run/fixtures.js';

const SIZE = 700e6;
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-nuscenes-scale-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const free = (() => {
  try {
    const s = statfsSync(tmp);
    return s.bavail * s.bsize;
  } catch {
    return 0;
  }
})();

const tok = (i: number) => i.toString(16).padStart(32, '0');

/** Writes ~SIZE bytes of sample_data rows; returns the tokens picked for clips (spread over the file). */
function bigTable(dir: string): string[] {
  const t = join(dir, 'v1.0-trainval');
  mkdirSync(t, { recursive: true });
  const fd = openSync(join(t, 'sample_data.json'), 'w');
  const picked: string[] = [];
  let bytes = 0, i = 0, chunk: string[] = [];
  writeSync(fd, '[\n');
  const rowsPerPick = 1000;
  while (bytes < SIZE) {
    const us = 1532402927000000 + i * 83333;
    const row =
      `{\n"token": "${tok(i)}",\n"sample_token": "${tok(i >> 3)}",\n"ego_pose_token": "${tok(i + 7)}",\n"calibrated_sensor_token": "${'c'.repeat(32)}",\n` +
      `"timestamp": ${us},\n"fileformat": "jpg",\n"is_key_frame": ${i % 6 === 0},\n"height": 900,\n"width": 1600,\n` +
      `"filename": "sweeps/CAM_FRONT/n015-2018-07-20-11-22-45+0800__CAM_FRONT__${us}.jpg",\n"prev": "${tok(i - 1)}",\n"next": "${tok(i + 1)}"\n},\n`;
    chunk.push(row);
    bytes += row.length;
    if (i % rowsPerPick === 0 && picked.length < 31 * 40) for (let k = 0; k < 31; k++) picked.push(tok(i + k));
    i++;
    if (chunk.length === 4096) {
      writeSync(fd, chunk.join(''));
      chunk = [];
    }
  }
  chunk.push(`{"token": "${'f'.repeat(32)}", "calibrated_sensor_token": "${'c'.repeat(32)}", "timestamp": 1, "filename": "x.jpg"}\n]\n`);
  writeSync(fd, chunk.join(''));
  closeSync(fd);
  writeFileSync(join(t, 'calibrated_sensor.json'), JSON.stringify([{ token: 'c'.repeat(32), sensor_token: 's'.repeat(32), translation: [1.7, 0, 1.51], rotation: [0.5, -0.5, 0.5, -0.5], camera_intrinsic: [[1266, 0, 816], [0, 1266, 491], [0, 0, 1]] }]));
  writeFileSync(join(t, 'sensor.json'), JSON.stringify([{ token: 's'.repeat(32), channel: 'CAM_FRONT', modality: 'camera' }]));
  return picked.filter((p) => parseInt(p, 16) < i);
}

describe.skipIf(free < 2 * SIZE)('a 700 MB sample_data.json', () => {
  it('joins with peak RSS under 600 MB, and the second run uses the cache', () => {
    ensureDist();
    const root = join(tmp, 'nuscenes');
    const tokens = bigTable(root);
    writeFileSync(join(tmp, 'tokens.json'), JSON.stringify(tokens));
    const script = `
      import { readFileSync } from 'node:fs';
      const { joinNuscenes } = await import(${JSON.stringify(join(ROOT, 'dist/datasets/nuscenes.js'))});
      const tokens = JSON.parse(readFileSync(${JSON.stringify(join(tmp, 'tokens.json'))}, 'utf8'));
      const j = joinNuscenes(${JSON.stringify(root)}, tokens, { cacheDir: ${JSON.stringify(join(tmp, 'cache'))} });
      const ts = tokens.map((t) => j.frames.get(t)?.timestamp);
      console.log(JSON.stringify({ cached: j.cached, frames: j.frames.size, sensors: j.sensors.size, missing: j.missing.size, ok: ts.every((t) => t > 0), maxRssMB: process.resourceUsage().maxRSS / 1024 }));
    `;
    const run = () => {
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(r.stderr);
      return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { cached: boolean; frames: number; sensors: number; missing: number; ok: boolean; maxRssMB: number };
    };
    const first = run();
    expect(first).toMatchObject({ cached: false, frames: tokens.length, sensors: 1, missing: 0, ok: true });
    expect(first.maxRssMB).toBeLessThan(600);
    const second = run();
    expect(second).toMatchObject({ cached: true, frames: tokens.length, ok: true });
    console.log(`[nuscenes-scale] ${tokens.length} frames from a ${(SIZE / 1e6).toFixed(0)} MB table: peak RSS ${first.maxRssMB.toFixed(0)} MB (cached run ${second.maxRssMB.toFixed(0)} MB)`);
  }, 300_000);
});
