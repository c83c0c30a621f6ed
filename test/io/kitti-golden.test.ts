/**
 * The KITTI windows of ../shared/data/kitti/{00,01,06}, read from poses.txt + times.txt, are the
 * golden file's last 64 cases: same ids, same planar inputs, and the oracle (library and CLI)
 * reproduces their arrays, features and labels.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { readKittiWindows, readTrajectories } from '../../src/io/trajectories.js';
import { FEATURE_NAMES, loadQuestions, runOracle } from '../../src/oracle/index.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

interface GoldenCase {
  id: string;
  source: string;
  input: { timestamps: number[]; x: number[]; y: number[]; yaw: number[] };
  expected: {
    arrays: Record<string, number[]> & { position: { x: number[]; y: number[] } };
    features: Record<string, number>;
    labels: Record<string, string>;
  };
}

const close = (a: number, b: number, tol = 1e-9): boolean => Math.abs(a - b) <= tol || Math.abs(a - b) <= tol * Math.abs(b);

function compareArrays(id: string, got: Record<string, ArrayLike<number>>, want: GoldenCase['expected']['arrays']): string[] {
  const fails: string[] = [];
  const pairs: [string, ArrayLike<number>, number[]][] = [
    ['timestamps', got.timestamps, want.timestamps],
    ['position.x', got.x, want.position.x],
    ['position.y', got.y, want.position.y],
    ['yaw', got.yaw, want.yaw],
    ['speed', got.speed, want.speed],
    ['accel', got.accel, want.accel],
    ['yaw_rate', got.yaw_rate, want.yaw_rate],
    ['jerk', got.jerk, want.jerk],
  ];
  for (const [name, g, w] of pairs) {
    if (g.length !== w.length) fails.push(`${id} ${name}: length ${g.length} != ${w.length}`);
    for (let i = 0; i < w.length; i++) {
      if (!close(g[i], w[i])) {
        fails.push(`${id} ${name}[${i}]: ${g[i]} != ${w[i]}`);
        break;
      }
    }
  }
  return fails;
}

const HAVE = needsShared('KITTI windows against the golden KITTI cases', 'golden/oracle_cases.jsonl', 'reference/questions_template.yaml', 'data/kitti/00', 'data/kitti/01', 'data/kitti/06');

describe.skipIf(!HAVE)('KITTI windows = the golden KITTI cases (../shared)', () => {
  let kittiGolden: GoldenCase[] = [];
  let questions: ReturnType<typeof loadQuestions>;
  let windows: ReturnType<typeof readKittiWindows> = [];
  let tmp = '';
  beforeAll(() => {
    kittiGolden = readFileSync(sharedPath('golden/oracle_cases.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).slice(-64);
    questions = loadQuestions(sharedPath('reference/questions_template.yaml'));
    windows = ['00', '01', '06'].flatMap((s) => readKittiWindows(sharedPath('data/kitti', s)));
    tmp = mkdtempSync(join(tmpdir(), 'egogeo-kitti-'));
  });
  afterAll(() => tmp && rmSync(tmp, { recursive: true, force: true }));

  it('the last 64 golden cases are exactly the windows of 00 (54), 01 (5) and 06 (5), in order', () => {
    expect(kittiGolden.every((c) => c.source === 'kitti')).toBe(true);
    expect(windows.length).toBe(64);
    expect(windows.map((w) => w.id)).toEqual(kittiGolden.map((c) => c.id));
    expect(windows[0].id).toBe('kitti00_000000');
    expect(windows[53].id).toBe('kitti00_000265');
    expect(windows[63].id).toBe('kitti06_000020');
    expect(windows.every((w) => w.t.length === 31)).toBe(true);
  });

  it('window inputs (timestamps, X = t_z, Y = -t_x, yaw = atan2(-R02, R22)) match the golden inputs', () => {
    const fails: string[] = [];
    windows.forEach((w, k) => {
      const inp = kittiGolden[k].input;
      const pairs: [string, Float64Array, number[], number][] = [
        ['timestamps', w.t, inp.timestamps, 0],
        ['x', w.x, inp.x, 0],
        ['y', w.y, inp.y, 0],
        ['yaw', w.yaw, inp.yaw, 1e-15],
      ];
      for (const [name, g, e, tol] of pairs) {
        for (let i = 0; i < e.length; i++) {
          if (!(Math.abs(g[i] - e[i]) <= tol)) {
            fails.push(`${w.id} ${name}[${i}]: ${g[i]} != ${e[i]}`);
            break;
          }
        }
      }
    });
    expect(fails).toEqual([]);
  });

  it('oracle output on the windows equals the golden arrays, features and labels', () => {
    const fails: string[] = [];
    windows.forEach((w, k) => {
      const e = kittiGolden[k].expected;
      const r = runOracle(w, questions);
      fails.push(...compareArrays(w.id, r.arrays as unknown as Record<string, Float64Array>, e.arrays));
      for (const f of FEATURE_NAMES) if (!close(r.features[f], e.features[f])) fails.push(`${w.id} ${f}: ${r.features[f]} != ${e.features[f]}`);
      expect(r.labels).toEqual(e.labels);
    });
    expect(fails).toEqual([]);
  });

  it('`egogeo oracle DIR --windows --arrays -o` writes the same records for each sequence', async () => {
    const out = join(tmp, 'kitti.jsonl');
    const byId = new Map(kittiGolden.map((c) => [c.id, c]));
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let n = 0;
    try {
      for (const seq of ['00', '01', '06']) {
        const code = await main(['node', 'egogeo', 'oracle', sharedPath('data/kitti', seq), '--windows', '--arrays', '-o', out]);
        expect(code).toBe(0);
        const recs = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
        for (const rec of recs) {
          const c = byId.get(rec.id)!;
          expect(c, rec.id).toBeDefined();
          expect(rec.labels).toEqual(c.expected.labels);
          for (const f of FEATURE_NAMES) expect(close(rec.features[f], c.expected.features[f]), `${rec.id} ${f}`).toBe(true);
          const a = rec.arrays;
          const flat = { ...a, x: a.position.x, y: a.position.y };
          expect(compareArrays(rec.id, flat, c.expected.arrays)).toEqual([]);
          n++;
        }
      }
      expect(err).not.toHaveBeenCalled();
    } finally {
      err.mockRestore();
    }
    expect(n).toBe(64);
  });

  it('`egogeo oracle DIR` reads a KITTI sequence folder as egogeo run does (its windows); its poses.txt alone stays one trajectory', async () => {
    const a = join(tmp, 'dir.jsonl'), b = join(tmp, 'win.jsonl'), c = join(tmp, 'poses.jsonl');
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await main(['node', 'egogeo', 'oracle', sharedPath('data/kitti/06'), '-o', a])).toBe(0);
      expect(await main(['node', 'egogeo', 'oracle', sharedPath('data/kitti/06'), '--windows', '-o', b])).toBe(0);
      expect(await main(['node', 'egogeo', 'oracle', sharedPath('data/kitti/06/poses.txt'), '-o', c])).toBe(0);
    } finally {
      err.mockRestore();
    }
    expect(readFileSync(a, 'utf8')).toBe(readFileSync(b, 'utf8'));
    expect(readFileSync(a, 'utf8').trim().split('\n').length).toBeGreaterThan(1);
    expect(readFileSync(c, 'utf8').trim().split('\n').map((l) => JSON.parse(l).id)).toEqual(['kitti06']);
  });

  it('auto-detects poses.txt and a whole sequence is one trajectory kitti00 with 300 samples', () => {
    const [whole] = readTrajectories(sharedPath('data/kitti/00/poses.txt'));
    expect(whole.id).toBe('kitti00');
    expect(whole.t.length).toBe(300);
  });
});
