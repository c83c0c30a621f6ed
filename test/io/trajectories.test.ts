/** Trajectory file formats on files the tests write themselves (no ../shared needed). */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { InputError } from '../../src/core/errors.js';
import {
  detectFormat,
  formatTrajectoryJsonl,
  formatTum,
  measuredFromTum,
  parseTrajectoriesJsonl,
  parseTum,
  quatToMatrix,
  readKitti,
  readKittiWindows,
  readTrajectories,
  readTum,
  windows,
  writeTrajectoriesJsonl,
  writeTum,
} from '../../src/io/trajectories.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-io-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const p = join(tmp, name);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, text);
  return p;
};
const errorOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    const msg = (e as Error).message;
    expect(msg).not.toContain('\n');
    return msg;
  }
  throw new Error('expected an InputError');
};

/** A KITTI pose row for planar (X, Y, yaw): camera rotated about its y (down) axis by -yaw. */
function kittiRow(X: number, Y: number, yaw: number): string {
  const c = Math.cos(-yaw), s = Math.sin(-yaw);
  // R_y(θ) = [[c, 0, s], [0, 1, 0], [-s, 0, c]], t = (-Y, 0, X)
  return [c, 0, s, -Y, 0, 1, 0, 0, -s, 0, c, X].join(' ');
}

