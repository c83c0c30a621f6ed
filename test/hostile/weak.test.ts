/**
 * Hostile inputs, round 2 (issue 26): the weak cases — answers that were quietly off and messages
 * that were not one line. Library checks in-process; CLI cases spawned.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { shortcutBound } from '../../src/audit/shortcut.js';
import { InputError } from '../../src/core/errors.js';
import { makeTrajectory, type Trajectory } from '../../src/core/trajectory.js';
import { resultRow } from '../../src/egogears/score.js';
import { loadQuestions, runOracle } from '../../src/oracle/index.js';
import { parseLeaderboard } from '../../src/report/leaderboard.js';
import { BIN, cli, ensureDist, NATIVE_BUILT, readJsonl } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-weak-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const oneLine = (s: string) => {
  expect(s).not.toMatch(/\n\s+at |internal error/);
  expect(s.trim().split('\n')).toHaveLength(1);
};

describe('library inputs are checked', () => {
  const questions = loadQuestions();
  const t = Array.from({ length: 31 }, (_, i) => i / 10);
  const good = makeTrajectory('g', { t, x: t.map((v) => 10 * v), y: t.map(() => 0), yaw: t.map(() => 0) });
  const edit = (f: (tr: Trajectory) => void): Trajectory => {
    const tr = { id: 'bad', t: good.t.slice(), x: good.x.slice(), y: good.y.slice(), yaw: good.yaw.slice() };
    f(tr);
    return tr;
  };

  it('runOracle refuses NaN values, mismatched lengths and repeated timestamps, naming the field', () => {
    expect(Object.keys(runOracle(good, questions).labels)).toHaveLength(14);
    expect(() => runOracle(edit((tr) => (tr.x[7] = Number.NaN)), questions)).toThrow("bad: field 'x'[7] must be a finite number, got NaN");
    expect(() => runOracle(edit((tr) => (tr.yaw = tr.yaw.slice(0, 30))), questions)).toThrow("bad: field 'yaw' has 30 samples but 't' has 31");
    expect(() => runOracle(edit((tr) => (tr.t[5] = tr.t[4])), questions)).toThrow(/bad: field 't' must be strictly increasing \(sample 5/);
  });

  it("audit shortcut: chance is a uniform guess over the question's choices; an answer outside them or an unknown question is an error", () => {
    const clips = [
      { id: 'a', answers: { driving_smoothness: 'smooth' }, fields: { source: 'x' } },
      { id: 'b', answers: { driving_smoothness: 'smooth' }, fields: { source: 'y' } },
    ];
    const choices = new Map(questions.questions.map((q) => [q.id, q.choices ?? []] as const));
    expect(shortcutBound(clips, ['source']).per_question.driving_smoothness.chance).toBe(1); // the labels present: one
    const r = shortcutBound(clips, ['source'], 'bacc', undefined, 'source', choices);
    expect(r.per_question.driving_smoothness.chance).toBeCloseTo(1 / 3, 12);
    expect(r.pooled14_chance).toBeCloseTo(1 / 3, 12);
    expect(() => shortcutBound([...clips, { id: 'c', answers: { driving_smoothness: 'bumpy' }, fields: { source: 'x' } }], ['source'], 'bacc', undefined, 'source', choices)).toThrow(
      /clip c: answer 'bumpy' to 'driving_smoothness' is not one of its choices/,
    );
    expect(() => shortcutBound([{ id: 'd', answers: { made_up: 'yes' }, fields: { source: 'x' } }], ['source'], 'bacc', undefined, 'source', choices)).toThrow(/question 'made_up' is not in the question file/);
  });

  it('egogears: an impossible published result row (exact 5, overlap -3) is an error, not 500%', () => {
    const q = { id: 'q1', options: { A: 'a', B: 'b' }, answer: ['A'] };
    expect(resultRow(q, 'q1', { exact: true, overlap: 1, n_pred: 1, n_select: 1 }).exact).toBe(true);
    expect(() => resultRow(q, 'q1', { exact: 5, overlap: 1 })).toThrow("prediction q1: field 'exact' must be true or false (or 0/1), got 5");
    expect(() => resultRow(q, 'q1', { exact: true, overlap: -3 })).toThrow(/field 'overlap' must be a number in \[0, 1\], got -3/);
    expect(resultRow(q, 'q1', { error: 'Empty answer' }).error).toBe('Empty answer');
  });

  it('a leaderboard with a score out of [0, 1] or a model twice is refused, naming the rows', () => {
    const row = (model: string, b: number) => ({ model, balanced_acc: b, src_carla_balanced_acc: b });
    expect(parseLeaderboard([row('a', 0.5), row('b', 0.6)], 'lb.json')).toHaveLength(2);
    expect(() => parseLeaderboard([row('a', 1e308)], 'lb.json')).toThrow('lb.json: row 1 ("a"): "balanced_acc" must be a number in [0, 1], got 1e+308');
    expect(() => parseLeaderboard([row('a', 0.5), { ...row('b', 0.5), src_carla_balanced_acc: -1 }], 'lb.json')).toThrow(/row 2 \("b"\): "src_carla_balanced_acc"/);
    expect(() => parseLeaderboard([row('a', 0.5), row('a', 0.4)], 'lb.json')).toThrow('lb.json: rows 1 and 2 are both "a" (one row per model)');
    expect(() => parseLeaderboard([row('a', 0.5)], 'lb.json')).not.toThrow(InputError);
  });
});

describe('CLI: one line, never a stack trace', () => {
  it('standard output on a full disk (/dev/full): one line, exit 1, for oracle, grade and calibrate alike', () => {
    ensureDist();
    const preds = join(tmp, 'p.jsonl');
    writeFileSync(preds, `${JSON.stringify({ clip_id: 'c', question_id: 'speed_trend', model_answer: 'steady', oracle_label: 'steady' })}\n`);
    for (const cmd of [`grade ${preds}`, 'calibrate --help', 'oracle --help']) {
      let status = 0;
      let stderr = '';
      try {
        execFileSync('bash', ['-c', `node ${BIN} ${cmd} > /dev/full`], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
      } catch (e) {
        status = (e as { status: number }).status;
        stderr = (e as { stderr: string }).stderr;
      }
      expect(status, cmd).toBe(1);
      expect(stderr.trim(), cmd).toBe('egogeo: standard output: cannot write (ENOSPC: no space left on device)');
    }
  });

  it('audit turn-geometry with a field of view of 1e-15° or a turn of 1e15°: one line naming the option, exit 1', () => {
    const a = cli(['audit', 'turn-geometry', '--width', '640', '--height', '480', '--vfov', '1e-15']);
    expect(a.code).toBe(1);
    oneLine(a.stderr);
    expect(a.stderr).toMatch(/--vfov: expected degrees in \[0\.01, 180\)/);
    const b = cli(['audit', 'turn-geometry', '--width', '640', '--height', '480', '--vfov', '60', '--turns', '30,1e15']);
    expect(b.code).toBe(1);
    oneLine(b.stderr);
    expect(b.stderr).toMatch(/--turns: expected degrees in \[-360, 360\], got 1000000000000000/);
  });

  it('an output folder that is a regular file is called one', () => {
    const f = join(tmp, 'afile');
    writeFileSync(f, 'x');
    const r = cli(['synth', '--clips', '1', '--out', f, '--no-progress']);
    expect(r.code).toBe(1);
    oneLine(r.stderr);
    expect(r.stderr).toContain(`--out ${f}: exists and is a regular file, not a folder`);
  });
});

describe.skipIf(!NATIVE_BUILT)('CLI: runs', () => {
  it("a --cameras key that differs from a source only in case is an error; one no clip has is a note", () => {
    ensureDist();
    const ds = join(tmp, 'ds');
    expect(cli(['synth', '--clips', '1', '--seed', '4', '--out', ds, '--no-progress']).code).toBe(0);
    const source = readJsonl<{ source: string }>(join(ds, 'clips_index.jsonl'))[0].source;
    const cams = join(tmp, 'cams.json');
    writeFileSync(cams, JSON.stringify({ [source.toUpperCase()]: { hfov_deg: 90 } }));
    const r = cli(['run', '--dataset', ds, '--cameras', cams, '-o', join(tmp, 'cam.jsonl'), '--no-progress']);
    expect(r.code).toBe(1);
    oneLine(r.stderr);
    expect(r.stderr).toContain(`source '${source.toUpperCase()}' is not a source of this dataset; did you mean '${source}'?`);
    writeFileSync(cams, JSON.stringify({ nowhere: { hfov_deg: 90 } }));
    const n = cli(['run', '--dataset', ds, '--cameras', cams, '-o', join(tmp, 'cam2.jsonl'), '--no-progress']);
    expect(n.code, n.stderr).toBe(0);
    expect(n.stderr).toContain("no clip has source 'nowhere'");
  }, 60_000);

  it('merging a shard whose run was killed says it stopped, not that it is running', () => {
    const ds = join(tmp, 'ds');
    const s0 = join(tmp, 'k0.jsonl'), s1 = join(tmp, 'k1.jsonl');
    expect(cli(['run', '--dataset', ds, '--shard', '0/2', '-o', s0, '--no-progress']).code).toBe(0);
    expect(cli(['run', '--dataset', ds, '--shard', '1/2', '-o', s1, '--no-progress']).code).toBe(0);
    // As a kill -9 leaves it: the record still says running, no process holds the output.
    const rec = JSON.parse(readFileSync(`${s1}.run.json`, 'utf8'));
    writeFileSync(`${s1}.run.json`, JSON.stringify({ ...rec, status: 'running' }));
    const m = cli(['merge', s0, s1, '-o', join(tmp, 'k.jsonl')]);
    expect(m.code).toBe(1);
    oneLine(m.stderr);
    expect(m.stderr).toContain('shard 1/2 stopped before finishing (killed or crashed); rerun its egogeo run command to finish it');
  }, 60_000);
});
