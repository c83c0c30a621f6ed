/**
 * Hostile inputs, round 3 (issue 54, second half): trajectories whose dynamics overflow, replies
 * grouped by clip exactly as the reference's Python splits them, egogeo's own datasets through
 * `validate`, and prediction files the reference grades with unparsed records.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.js';
import { makeTrajectory } from '../../src/core/trajectory.js';
import { computeDynamics, loadQuestions, runOracle, summaryFeatures } from '../../src/oracle/index.js';
import { parseGroupedResponse } from '../../src/prompts/answers.js';
import { buildPrompt } from '../../src/prompts/prompt.js';
import { validateDataset } from '../../src/datasets/validate.js';
import { readNpz, writeNpz } from '../../src/io/npz.js';
import { cli, ensureDist, NATIVE_BUILT } from '../run/fixtures.js';
import { fileURLToPath } from 'node:url';

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
    expect(() => summaryFeatures(nan, "clip 'c1'")).toThrow(/^clip 'c1': its jerk is NaN at sample 3/);
    // yaw_rate feeds only maxima (which skip NaN): still refused.
    expect(() => summaryFeatures({ ...a, yaw_rate: a.yaw_rate.map((v, i) => (i ? v : NaN)) }, 'x')).toThrow(/^x: its yaw_rate is NaN at sample 0/);
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

describe('answers --group-by-clip splits replies as the reference\'s Python', () => {
  it('str.splitlines breaks, Unicode digits, Python whitespace, a leading BOM (fixed cases)', () => {
    // Each expected value is the reference's parse_grouped_response output (Python 3.11).
    const cases: [string, number, string[]][] = [
      ['A1. left\u2028A2. right', 2, ['left', 'right']],
      ['A1. left\x85A2. none\x0bA3: x\x0cA4) y', 4, ['left', 'none', 'x', 'y']],
      ['1. a\x1c2. b\x1d3. c\x1e4. d\u20295. e\r\n6. f\r7. g', 7, ['a', 'b', 'c', 'd', 'e', 'f', 'g']],
      ['A1. a\x1fA2. b', 2, ['a\x1fA2. b', '']], // \x1f is whitespace, not a line break
      ['A\u0663) three\nA\u0661\u0660. ten', 10, ['', '', 'three', '', '', '', '', '', '', 'ten']], // Arabic-Indic digits
      ['A\u{1D7CF}. math one', 1, ['math one']], // MATHEMATICAL BOLD DIGIT ONE (a surrogate pair)
      ['\ufeffA1. left\nA2. right', 2, ['', 'right']], // a BOM is no whitespace for str.strip: line 1 does not match
      ['A1.\u3000\u00a0 left\u2000', 1, ['left']],
      ['A1.\x1c left', 1, ['']], // \x1c ends the line: "A1." has no answer
      ['A1. \x1f', 1, ['']], // stripped to "A1.": nothing left for (.+)
      ['A1.\x1fb', 1, ['b']],
      ['A01: x\na2. y\nB3. z\nA99. w', 3, ['x', 'y', '']],
      ['\x85\x1e A1. padded \x1f', 1, ['padded']],
    ];
    for (const [text, n, want] of cases) expect(parseGroupedResponse(text, n), JSON.stringify(text)).toEqual(want);
  });

  const TREE = process.env.EGOGEO_REFERENCE_TREE ?? '';
  const ready = (): boolean => {
    if (!TREE || !existsSync(join(TREE, 'evaluation/evaluator_common.py')) || spawnSync('python3', ['-c', '1']).status !== 0) {
      console.warn('[egogeo tests] skipped: grouped replies against the reference Python (needs python3 and EGOGEO_REFERENCE_TREE, an extracted TUM-AVS/EgoDyn-Bench tree)');
      return false;
    }
    return true;
  };
  it.skipIf(!ready())('differential: 4,000 generated replies split exactly as parse_grouped_response', () => {
    const pieces = ['A', 'a', 'B', '1', '2', '3', '12', '0', '\u0663', '\u0661', '\u{1D7CF}', '\u0e52', '.', ')', ':', ' ', '\t', 'left', 'none', 'x',
      '\n', '\r', '\r\n', '\x0b', '\x0c', '\x1c', '\x1d', '\x1e', '\x1f', '\x85', '\u2028', '\u2029', '\u00a0', '\u3000', '\u200b', '\ufeff', '\u2000', '\ud800', 'É'];
    let seed = 2054;
    const rnd = (k: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % k;
    const replies: { text: string; n: number }[] = [];
    for (let r = 0; r < 4000; r++) {
      let text = '';
      const lines = 1 + rnd(6);
      for (let l = 0; l < lines; l++) {
        text += rnd(3) ? `A${1 + rnd(4)}. ` : '';
        for (let k = rnd(8); k > 0; k--) text += pieces[rnd(pieces.length)];
        text += ['\n', '\u2028', '\x85', '\r\n', '\x1e', ''][rnd(6)];
      }
      replies.push({ text, n: 1 + rnd(4) });
    }
    const script = fileURLToPath(new URL('../fixtures/prompts/reference_grouped.py', import.meta.url));
    const r = spawnSync('python3', [script, TREE], { input: replies.map((x) => JSON.stringify(x)).join('\n'), encoding: 'utf8', maxBuffer: 1 << 26 });
    expect(r.status, r.stderr).toBe(0);
    const ref = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as string[]);
    expect(ref).toHaveLength(replies.length);
    const off = replies.filter((x, i) => JSON.stringify(parseGroupedResponse(x.text, x.n)) !== JSON.stringify(ref[i]));
    expect(off.slice(0, 3)).toEqual([]);
  }, 60_000);
});

describe('prompts print values as the reference\'s Python prints them', () => {
  it('choices as str(c) of what json.loads gave: True, None, 1.5 (numbers and nan/inf: test/prompts/prompts.test.ts)', () => {
    const p = buildPrompt({ question: 'Pick one.', choices: [true, false, null, 1.5, 'x'] } as never, { framesSent: 0, embedding: 'none', arrays: null });
    expect(p).toBe('Pick one. [True / False / None / 1.5 / x]\nAnswer with ONLY the chosen option.');
  });
});

describe('grade counts what the reference counts as unparsed', () => {
  const rec = (o: Record<string, unknown>) => JSON.stringify({ clip_id: 'clip_1', question_id: 'speed_trend', category: 'c', oracle_label: 'steady', model_answer: 'steady', ...o });
  /** One valid record per line but for the hostile ones; the reference's evaluate.py grades this file. */
  const lines = [
    rec({}),
    rec({ clip_id: 'clip_2', oracle_label: null }),
    rec({ clip_id: 'clip_3', model_answer: undefined }),
    rec({ clip_id: 'clip_4', oracle_label: 'NAN_TOKEN' }).replace('"NAN_TOKEN"', 'NaN'),
    '{"clip_id": "clip_5", "question_id": "speed_trend", ',
    rec({ clip_id: 'carla_1', question_id: undefined }),
    rec({ clip_id: 'carla_2', model_answer: 0 }),
    rec({ clip_id: 'carla_3', oracle_label: 'accelerating', model_answer: 'It is accelerating.' }),
    rec({ clip_id: 'carla_4', oracle_label: 'Infinity_TOKEN' }).replace('"Infinity_TOKEN"', '-Infinity'),
  ];
  it('a null oracle_label, a missing model_answer, NaN tokens and a malformed line: graded, one warning line each kind', () => {
    const f = join(tmp, 'hostile-preds.jsonl'), out = join(tmp, 'hostile-metrics.json');
    writeFileSync(f, `${lines.join('\n')}\n`);
    const r = cli(['grade', f, '--json', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr).toContain(`${f}:5: not JSON`);
    expect(r.stderr).toContain('1 malformed line skipped, as the reference grader does');
    expect(r.stderr).toContain(`${f}:2: 'oracle_label' is null; 4 records counted as unparsed, as the reference grader does`);
    const m = JSON.parse(readFileSync(out, 'utf8'));
    // evaluate.py: the malformed line is not a record; 4 of the 8 records are unparsed.
    expect([m.n_total, m.n_parsed, m.parsable_coverage]).toEqual([8, 4, 0.5]);
    expect(m.global.n).toBe(4);
    expect(m.global.accuracy).toBe(0.5); // clip_4 and carla_4: oracle 'nan' and '-inf' never match

    const TREE = process.env.EGOGEO_REFERENCE_TREE ?? '';
    if (!TREE || !existsSync(join(TREE, 'evaluation/metrics.py')) || spawnSync('python3', ['-c', 'import yaml']).status !== 0) {
      console.warn('[egogeo tests] skipped: grade against the reference evaluate() (needs python3 with yaml and EGOGEO_REFERENCE_TREE)');
      return;
    }
    const script = fileURLToPath(new URL('../fixtures/grade/reference_evaluate.py', import.meta.url));
    const py = spawnSync('python3', [script, TREE, fileURLToPath(new URL('../../config/questions.yaml', import.meta.url)), f], { encoding: 'utf8' });
    expect(py.status, py.stderr).toBe(0);
    expect(m).toEqual(JSON.parse(py.stdout));
  });

  it('what the reference itself stops on is still one error line: a model_answer that is a number', () => {
    const f = join(tmp, 'crash-preds.jsonl');
    writeFileSync(f, `${rec({})}\n${rec({ clip_id: 'clip_9', model_answer: 'NAN_TOKEN' }).replace('"NAN_TOKEN"', 'NaN')}\n`);
    const r = cli(['grade', f]);
    expect(r.code).toBe(1);
    oneLine(r.stderr);
    expect(r.stderr).toContain(`${f}:2: field 'model_answer' must be a string or null`);
  });
});