describe('JSONL', () => {
  it('reads flat and golden-form lines, skipping blank lines', () => {
    const text = [
      JSON.stringify({ id: 'a', timestamps: [0, 1], x: [0, 1], y: [0, 0], yaw: [0, 0], duration: 3 }),
      '',
      '   ',
      JSON.stringify({ id: 'b', source: 'kitti', input: { timestamps: [0, 0.5, 1], x: [1, 2, 3], y: [0, 0, 0], yaw: [0, 0.1, 0.2] } }),
    ].join('\n');
    const [a, b] = parseTrajectoriesJsonl(text, 'f.jsonl');
    expect(a.id).toBe('a');
    expect(Array.from(a.x)).toEqual([0, 1]);
    expect(b.id).toBe('b');
    expect(Array.from(b.yaw)).toEqual([0, 0.1, 0.2]);
  });

  it('round-trips through formatTrajectoryJsonl and writeTrajectoriesJsonl', () => {
    const t = makeTrajectory('r', { t: [0, 0.1, 0.25], x: [0.1, 0.2, 1 / 3], y: [-1, -2, -3], yaw: [3.1, -3.1, 0] });
    const [back] = parseTrajectoriesJsonl(formatTrajectoryJsonl(t));
    expect(back).toEqual(t);
    const p = join(tmp, 'written.jsonl');
    writeTrajectoriesJsonl(p, [t, { ...t, id: 'r2' }]);
    expect(readTrajectories(p).map((x) => x.id)).toEqual(['r', 'r2']);
    expect(readTrajectories(p)[0]).toEqual(t);
  });

  it('names file:line and the field in every error', () => {
    const line = (o: object): string => JSON.stringify(o);
    const ok = { id: 'ok', timestamps: [0, 1], x: [0, 1], y: [0, 0], yaw: [0, 0] };
    const cases: [string, string, RegExp][] = [
      ['missing yaw', line({ ...ok, yaw: undefined }), /^f\.jsonl:2: missing field 'yaw'$/],
      ['missing id', line({ ...ok, id: undefined }), /^f\.jsonl:2: missing field 'id'$/],
      ['null element', line({ ...ok, x: [0, null] }), /^f\.jsonl:2: field 'x'\[1\] must be a finite number, got null$/],
      ['string element', line({ ...ok, y: [0, '1'] }), /^f\.jsonl:2: field 'y'\[1\] must be a finite number/],
      ['NaN literal', '{"id": "n", "timestamps": [0, 1], "x": [0, NaN], "y": [0, 0], "yaw": [0, 0]}', /^f\.jsonl:2: field 'x'\[1\] \(NaN\) is not valid JSON/],
      ['Infinity literal', '{"id": "n", "input": {"timestamps": [0, 1], "x": [0, 1], "y": [0, 0], "yaw": [-Infinity, 0]}}', /^f\.jsonl:2: field 'input\.yaw'\[0\] \(-Infinity\)/],
      ['broken JSON', '{"id": "b", "x": [0, 1', /^f\.jsonl:2: invalid JSON \(/],
      ['not an object', '[1, 2]', /^f\.jsonl:2: expected a JSON object/],
      ['one sample', line({ ...ok, timestamps: [0], x: [0], y: [0], yaw: [0] }), /^f\.jsonl:2: field 'timestamps' needs at least 2 samples, got 1$/],
      ['non-increasing', line({ ...ok, timestamps: [0, 1, 1], x: [0, 1, 2], y: [0, 0, 0], yaw: [0, 0, 0] }), /^f\.jsonl:2: field 'timestamps' must be strictly increasing \(sample 2: 1 after 1\)$/],
      ['length mismatch', line({ ...ok, x: [0, 1, 2] }), /^f\.jsonl:2: field 'x' has 3 samples but 'timestamps' has 2$/],
      ['golden-form missing field', line({ id: 'g', input: { timestamps: [0, 1], x: [0, 1], y: [0, 0] } }), /^f\.jsonl:2: missing field 'input\.yaw'$/],
      ['duplicate id', line({ ...ok, id: 'first' }), /^f\.jsonl:2: field 'id' 'first' repeats the id of line 1$/],
    ];
    for (const [name, bad, re] of cases) {
      const text = `${line({ ...ok, id: 'first' })}\n${bad}\n`;
      expect(errorOf(() => parseTrajectoriesJsonl(text, 'f.jsonl')), name).toMatch(re);
    }
  });
});

describe('KITTI', () => {
  // A camera driving at 10 m/s while turning left at 0.2 rad/s, 10 Hz, 40 frames.
  const n = 40;
  const rows: string[] = [], times: string[] = [];
  for (let i = 0; i < n; i++) {
    const t = i * 0.1, yaw = 0.2 * t, r = 50;
    rows.push(kittiRow(r * Math.sin(yaw), r * (1 - Math.cos(yaw)), yaw));
    times.push(t.toExponential(6));
  }
  const seq = join(tmp, 'kitti', '07');
  file('kitti/07/poses.txt', `${rows.join('\n')}\n`);
  file('kitti/07/times.txt', `${times.join('\n')}\n`);

  it('converts camera poses to the planar frame: X = t_z, Y = -t_x, yaw = atan2(-R02, R22) (left positive)', () => {
    const tr = readKitti(seq);
    expect(tr.id).toBe('kitti07');
    expect(tr.t.length).toBe(n);
    expect(tr.yaw[10]).toBeCloseTo(0.2, 12);
    expect(tr.x[10]).toBeCloseTo(50 * Math.sin(0.2), 12);
    expect(tr.y[10]).toBeCloseTo(50 * (1 - Math.cos(0.2)), 12);
    expect(tr.y[10]).toBeGreaterThan(0); // a left turn moves to +Y
  });

  it('windows: 31 frames every 5 frames, id kitti{SEQ}_{START:06d}', () => {
    const w = readKittiWindows(seq);
    expect(w.map((x) => x.id)).toEqual(['kitti07_000000', 'kitti07_000005']);
    expect(w[1].t[0]).toBeCloseTo(0.5, 12);
    expect(w[1].t.length).toBe(31);
    expect(readTrajectories(seq, { windows: true }).map((x) => x.id)).toEqual(w.map((x) => x.id));
    expect(windows(readKitti(seq), 31, 5)).toEqual(w);
  });

  it('a separate times file can be given', () => {
    const times2 = file('kitti-times/other.txt', `${times.join('\n')}\n`);
    expect(readKitti(join(seq, 'poses.txt'), { times: times2 }).t).toEqual(readKitti(seq).t);
  });

  it('errors name file:line and field', () => {
    const bad = (name: string, poses: string[], ts: string[]): string => {
      const dir = join(tmp, 'bad', name);
      file(`bad/${name}/poses.txt`, `${poses.join('\n')}\n`);
      file(`bad/${name}/times.txt`, `${ts.join('\n')}\n`);
      return errorOf(() => readKitti(dir));
    };
    expect(bad('count', rows.slice(0, 5), times.slice(0, 4))).toMatch(/poses\.txt: 5 poses but .*times\.txt has 4 timestamps/);
    expect(bad('cols', [rows[0], rows[1].split(' ').slice(0, 11).join(' ')], times.slice(0, 2))).toMatch(/poses\.txt:2: expected a 3x4 pose \(12 numbers\), got 11 columns$/);
    expect(bad('nan', [rows[0], rows[1].replace(/^\S+/, 'nan')], times.slice(0, 2))).toMatch(/poses\.txt:2: field 'R00' \(column 1\) must be a finite number, got 'nan'$/);
    expect(bad('times', rows.slice(0, 3), ['0', '0.2', '0.1'])).toMatch(/times\.txt:3: timestamps must be strictly increasing/);
    expect(bad('one', rows.slice(0, 1), times.slice(0, 1))).toMatch(/poses\.txt: needs at least 2 poses, got 1$/);
    expect(errorOf(() => readKitti(join(tmp, 'nowhere')))).toMatch(/nowhere: cannot read \(no such file\)$/);
  });
});

describe('TUM', () => {
  it('camera frame (default) reads like KITTI: X = tz, Y = -tx, yaw from the camera y-axis rotation', () => {
    const s45 = Math.SQRT1_2;
    const text = [
      '# timestamp tx ty tz qx qy qz qw',
      '0.0 1 0.5 5 0 0 0 1', // identity: X = 5, Y = -1, yaw 0
      `0.1 -2 0.5 6 0 ${-s45} 0 ${s45}`, // rotation -90° about camera y (down) = turned 90° left
    ].join('\n');
    const tr = parseTum(text, 'cam.tum');
    expect(tr.id).toBe('cam');
    expect(Array.from(tr.x)).toEqual([5, 6]);
    expect(Array.from(tr.y)).toEqual([-1, 2]);
    expect(tr.yaw[0]).toBe(0);
    expect(tr.yaw[1]).toBeCloseTo(Math.PI / 2, 12);
  });

  it('world-flu frame: X = tx, Y = ty, yaw = heading of the rotated x axis', () => {
    const s = Math.sin(0.15), c = Math.cos(0.15); // 0.3 rad about z (up): left
    const tr = parseTum(`1 3 4 9 0 0 0 1\n2 5 6 9 0 0 ${s} ${c}\n`, 'w.txt', { frame: 'world-flu' });
    expect(Array.from(tr.x)).toEqual([3, 5]);
    expect(Array.from(tr.y)).toEqual([4, 6]);
    expect(tr.yaw[1]).toBeCloseTo(0.3, 12);
  });

  it('normalises quaternions; rotation matrices are orthonormal', () => {
    const tr = parseTum('0 0 0 0 0 0 0 2\n1 0 0 1 0 -1 0 1\n', 'q.tum');
    expect(tr.yaw[0]).toBe(0);
    expect(tr.yaw[1]).toBeCloseTo(Math.PI / 2, 12);
    const R = quatToMatrix(0.1, 0.2, 0.3, Math.sqrt(1 - 0.14));
    const dot = (i: number, j: number): number => R[i] * R[j] + R[i + 3] * R[j + 3] + R[i + 6] * R[j + 6];
    expect(dot(0, 0)).toBeCloseTo(1, 12);
    expect(dot(0, 1)).toBeCloseTo(0, 12);
  });

  for (const frame of ['camera', 'world-flu'] as const) {
    it(`formatTum → readTum round-trips a planar trajectory (${frame})`, () => {
      const t = [0, 0.1, 0.23, 0.4];
      const tr = makeTrajectory('rt', { t, x: [0, 1, 2.5, 4], y: [0, -0.1, 0.3, 0.9], yaw: [0, 0.5, -2.9, 3.0] });
      const p = join(tmp, `rt-${frame}.tum`);
      writeTum(p, tr, frame);
      expect(readFileSync(p, 'utf8')).toBe(formatTum(tr, frame));
      expect(detectFormat(p)).toBe('tum');
      const back = readTum(p, { frame, id: 'rt' });
      expect(Array.from(back.t)).toEqual(t);
      for (let i = 0; i < t.length; i++) {
        expect(back.x[i]).toBeCloseTo(tr.x[i], 12);
        expect(back.y[i]).toBeCloseTo(tr.y[i], 12);
        expect(back.yaw[i]).toBeCloseTo(tr.yaw[i], 12);
      }
    });
  }

  it('marks the poses measured at frames; the grid points between are the rest; readers skip the marks', () => {
    // Frames at 1e9 + 0, 1/3, 2/3 s with 10 Hz grid points between (vo/densify.ts), absolute times as a run writes them.
    const frames = [1e9, 1e9 + 1 / 3, 1e9 + 2 / 3];
    const t = [frames[0], 1e9 + 0.1, 1e9 + 0.2, 1e9 + 0.3, frames[1], 1e9 + 0.4, 1e9 + 0.5, 1e9 + 0.6, frames[2]];
    const tr = makeTrajectory('g', { t, x: t.map((_, i) => i), y: t.map(() => 0), yaw: t.map(() => 0) });
    const text = formatTum(tr, 'camera', frames);
    const lines = text.split('\n');
    expect(lines[1]).toBe('# 3 of 9 poses measured at frames (timestamps below); the other 6 are grid points interpolated between frames');
    expect(lines[2]).toBe(`# measured ${[frames[0], frames[1], frames[2]].map(String).join(' ')}`);
    expect(measuredFromTum(text)).toEqual(frames);
    // The listed strings are the pose lines' own timestamps, so a script can match them as text.
    for (const s of lines[2].slice(11).split(' ')) expect(lines.some((l) => l.startsWith(`${s} `))).toBe(true);
    // A TUM reader sees the same poses with or without the marks.
    expect(Array.from(parseTum(text, 'g').t)).toEqual(Array.from(parseTum(formatTum(tr), 'g').t));
    expect(measuredFromTum(formatTum(tr))).toBeNull();
    expect(measuredFromTum(`${formatTum(tr)}# measured 1 x\n`)).toBeNull();
  });

  it('errors name file:line and field', () => {
    expect(errorOf(() => parseTum('0 0 0 0 0 0 0 1\n1 0 0 0 0 0 1\n', 'a.tum'))).toBe(
      'a.tum:2: expected timestamp tx ty tz qx qy qz qw (8 numbers), got 7 columns',
    );
    expect(errorOf(() => parseTum('# c\n0 0 0 0 0 0 0 1\n1 0 x 0 0 0 0 1\n', 'a.tum'))).toBe(
      "a.tum:3: field 'ty' (column 3) must be a finite number, got 'x'",
    );
    expect(errorOf(() => parseTum('0 0 0 0 0 0 0 1\n0 0 0 0 0 0 0 1\n', 'a.tum'))).toMatch(/^a\.tum:2: field 'timestamp' must be strictly increasing/);
    expect(errorOf(() => parseTum('0 0 0 0 0 0 0 1\n1 0 0 0 0 0 0 0\n', 'a.tum'))).toMatch(/^a\.tum:2: field 'quaternion'/);
    expect(errorOf(() => parseTum('0 0 0 0 0 0 0 1\n', 'a.tum'))).toBe('a.tum: needs at least 2 poses, got 1');
  });
});

describe('format detection', () => {
  it('directory or poses.txt → kitti; 8-column .txt/.tum → tum; 12-column .txt → kitti; otherwise jsonl', () => {
    const dir = join(tmp, 'det');
    mkdirSync(dir, { recursive: true });
    expect(detectFormat(dir)).toBe('kitti');
    expect(detectFormat(file('det/poses.txt', kittiRow(0, 0, 0)))).toBe('kitti');
    expect(detectFormat(file('det/est.txt', '# header\n0 1 2 3 0 0 0 1\n'))).toBe('tum');
    expect(detectFormat(file('det/other.txt', `${kittiRow(1, 0, 0)}\n`))).toBe('kitti');
    expect(detectFormat(file('det/t.jsonl', '{}\n'))).toBe('jsonl');
    expect(detectFormat(file('det/notes.txt', 'hello world\n'))).toBe('jsonl');
  });
});
