/**
 * `egogeo validate`: a clean dataset made here passes; each planted fault (a flipped answer, a
 * missing frame, a reversed timestamp, a NaN in an array, a duplicated id, a sign-flipped yaw rate)
 * is found with exactly one line naming its file and record. With ../shared: the published
 * stand-in and egodyn_kitti pass, and faults planted in a copy of the published layout are found.
 */
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readNpz, writeNpz } from '../../src/io/npz.js';
import { signProblem } from '../../src/datasets/validate.js';
import { cli } from '../helpers/cli.js';
import { cli as cliProcess, ensureDist } from '../run/fixtures.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-validate-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const base = join(tmp, 'base');

interface Qa {
  qa_id: string;
  clip_id: string;
  question_id: string;
  answer: unknown;
  choices?: string[];
}
const lines = (p: string): string[] => readFileSync(p, 'utf8').split('\n').filter(Boolean);
const clipIds = (dir: string): string[] => lines(join(dir, 'clips_index.jsonl')).map((l) => JSON.parse(l).clip_id);

/** A copy of the clean dataset with one fault planted by `plant`. */
function planted(name: string, plant: (dir: string) => void): string {
  const dir = join(tmp, name);
  cpSync(base, dir, { recursive: true });
  plant(dir);
  return dir;
}

function editNpz(path: string, edit: (a: Record<string, Float64Array>) => void): void {
  const raw = readNpz(path);
  const a = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Float64Array.from(v.data)]));
  edit(a);
  writeNpz(path, Object.fromEntries(Object.entries(a).map(([k, v]) => [k, { data: v, shape: raw[k].shape }])));
}

async function validate(dir: string): Promise<{ code: number; findings: string[]; err: string }> {
  const r = await cli('validate', '--dataset', dir, '--no-progress');
  return { code: r.code, findings: r.out.split('\n').filter(Boolean), err: r.err };
}

beforeAll(() => {
  ensureDist();
  const r = cliProcess(['synth', '--clips', '4', '--seed', '5', '--out', base, '--no-progress']);
  if (r.code !== 0) throw new Error(r.stderr);
}, 120_000);

describe('egogeo validate on a dataset made here', () => {
  it('passes the clean dataset: exit 0, no findings, a summary with counts', async () => {
    const r = await validate(base);
    expect(r.findings).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/validated .*base \(benchmark layout\): 4 clips, 56 QA items, 124 frames; no findings/);
  });

  const cases: [string, string, (dir: string) => { file: string; clip: string }][] = [
    [
      'a flipped answer',
      'answer',
      (dir) => {
        const qaPath = join(dir, 'qa.jsonl');
        const qa = lines(qaPath).map((l) => JSON.parse(l) as Qa);
        const k = qa.findIndex((q) => q.question_id === 'mean_speed_low');
        qa[k].answer = qa[k].answer === 'yes' ? 'no' : 'yes';
        writeFileSync(qaPath, qa.map((q) => JSON.stringify(q)).join('\n') + '\n');
        return { file: `qa.jsonl:${k + 1}`, clip: qa[k].clip_id };
      },
    ],
    [
      'a missing frame',
      'frames',
      (dir) => {
        const clip = clipIds(dir)[1];
        unlinkSync(join(dir, 'frames', clip, '000012.jpg'));
        return { file: 'clips_index.jsonl:2', clip };
      },
    ],
    [
      'a reversed timestamp',
      'timestamps',
      (dir) => {
        const clip = clipIds(dir)[2];
        editNpz(join(dir, 'arrays', `${clip}.npz`), (a) => {
          const t = a.timestamps;
          [t[5], t[6]] = [t[6], t[5]];
        });
        return { file: 'clips_index.jsonl:3', clip };
      },
    ],
    [
      'a NaN in an array',
      'finite',
      (dir) => {
        const clip = clipIds(dir)[0];
        editNpz(join(dir, 'arrays', `${clip}.npz`), (a) => {
          a.speed[10] = NaN;
        });
        return { file: 'clips_index.jsonl:1', clip };
      },
    ],
    [
      'a duplicated id',
      'duplicate',
      (dir) => {
        const index = join(dir, 'clips_index.jsonl');
        appendFileSync(index, `${lines(index)[3]}\n`);
        return { file: 'clips_index.jsonl:5', clip: clipIds(dir)[3] };
      },
    ],
    [
      'a sign-flipped yaw rate',
      'signs',
      (dir) => {
        // the clip that turns most, so that the flipped sign shows
        const turn = clipIds(dir)
          .map((clip, i) => ({ clip, i, dyaw: Math.abs(JSON.parse(lines(join(dir, 'clips_index.jsonl'))[i]).features.total_heading_change) }))
          .sort((a, b) => b.dyaw - a.dyaw)[0];
        expect(turn.dyaw).toBeGreaterThan(0.1);
        editNpz(join(dir, 'arrays', `${turn.clip}.npz`), (a) => {
          for (let i = 0; i < a.yaw_rate.length; i++) a.yaw_rate[i] = -a.yaw_rate[i];
        });
        return { file: `clips_index.jsonl:${turn.i + 1}`, clip: turn.clip };
      },
    ],
  ];
  for (const [what, check, plant] of cases) {
    it(`finds ${what} with one line`, async () => {
      let at = { file: '', clip: '' };
      const dir = planted(check, (d) => (at = plant(d)));
      const r = await validate(dir);
      expect(r.code).toBe(1);
      expect(r.findings, r.findings.join('\n')).toHaveLength(1);
      expect(r.findings[0]).toContain(`${join(dir, at.file)}: [${check}]`);
      expect(r.findings[0]).toContain(at.clip);
      expect(r.err).toMatch(new RegExp(`1 finding \\(${check} 1\\)`));
    });
  }

  it('a line that is not JSON, a QA line that is not an object, a corrupt npz: one line each', async () => {
    const dir = planted('hostile', (d) => {
      writeFileSync(join(d, 'arrays', `${clipIds(d)[0]}.npz`), 'PK\u0003\u0004 truncated');
      appendFileSync(join(d, 'clips_index.jsonl'), 'not json\n');
      appendFileSync(join(d, 'qa.jsonl'), '[1, 2]\n');
    });
    const r = await validate(dir);
    expect(r.code).toBe(1);
    expect(r.findings.map((f) => f.replace(dir, 'D'))).toEqual([
      'D/clips_index.jsonl:5: [record] invalid JSON (Unexpected token \'o\', "not json" is not valid JSON)',
      'D/qa.jsonl:57: [record] expected a JSON object',
      expect.stringMatching(/^D\/clips_index\.jsonl:1: \[arrays\] .*\.npz: unreadable \(/),
    ]);
  });

  it('writes every finding and the counts with --json', async () => {
    const dir = planted('json', (d) => unlinkSync(join(d, 'frames', clipIds(d)[0], '000000.jpg')));
    const out = join(tmp, 'findings.json');
    const r = await cli('validate', dir, '--json', out, '--no-progress');
    expect(r.code).toBe(1);
    const j = JSON.parse(readFileSync(out, 'utf8'));
    expect(j.counts.frames).toBe(1);
    expect(j.findings[0]).toMatchObject({ check: 'frames', clip: clipIds(dir)[0] });
  });

  it('is one error line for a folder that is not a dataset', async () => {
    const r = await cli('validate', '--dataset', join(tmp, 'nowhere'));
    expect(r.code).not.toBe(0);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/nowhere: no such dataset folder/);
  });

  it('sign conventions: a clean clip passes, braking written as positive acceleration does not', () => {
    const n = 31, t = Float64Array.from({ length: n }, (_, i) => i / 10);
    const speed = t.map((s) => 10 - 2 * s), accel = t.map(() => -2);
    let x = 0;
    const xs = t.map((_, i) => (i === 0 ? 0 : (x += 0.5 * (speed[i] + speed[i - 1]) * 0.1)));
    const a = { timestamps: t, x: xs, y: new Float64Array(n), yaw: new Float64Array(n), speed, accel, yaw_rate: new Float64Array(n), jerk: new Float64Array(n) };
    expect(signProblem(a)).toBeNull();
    expect(signProblem({ ...a, accel: accel.map((v) => -v) })).toMatch(/opposite signs: is braking positive/);
    expect(signProblem({ ...a, x: xs.map((v) => -v) })).toMatch(/against the yaw/);
  });
});

