import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { FEATURE_NAMES, loadQuestions, runOracle } from '../../src/oracle/index.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

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

const FIXTURE = fileURLToPath(new URL('../fixtures/reference/oracle_cases_excerpt.jsonl', import.meta.url));
const readCases = (file: string): GoldenCase[] => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

/** Every case through the oracle: arrays and features within 1e-9, labels exact; returns the mismatches. */
function mismatches(cases: readonly GoldenCase[], questions: ReturnType<typeof loadQuestions>): string[] {
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
    const keys = (o: object) => Object.keys(o).sort().join(',');
    if (keys(e.labels) !== keys(r.labels)) failures.push(`${c.id} label keys: ${keys(r.labels)} != ${keys(e.labels)}`);
    for (const [q, want] of Object.entries(e.labels)) {
      if (r.labels[q] !== want) failures.push(`${c.id} label ${q}: ${r.labels[q]} != ${want}`);
    }
  }
  return failures;
}

describe('oracle parity with the published reference (test/fixtures/reference excerpt)', () => {
  it('24 synthetic golden cases, every label of every question among them', () => {
    const cases = readCases(FIXTURE);
    const questions = loadQuestions();
    expect(cases).toHaveLength(24);
    for (const q of questions.questions) {
      const seen = new Set(cases.map((c) => c.expected.labels[q.id].toLowerCase()));
      expect([...seen].sort(), q.id).toEqual([...(q.choices ?? [])].sort());
    }
    expect(mismatches(cases, questions)).toEqual([]);
  });
});

describe.skipIf(!needsShared('oracle parity on all 464 golden cases', 'golden/oracle_cases.jsonl', 'reference/questions_template.yaml'))(
  'oracle parity with the published reference (../shared/golden)',
  () => {
    it('all 464 golden cases (synthetic and KITTI)', () => {
      const cases = readCases(sharedPath('golden/oracle_cases.jsonl'));
      expect(cases).toHaveLength(464);
      expect(mismatches(cases, loadQuestions(sharedPath('reference/questions_template.yaml'))).slice(0, 20)).toEqual([]);
    });
  },
);
