/** `egogeo calibrate` in-process. */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-cli-cal-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));


const grid = Array.from({ length: 31 }, (_, i) => i / 10);
// straight runs at 1.25, 2.25, ..., 8.25 m/s: max speed = v
const input = join(tmp, 'runs.jsonl');
writeFileSync(
  input,
  Array.from({ length: 8 }, (_, i) => {
    const v = i + 1.25;
    return JSON.stringify({ id: `v${i}`, timestamps: grid, x: grid.map((t) => v * t), y: grid.map(() => 0), yaw: grid.map(() => 0) });
  }).join('\n'),
);

describe('egogeo calibrate', () => {
  it('prints the tables and writes the JSON report', async () => {
    const json = join(tmp, 'report.json');
    const { code, out, err } = await cli('calibrate', input, '--json', json);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('Summary features over 8 trajectories');
    expect(out).toMatch(/^max_speed\s+8\s+4\.7500\s/m);
    expect(out).toContain('braking_intensity: min(accel)');
    expect(out).toMatch(/speed_regime \(max_speed\)\s+configured\s+0\.5, 5, 13\.9\s+stopped 0\.0%, slow 50\.0%, urban 50\.0%, highway 0\.0%/);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    expect(report.n).toBe(8);
    expect(report.questions).toHaveLength(14);
    const sr = report.questions.find((q: { id: string }) => q.id === 'speed_regime');
    // percentiles 25/50/75 of 1.25..8.25: 1.25 + q·7 → 3.0, 4.75, 6.5
    expect(sr.multiThreshold.equalFrequency.thresholds.map((v: number) => +v.toFixed(9))).toEqual([3, 4.75, 6.5]);
    expect(sr.multiThreshold.equalFrequency.balance).toEqual({ stopped: 0.25, slow: 0.25, urban: 0.25, highway: 0.25 });
  });

  it('--questions selects questions in the given order', async () => {
    const json = join(tmp, 'two.json');
    const { code } = await cli('calibrate', input, '--questions', 'stop_and_go, speed_trend', '--json', json);
    expect(code).toBe(0);
    expect(JSON.parse(readFileSync(json, 'utf8')).questions.map((q: { id: string }) => q.id)).toEqual(['stop_and_go', 'speed_trend']);
  });

  it('an unknown question is exit 1 with one stderr line, and no JSON file', async () => {
    const json = join(tmp, 'never.json');
    const { code, out, err } = await cli('calibrate', input, '--questions', 'speed_trend,warp_speed', '--json', json);
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err.split('\n').filter(Boolean)).toEqual([expect.stringMatching(/--questions: unknown question 'warp_speed' \(known: yaw_rate_turn_direction, /)]);
    expect(existsSync(json)).toBe(false);
  });

  it('bad input names file:line and field, exit 1, no JSON file', async () => {
    const bad = join(tmp, 'bad.jsonl');
    writeFileSync(bad, `${JSON.stringify({ id: 'a', timestamps: [0, 1], x: [0, 1], y: [0, 0], yaw: [0, 0] })}\n{"id": "b", "timestamps": [0, 1], "x": [0, 1], "y": [0, 0]}\n`);
    const json = join(tmp, 'never2.json');
    const { code, err } = await cli('calibrate', bad, '--json', json);
    expect(code).toBe(1);
    expect(err).toBe(`egogeo: ${bad}:2: missing field 'yaw'\n`);
    expect(existsSync(json)).toBe(false);
  });
});