describe.skipIf(!NATIVE_BUILT)('egogeo\'s own sets: validate finds nothing; ground truth made non-finite is refused', () => {
  let jpeg = '', video = '';
  beforeAll(() => {
    jpeg = join(tmp, 'jpeg');
    video = join(tmp, 'video');
    // Seed 5, safety profile: clip 2 stops, and its smoothed speed dips to -0.006 m/s.
    const j = cli(['synth', '--clips', '2', '--seed', '5', '--profile', 'safety', '--out', jpeg, '--no-progress', '--workers', '1']);
    expect(j.code, j.stderr).toBe(0);
    const v = cli(['synth', '--clips', '2', '--seed', '3', '--video', '--out', video, '--no-progress', '--workers', '1']);
    expect(v.code, v.stderr).toBe(0);
  }, 120_000);
  const questions = loadQuestions();

  it('egogeo validate finds nothing in a JPEG set (smoothing dips below 0 m/s) nor in a --video set', () => {
    for (const d of [jpeg, video]) {
      const r = cli(['validate', d]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout + r.stderr).toContain('no findings');
    }
    // The dip is there, and within what the smoothing of the positions' speeds allows.
    const a = readNpz(join(jpeg, 'arrays/synth5__safety__w0001.npz'));
    expect(Math.min(...a.speed.data)).toBeLessThan(-0.001);
  });

  it('speed below what its smoothing allows is still a finding; a missing jerk is one; an unreadable frame is one', () => {
    const d = join(tmp, 'jpeg-bad');
    cpSync(jpeg, d, { recursive: true });
    const ids = readFileSync(join(d, 'clips_index.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { clip_id: string; frame_paths: string[] });
    // Clip 1: speeds negated (a sign convention error).
    const p1 = join(d, `arrays/${ids[0].clip_id}.npz`);
    const a1 = readNpz(p1);
    writeNpz(p1, { ...a1, speed: Float64Array.from(a1.speed.data, (v) => -v) });
    // Clip 2: no jerk array, and one frame that is a folder (read() fails with EISDIR).
    const p2 = join(d, `arrays/${ids[1].clip_id}.npz`);
    const { jerk: _drop, ...rest } = readNpz(p2);
    writeNpz(p2, rest);
    const frame = join(d, ids[1].frame_paths[4]);
    unlinkSync(frame);
    mkdirSync(frame);
    const rep = validateDataset(d, { questions });
    const lines = rep.findings.map((f) => `${f.clip} [${f.check}] ${f.message}`);
    expect(lines.some((l) => l.startsWith(`${ids[0].clip_id} [signs]`) && l.includes('speed is negative') && l.includes('its smoothing allows')), lines.join('\n')).toBe(true);
    expect(lines).toContain(`${ids[1].clip_id} [arrays] ${p2}: no array 'jerk'`);
    expect(lines.some((l) => l.startsWith(`${ids[1].clip_id} [frames] 1 of 31 frames unreadable: ${ids[1].frame_paths[4]} (unreadable: EISDIR)`)), lines.join('\n')).toBe(true);
  });

  it('ground truth whose features are not finite: egogeo oracle names the clip (exit 1); run files the clip as an error, answers the other', () => {
    const d = join(tmp, 'jpeg-nan');
    cpSync(jpeg, d, { recursive: true });
    rmSync(join(d, 'qa.jsonl')); // no QA: run labels the truth from the arrays
    const ids = readFileSync(join(d, 'clips_index.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { clip_id: string }).clip_id);
    const p = join(d, `arrays/${ids[0]}.npz`);
    const a = readNpz(p);
    writeNpz(p, { ...a, jerk: Float64Array.from(a.jerk.data, (v, i) => (i === 7 ? NaN : v)) });
    const o = cli(['oracle', '--dataset', d, '-o', join(tmp, 'nan-labels.jsonl')]);
    expect(o.code).toBe(1);
    oneLine(o.stderr);
    expect(o.stderr).toContain(`clip '${ids[0]}': its jerk is NaN at sample 7`);
    const out = join(tmp, 'nan-run.jsonl');
    const r = cli(['run', '--dataset', d, '--questions', 'subset', '--no-progress', '--workers', '1', '-o', out]);
    expect(r.code, r.stderr).not.toBe(0);
    const errors = readFileSync(`${out}.errors.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { clip_id: string; reason: string });
    expect(errors.map((e) => e.clip_id)).toEqual([ids[0]]);
    expect(errors[0].reason).toContain('its ground truth: its jerk is NaN at sample 7');
    const answered = new Set(readFileSync(out, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { clip_id: string }).clip_id));
    expect([...answered]).toEqual([ids[1]]);
  }, 120_000);

  it('a --video set whose video is missing is one finding naming it (frames read as run reads them)', () => {
    const d = join(tmp, 'video-bad');
    cpSync(video, d, { recursive: true });
    const rec = JSON.parse(readFileSync(join(d, 'clips_index.jsonl'), 'utf8').split('\n')[0]) as { clip_id: string; video_path?: string };
    const v = join(d, rec.video_path ?? `videos/${rec.clip_id}.mp4`);
    unlinkSync(v);
    const rep = validateDataset(d, { questions });
    expect(rep.findings.map((f) => `[${f.check}] ${f.message}`)).toEqual([`[frames] ${v}: missing`]);
  });
});
