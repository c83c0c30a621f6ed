/**
 * Hostile inputs, round 3 (issue 54, second half): trajectories whose dynamics overflow, replies
 * grouped by clip exactly as the reference's Python splits them, egogeo's own datasets through
 * `validate`, and prediction files the reference grades with unparsed records.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.js';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { computeDynamics, loadQuestions, runOracle, summaryFeatures } from '../../src/oracle/index.js';
import { cli, ensureDist } from '../run/fixtures.js';

let tmp = '';
beforeAll(() => {
  ensureDist();
  tmp = mkdtempSync(join(tmpdir(), 'egogeo-hostile3b-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const oneLine = (s: string) => {
  expect(s).not.toMatch(/\n\s+at |terminate called|Aborted|core dumped/);
  expect(s.trim().split('\n')).toHaveLength(1);
};
const t7 = [0, 0.5, 1, 1.5, 2, 2.5, 3];
const zeros = (n: number) => new Array<number>(n).fill(0);
/** Finite positions whose differences overflow, and microsecond timestamps (a 0.1 s grid step vanishes). */
const overflowing = () => makeTrajectory('huge', { t: t7, x: [0, 1e300, -1e300, 0, 1e300, 0, 1], y: zeros(7), yaw: zeros(7) });
const microseconds = () => {
  const t = Array.from({ length: 31 }, (_, i) => 1.7e15 + i * 100_000);
  return makeTrajectory('usec', { t, x: t.map((_, i) => i * 0.5), y: zeros(31), yaw: zeros(31) });
};

describe('overflowing input is refused, never labelled', () => {
  it('the oracle refuses non-finite dynamics with one line naming the trajectory', () => {
    const q = loadQuestions();
    for (const [traj, id] of [[overflowing(), 'huge'], [microseconds(), 'usec']] as const) {
      let err: unknown;
      try {
        runOracle(traj, q);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InputError);
      expect((err as Error).message).toMatch(new RegExp(`^trajectory '${id}': its \\w+ is (NaN|-?Infinity) at sample \\d+`));
    }
  });

  it('arrays read from a file with NaN, or whose products overflow, give no features', () => {
    const a = computeDynamics(makeTrajectory('ok', { t: t7, x: t7.map((s) => 5 * s), y: zeros(7), yaw: t7.map((s) => 0.1 * s) }));
    const nan = { ...a, jerk: Float64Array.from(a.jerk, (v, i) => (i === 3 ? NaN : v)) };
    expect(() => summaryFeatures(nan, "clip 'c1'")).toThrow(/^clip 'c1': feature '(max_abs_jerk|p95_abs_jerk|mean_abs_jerk)' is NaN/);
    const big = { ...a, speed: a.speed.map(() => 1e300), yaw_rate: a.yaw_rate.map(() => 1e300) };
    expect(() => summaryFeatures(big, 'x')).toThrow(/feature '(mean_speed|max_lateral_accel)' is Infinity/);
  });

  it('egogeo oracle: exit 1 and one line naming the trajectory (was features: null with labels, exit 0)', () => {
    for (const [traj, id] of [[overflowing(), 'huge'], [microseconds(), 'usec']] as const) {
      const f = join(tmp, `${id}.jsonl`);
      writeFileSync(f, `${JSON.stringify({ id, timestamps: Array.from(traj.t), x: Array.from(traj.x), y: Array.from(traj.y), yaw: Array.from(traj.yaw) })}\n`);
      const r = cli(['oracle', f, '-o', join(tmp, `${id}.out.jsonl`)]);
      expect(r.code, r.stdout).toBe(1);
      oneLine(r.stderr.replace(/^egogeo: note: .*\n/m, ''));
      expect(r.stderr).toContain(`trajectory '${id}'`);
      expect(() => readFileSync(join(tmp, `${id}.out.jsonl`))).toThrow();
    }
  });
});