describe.skipIf(!needsShared('validate on the shared datasets', 'data/published/egodyn-bench/selected_clips.json', 'data/published/nuscenes', 'data/egodyn_kitti/clips_index.jsonl'))('egogeo validate on the shared datasets', () => {
  it('passes the published stand-in (frames, videos, QA against the oracle) and egodyn_kitti', async () => {
    const pub = await cli('validate', '--dataset', sharedPath('data/published/egodyn-bench'), '--nuscenes-root', sharedPath('data/published/nuscenes'), '--no-progress');
    expect(pub.out).toBe('');
    expect(pub.code).toBe(0);
    expect(pub.err).toMatch(/\(published layout\): 45 clips, 630 QA items, 783 frames, 36 videos; no findings/);
    const kitti = await validate(sharedPath('data/egodyn_kitti'));
    expect(kitti.findings).toEqual([]);
    expect(kitti.err).toMatch(/64 clips, 896 QA items, 1984 frames; no findings/);
  });

  it('finds faults planted in a copy of the published layout', async () => {
    const src = sharedPath('data/published/egodyn-bench');
    const dir = join(tmp, 'published');
    mkdirSync(dir);
    for (const e of ['nuscenes_clips', 'carla_clips', 'selected_clips.json']) cpSync(join(src, e), join(dir, e), { recursive: true });
    // the videos by link, one missing from the transferred domain
    const videos = readdirSync(join(src, 'carla_videos_transferred')).sort();
    for (const d of ['simulation', 'transferred']) {
      mkdirSync(join(dir, `carla_videos_${d}`));
      for (const v of videos) if (!(d === 'transferred' && v === videos[0])) symlinkSync(join(src, `carla_videos_${d}`, v), join(dir, `carla_videos_${d}`, v));
    }
    // selected_clips.json: one answer unlike the QA's
    const sel = JSON.parse(readFileSync(join(dir, 'selected_clips.json'), 'utf8'));
    sel[0].answers.yaw_rate_turn_direction = sel[0].answers.yaw_rate_turn_direction === 'left' ? 'right' : 'left';
    writeFileSync(join(dir, 'selected_clips.json'), JSON.stringify(sel));
    const r = await cli('validate', dir, '--nuscenes-root', sharedPath('data/published/nuscenes'), '--no-progress');
    expect(r.code).toBe(1);
    const out = r.out.split('\n').filter(Boolean);
    expect(out, out.join('\n')).toHaveLength(2);
    expect(out[0]).toMatch(new RegExp(`selected_clips\\.json: entry 0: \\[answer\\] clip '${sel[0].id}' question 'yaw_rate_turn_direction'`));
    expect(out[1]).toMatch(new RegExp(`carla_clips/clips_index\\.jsonl:\\d+: \\[frames\\] .*carla_videos_transferred/${videos[0].replace('.', '\\.')}: missing`));
  });
});
