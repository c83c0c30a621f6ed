/** `egogeo oracle` in-process: output records, formats, options, and one-line errors that leave no file. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { formatTum } from '../../src/io/trajectories.js';
import { loadQuestions, runOracle } from '../../src/oracle/index.js';
import { cli } from '../helpers/cli.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-cli-oracle-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));


const grid = Array.from({ length: 31 }, (_, i) => i / 10);
const straight = { id: 'straight', timestamps: grid, x: grid.map((t) => 10 * t), y: grid.map(() => 0), yaw: grid.map(() => 0) };
const left = { id: 'left', timestamps: grid, x: grid.map((t) => 40 * Math.sin(0.2 * t)), y: grid.map((t) => 40 * (1 - Math.cos(0.2 * t))), yaw: grid.map((t) => 0.2 * t) };
const jsonl = (name: string, lines: string[]): string => {
  const p = join(tmp, name);
  writeFileSync(p, `${lines.join('\n')}\n`);
  return p;
};
const good = jsonl('good.jsonl', [JSON.stringify(straight), '', JSON.stringify(left)]);

describe('egogeo oracle', () => {
  it('writes one {id, features, labels} record per trajectory to stdout', async () => {
    const { code, out, err } = await cli('oracle', good);
    expect(err).toBe('');
    expect(code).toBe(0);
    const recs = out.trim().split('\n').map((l) => JSON.parse(l));
    expect(recs.map((r) => r.id)).toEqual(['straight', 'left']);
    expect(Object.keys(recs[0])).toEqual(['id', 'features', 'labels']);
    expect(recs[0].labels.yaw_rate_turn_direction).toBe('straight');
    expect(recs[1].labels.yaw_rate_turn_direction).toBe('left');
    expect(Object.keys(recs[0].labels)).toHaveLength(14);
    expect(Object.keys(recs[0].features)).toHaveLength(12);
  });

  it('--arrays adds the 31-sample arrays in the golden layout; -o writes the same atomically', async () => {
    const outPath = join(tmp, 'arrays.jsonl');
    const { code, out } = await cli('oracle', good, '--arrays', '-o', outPath);
    expect(code).toBe(0);
    expect(out).toBe('');
    const [rec] = readFileSync(outPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(Object.keys(rec.arrays)).toEqual(['timestamps', 'position', 'yaw', 'speed', 'accel', 'yaw_rate', 'jerk']);
    expect(rec.arrays.position.x).toHaveLength(31);
    const want = runOracle(makeTrajectory('s', { t: straight.timestamps, x: straight.x, y: straight.y, yaw: straight.yaw }), loadQuestions());
    expect(rec.arrays.speed).toEqual(Array.from(want.arrays.speed));
    expect(rec.features).toEqual(want.features);
    expect(readdirSync(tmp).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('--threshold-scale 10 multiplies every threshold (the turn becomes straight), --threshold-scale 1 changes nothing', async () => {
    const base = (await cli('oracle', good)).out;
    expect((await cli('oracle', good, '--threshold-scale', '1')).out).toBe(base);
    const big = (await cli('oracle', good, '--threshold-scale', '10')).out.trim().split('\n').map((l) => JSON.parse(l));
    // 0.2 rad/s < 0.4; 0.6 rad < 2.618; speed 10 < 50 → slow regime
    expect(big[1].labels.yaw_rate_turn_direction).toBe('straight');
    expect(big[1].labels.significant_heading_change).toBe('no');
    expect(big[0].labels.speed_regime).toBe('slow');
  });

  it('--duration span uses each trajectory’s own span; a longer-than-3 s input notes the cut on stderr', async () => {
    const t = Array.from({ length: 61 }, (_, i) => i / 10);
    const long = jsonl('long.jsonl', [JSON.stringify({ id: 'long', timestamps: t, x: t.map((s) => 10 * s), y: t.map(() => 0), yaw: t.map(() => 0) })]);
    const a = await cli('oracle', long, '--arrays');
    expect(a.code).toBe(0);
    expect(a.err).toMatch(/note: 1 trajectory spans more than 3 s/);
    expect(JSON.parse(a.out).arrays.speed).toHaveLength(31);
    const b = await cli('oracle', long, '--arrays', '--duration', 'span');
    expect(b.err).toBe('');
    expect(JSON.parse(b.out).arrays.speed).toHaveLength(61);
  });

  it('reads TUM files (auto-detected and with --tum, both frames) and windows them', async () => {
    const t = Array.from({ length: 41 }, (_, i) => i / 10);
    const tr = makeTrajectory('cam', { t, x: t.map((s) => 40 * Math.sin(0.2 * s)), y: t.map((s) => 40 * (1 - Math.cos(0.2 * s))), yaw: t.map((s) => 0.2 * s) });
    const cam = join(tmp, 'cam.txt');
    writeFileSync(cam, formatTum(tr, 'camera'));
    const flu = join(tmp, 'flu.tum');
    writeFileSync(flu, formatTum(tr, 'world-flu'));
    const r1 = await cli('oracle', cam, '--windows');
    expect(r1.code).toBe(0);
    const recs = r1.out.trim().split('\n').map((l) => JSON.parse(l));
    expect(recs.map((r) => r.id)).toEqual(['cam_000000', 'cam_000005', 'cam_000010']);
    expect(recs.every((r) => r.labels.yaw_rate_turn_direction === 'left')).toBe(true);
    const r2 = await cli('oracle', flu, '--tum', '--tum-frame', 'world-flu');
    expect(JSON.parse(r2.out).labels.yaw_rate_turn_direction).toBe('left');
    // the wrong frame misreads it (the camera convention sees no rotation about its y axis)
    const r3 = await cli('oracle', flu, '--tum', '--tum-frame', 'camera');
    expect(JSON.parse(r3.out).labels.yaw_rate_turn_direction).not.toBe('left');
  });
});

describe('egogeo oracle: bad input → exit 1, one stderr line naming file:line and field, no output file', () => {
  const line = (o: object): string => JSON.stringify(o);
  const cases: [string, string[], RegExp][] = [
    ['missing field', [line(straight), line({ ...left, x: undefined })], /:2: missing field 'x'$/],
    ['NaN literal', [line(straight), line(left).replace(/"y":\[0,/, '"y":[NaN,')], /:2: field 'y'\[0\] \(NaN\) is not valid JSON/],
    ['null element', [line({ ...straight, yaw: [0, null, ...straight.yaw.slice(2)] })], /:1: field 'yaw'\[1\] must be a finite number, got null$/],
    ['one sample', [line({ id: 'one', timestamps: [0], x: [0], y: [0], yaw: [0] })], /:1: field 'timestamps' needs at least 2 samples, got 1$/],
    ['non-increasing timestamps', [line({ ...straight, timestamps: [...grid.slice(0, 5), grid[3], ...grid.slice(6)] })], /:1: field 'timestamps' must be strictly increasing \(sample 5: 0\.3 after 0\.4\)$/],
    ['invalid JSON', [line(straight), '{"id": "x", '], /:2: invalid JSON/],
  ];
  for (const [name, lines, re] of cases) {
    it(name, async () => {
      const input = jsonl(`bad-${name.replace(/\W+/g, '-')}.jsonl`, lines);
      const outPath = join(tmp, `out-${name.replace(/\W+/g, '-')}.jsonl`);
      const { code, out, err } = await cli('oracle', input, '-o', outPath);
      expect(code).toBe(1);
      expect(out).toBe('');
      const errLines = err.split('\n').filter(Boolean);
      expect(errLines).toHaveLength(1);
      expect(errLines[0]).toContain(`${input}:`);
      expect(errLines[0]).toMatch(re);
      expect(existsSync(outPath)).toBe(false);
      expect(readdirSync(tmp).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    });
  }

  it('a bad --threshold-scale, --duration or --tum-frame is one line and exit 1', async () => {
    for (const args of [['--threshold-scale', 'abc'], ['--threshold-scale', '0'], ['--threshold-scale', '-1'], ['--duration', 'long'], ['--tum-frame', 'enu']]) {
      const outPath = join(tmp, 'never.jsonl');
      const { code, err } = await cli('oracle', good, ...args, '-o', outPath);
      expect(code, args.join(' ')).toBe(1);
      expect(err.split('\n').filter(Boolean)).toHaveLength(1);
      expect(err).toContain(args[0]);
      expect(existsSync(outPath)).toBe(false);
    }
  });

  it('a missing input file names the path', async () => {
    const { code, err } = await cli('oracle', join(tmp, 'missing.jsonl'));
    expect(code).toBe(1);
    expect(err).toMatch(/missing\.jsonl: cannot read \(no such file\)\n$/);
  });

  it('a failing -o leaves the previous file untouched', async () => {
    const outPath = join(tmp, 'keep.jsonl');
    writeFileSync(outPath, 'previous\n');
    const bad = jsonl('bad-keep.jsonl', [line({ ...straight, x: undefined })]);
    expect((await cli('oracle', bad, '-o', outPath)).code).toBe(1);
    expect(readFileSync(outPath, 'utf8')).toBe('previous\n');
  });
});

describe('oracle, calibrate, sensitivity and audit shortcut on a dataset folder (its clips\u2019 ground truth)', () => {
  // EgoDyn-Bench as published, made here: nuscenes_clips/ with records, npz arrays (the oracle's
  // dynamics of analytic drives) and QA, and selected_clips.json with the answers.
  const questions = loadQuestions();
  const root = join(tmp, 'pub', 'egodyn-bench');
  const drives = [straight, left, { ...left, id: 'brake', x: grid.map((t) => 12 * t - 1.5 * t * t), y: grid.map(() => 0), yaw: grid.map(() => 0) }];
  const answers = new Map<string, Record<string, string>>();
  const build = async () => {
    const { mkdirSync } = await import('node:fs');
    const { writeNpz } = await import('../../src/io/npz.js');
    const part = join(root, 'nuscenes_clips');
    mkdirSync(join(part, 'arrays'), { recursive: true });
    const index: string[] = [], qa: string[] = [];
    for (const d of drives) {
      const id = `clip_${d.id}`;
      const r = runOracle(makeTrajectory(id, { t: d.timestamps, x: d.x, y: d.y, yaw: d.yaw }), questions);
      const a = r.arrays;
      writeNpz(join(part, 'arrays', `${id}.npz`), {
        timestamps: a.timestamps,
        position: { shape: [a.x.length, 2], data: Float64Array.from({ length: 2 * a.x.length }, (_, i) => (i % 2 ? a.y[i >> 1] : a.x[i >> 1])) },
        yaw: a.yaw, speed: a.speed, accel: a.accel, yaw_rate: a.yaw_rate, jerk: a.jerk,
      });
      index.push(JSON.stringify({ clip_id: id, frame_tokens: ['t0', 't1'], frame_paths: ['a.jpg', 'b.jpg'], array_ref: `arrays/${id}.npz` }));
      questions.questions.forEach((q, k) => qa.push(JSON.stringify({ qa_id: `qa_${id}_${k}`, clip_id: id, question_id: q.id, category: q.category, answer: r.labels[q.id] })));
      answers.set(id, r.labels);
    }
    writeFileSync(join(part, 'clips_index.jsonl'), `${index.join('\n')}\n`);
    writeFileSync(join(part, 'qa.jsonl'), `${qa.join('\n')}\n`);
    writeFileSync(join(root, 'selected_clips.json'), JSON.stringify([...answers].map(([id, a]) => ({ id, source: 'nuscenes', answers: a, features: {} })).concat([{ id: 'clip_gone', source: 'nuscenes', answers: {}, features: {} }])));
  };

  it('oracle labels every clip from its arrays and reproduces every published answer; a listed clip not present is a note', async () => {
    await build();
    const r = await cli('oracle', root);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/note: 1 clip of .* has no ground truth here/);
    const recs = r.out.trim().split('\n').map((l) => JSON.parse(l) as { id: string; labels: Record<string, string> });
    expect(recs.map((x) => x.id)).toEqual([...answers.keys()]);
    for (const x of recs) expect(x.labels).toEqual(answers.get(x.id));
  });

  it('calibrate and sensitivity take the folder too; audit shortcut reads the published root', async () => {
    await build();
    const c = await cli('calibrate', root);
    expect(c.code, c.err).toBe(0);
    expect(c.out).toMatch(/Summary features over 3 trajectories/);
    const s = await cli('sensitivity', root);
    expect(s.code, s.err).toBe(0);
    expect(s.out).toMatch(/over 3 trajectories/);
    const a = await cli('audit', 'shortcut', '--clips', root, '--by', 'source');
    expect(a.code, a.err).toBe(0);
    expect(a.out).toMatch(/shortcut bound from source alone: 4 clips, 14 questions/);
  });
});

describe.skipIf(!needsShared('oracle over the published stand-in', 'data/published/egodyn-bench/selected_clips.json'))('oracle over the published stand-in (../shared)', () => {
  it("reproduces every answer of selected_clips.json's clips that are present (the reference's own labels)", async () => {
    const root = sharedPath('data/published/egodyn-bench');
    const r = await cli('oracle', root);
    expect(r.code, r.err).toBe(0);
    const labels = new Map(r.out.trim().split('\n').map((l) => JSON.parse(l) as { id: string; labels: Record<string, string> }).map((x) => [x.id, x.labels]));
    const listed = JSON.parse(readFileSync(join(root, 'selected_clips.json'), 'utf8')) as { id: string; answers: Record<string, unknown> }[];
    let n = 0;
    for (const c of listed) {
      if (!labels.has(c.id)) continue;
      for (const [q, a] of Object.entries(c.answers)) {
        expect(labels.get(c.id)![q], `${c.id} ${q}`).toBe(String(a).toLowerCase());
        n++;
      }
    }
    expect(n).toBeGreaterThanOrEqual(630);
  });
});
