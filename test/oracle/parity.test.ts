import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { FEATURE_NAMES, loadQuestions, runOracle } from '../../src/oracle/index.js';
import { HAS_SHARED, sharedPath } from '../helpers/shared.js';

interface GoldenCase {
  id: string;
  input: { timestamps: number[]; x: number[]; y: number[]; yaw: number[] };
  expected: {
    arrays: Record<string, number[]> & { position: { x: number[]; y: number[] } };
    features: Record<string, number>;
    labels: Record<string, string>;
  };
}

function close(a: number, b: number): boolean {
  const d = Math.abs(a - b);
  return d <= 1e-9 || d <= 1e-9 * Math.abs(b);
}

describe.skipIf(!HAS_SHARED)('oracle parity with the published reference (../shared/golden)', () => {
  const cases: GoldenCase[] = HAS_SHARED
    ? readFileSync(sharedPath('golden/oracle_cases.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    : [];
  const questions = loadQuestions(sharedPath('reference/questions_template.yaml'));

  it('covers all 464 golden cases', () => {
    expect(cases.length).toBe(464);
  });

  it('arrays and features within 1e-9, labels exact, for every case', () => {
    const failures: string[] = [];
    for (const c of cases) {
      const traj = makeTrajectory(c.id, { t: c.input.timestamps, x: c.input.x, y: c.input.y, yaw: c.input.yaw });
      const r = runOracle(traj, questions);
      const e = c.expected;
      const pairs: [string, ArrayLike<number>, number[]][] = [
        ['timestamps', r.arrays.timestamps, e.arrays.timestamps],
        ['position.x', r.arrays.x, e.arrays.position.x],
        ['position.y', r.arrays.y, e.arrays.position.y],
        ['yaw', r.arrays.yaw, e.arrays.yaw],
        ['speed', r.arrays.speed, e.arrays.speed],
        ['accel', r.arrays.accel, e.arrays.accel],
        ['yaw_rate', r.arrays.yaw_rate, e.arrays.yaw_rate],
        ['jerk', r.arrays.jerk, e.arrays.jerk],
      ];
      for (const [name, got, want] of pairs) {
        if (got.length !== want.length) failures.push(`${c.id} ${name}: length ${got.length} != ${want.length}`);
        for (let i = 0; i < want.length; i++) {
          if (!close(got[i], want[i])) {
            failures.push(`${c.id} ${name}[${i}]: ${got[i]} != ${want[i]}`);
            break;
          }
        }
      }
      for (const f of FEATURE_NAMES) {
        if (!close(r.features[f], e.features[f])) failures.push(`${c.id} feature ${f}: ${r.features[f]} != ${e.features[f]}`);
      }
      expect(Object.keys(e.labels).sort()).toEqual(Object.keys(r.labels).sort());
      for (const [q, want] of Object.entries(e.labels)) {
        if (r.labels[q] !== want) failures.push(`${c.id} label ${q}: ${r.labels[q]} != ${want}`);
      }
    }
    expect(failures.slice(0, 20)).toEqual([]);
  });
});
