/**
 * Hostile inputs against the commands that read files (in-process CLI): outputs onto inputs,
 * symlinks, devices, FIFOs, /dev/zero, absurd options, non-finite thresholds. Each must stop with
 * one line (exit 1), no stack trace, and leave every input byte-identical.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { DEFAULT_QUESTIONS_PATH } from '../../src/oracle/questions.js';
import { writeFileAtomic } from '../../src/io/atomic.js';
import { InputError } from '../../src/core/errors.js';

let dir = '';
const traj = (id: string, yawRate = 0) => {
  const t = Array.from({ length: 31 }, (_, i) => i * 0.1);
  let yaw = 0, x = 0, y = 0;
  const X: number[] = [], Y: number[] = [], W: number[] = [];
  for (let i = 0; i < t.length; i++) {
    X.push(x), Y.push(y), W.push(yaw);
    x += 0.8 * Math.cos(yaw);
    y += 0.8 * Math.sin(yaw);
    yaw += yawRate * 0.1;
  }
  return JSON.stringify({ id, timestamps: t, x: X, y: Y, yaw: W });
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'egogeo-hostile-'));
  writeFileSync(join(dir, 't.jsonl'), `${traj('a')}\n${traj('b', 0.4)}\n`);
  writeFileSync(
    join(dir, 'p.jsonl'),
    ['a', 'b'].map((c) => JSON.stringify({ clip_id: c, question_id: 'turn_direction', category: 'motion', oracle_label: 'straight', model_answer: 'straight' })).join('\n') + '\n',
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const snapshot = () => ['t.jsonl', 'p.jsonl'].map((f) => readFileSync(join(dir, f), 'utf8'));
async function refused(args: string[], pattern: RegExp) {
  const before = snapshot();
  const r = await cli(...args);
  expect(r.code, r.err).toBe(1);
  expect(r.err).toMatch(pattern);
  expect(r.err.trim().split('\n')).toHaveLength(1); // one line, no stack trace
  expect(r.err).not.toMatch(/\n\s+at /);
  expect(snapshot()).toEqual(before);
}

describe('no command writes over its input', () => {
  it('oracle -o INPUT, ./INPUT, a symlink to it, a hard link to it', async () => {
    const t = join(dir, 't.jsonl');
    await refused(['oracle', t, '-o', t], /is the input/);
    await refused(['oracle', t, '-o', join(dir, '.', 'x', '..', 't.jsonl')], /is the input/);
    symlinkSync(t, join(dir, 'link.jsonl'));
    await refused(['oracle', t, '-o', join(dir, 'link.jsonl')], /is the input/);
    execFileSync('ln', [t, join(dir, 'hard.jsonl')]);
    await refused(['oracle', t, '-o', join(dir, 'hard.jsonl')], /is the input/);
  });
  it('grade --json INPUT, calibrate / sensitivity --json INPUT, sensitivity --json onto a predictions file', async () => {
    const t = join(dir, 't.jsonl'), p = join(dir, 'p.jsonl');
    await refused(['grade', p, '--json', p], /is the input/);
    await refused(['calibrate', t, '--json', t], /is the input/);
    await refused(['sensitivity', t, '--json', t], /is the input/);
    await refused(['sensitivity', t, '--predictions', p, '--json', p], /is the input/);
    await refused(['oracle', t, '--config', DEFAULT_QUESTIONS_PATH, '-o', DEFAULT_QUESTIONS_PATH], /is the input/);
  });
  it('baseline --kitti SEQ -o SEQ/poses.txt refuses before reading anything', async () => {
    const seq = join(dir, 'seq');
    mkdirSync(seq);
    writeFileSync(join(seq, 'poses.txt'), '1 0 0 0 0 1 0 0 0 0 1 0\n');
    const r = await cli('baseline', '--kitti', seq, '-o', join(seq, 'poses.txt'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/poses\.txt: is the input/);
    expect(readFileSync(join(seq, 'poses.txt'), 'utf8')).toBe('1 0 0 0 0 1 0 0 0 0 1 0\n');
  });
  it('refuses devices and folders as outputs; a symlink output is followed and stays a link', async () => {
    const t = join(dir, 't.jsonl');
    await refused(['oracle', t, '-o', '/dev/full'], /is a device, not a regular file/);
    await refused(['oracle', t, '-o', '/dev/null'], /is a device/);
    await refused(['oracle', t, '-o', dir], /is a folder/);
    writeFileSync(join(dir, 'target.jsonl'), 'old\n');
    symlinkSync(join(dir, 'target.jsonl'), join(dir, 'out-link.jsonl'));
    const r = await cli('oracle', t, '-o', join(dir, 'out-link.jsonl'));
    expect(r.code, r.err).toBe(0);
    expect(lstatSync(join(dir, 'out-link.jsonl')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, 'out-link.jsonl'))).toBe(join(dir, 'target.jsonl'));
    expect(readFileSync(join(dir, 'target.jsonl'), 'utf8')).toMatch(/"id":"a"/);
  });
  it('the atomic writer itself refuses a device (for library callers)', () => {
    expect(() => writeFileAtomic('/dev/full', 'x')).toThrow(InputError);
  });
});

describe('bounded inputs', () => {
  it('/dev/zero, a FIFO and a folder where a file is expected are refused at once', async () => {
    await refused(['oracle', '/dev/zero'], /\/dev\/zero: is a device/);
    await refused(['grade', '/dev/zero'], /\/dev\/zero: is a device/);
    await refused(['sensitivity', join(dir, 't.jsonl'), '--predictions', '/dev/zero'], /is a device/);
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    await refused(['grade', join(dir, 'fifo')], /is a FIFO/);
    await refused(['oracle', join(dir, 't.jsonl'), '--config', '/dev/zero'], /is a device/);
  });
  it('absurd numbers: --workers 5000, --duration 1e7, a span of 1e9 s', async () => {
    await refused(['run', '--dataset', dir, '-o', join(dir, 'r.jsonl'), '--workers', '5000'], /--workers must be an integer in \[1, \d+\]/);
    await refused(['synth', '--out', join(dir, 's'), '--workers', '5000'], /--workers/);
    await refused(['demo', '--workers', '5000'], /--workers/);
    await refused(['oracle', join(dir, 't.jsonl'), '--duration', '1e7'], /--duration/);
    writeFileSync(join(dir, 'long.jsonl'), `${JSON.stringify({ id: 'long', timestamps: [0, 1e9], x: [0, 1], y: [0, 0], yaw: [0, 0] })}\n`);
    const r = await cli('oracle', join(dir, 'long.jsonl'), '--duration', 'span');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/trajectory 'long'.*more than the oracle resamples/);
  });
  it('a .nan (or .inf) threshold in a question file is named, not used', async () => {
    const yaml = readFileSync(DEFAULT_QUESTIONS_PATH, 'utf8');
    const m = /(\n\s+\w*threshold\w*:\s*)([-\d.]+)/.exec(yaml);
    expect(m).not.toBeNull();
    for (const bad of ['.nan', '.inf']) {
      writeFileSync(join(dir, 'q.yaml'), yaml.replace(m![0], `${m![1]}${bad}`));
      const r = await cli('oracle', join(dir, 't.jsonl'), '--config', join(dir, 'q.yaml'));
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/must be a finite number/);
    }
  });
});

describe('failing writes', () => {
  it('an unwritable or missing output folder is one line naming the path', async () => {
    await refused(['oracle', join(dir, 't.jsonl'), '-o', join(dir, 'no', 'such', 'x.jsonl')], /no[/]such[/]x\.jsonl: cannot write \(ENOENT/);
  });
  it('a full disk (injected ENOSPC) is one line; the previous output stays as it was, no temp file', async () => {
    writeFileSync(join(dir, 'prev.json'), 'previous\n');
    process.env.EGOGEO_FAULT_WRITE = 'ENOSPC:prev.json';
    try {
      const r = await cli('grade', join(dir, 'p.jsonl'), '--json', join(dir, 'prev.json'));
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/prev\.json: cannot write \(ENOSPC: no space left on device\)/);
    } finally {
      delete process.env.EGOGEO_FAULT_WRITE;
    }
    expect(readFileSync(join(dir, 'prev.json'), 'utf8')).toBe('previous\n');
    expect(execFileSync('ls', ['-A', dir], { encoding: 'utf8' })).not.toMatch(/\.tmp/);
  });
  it('report: a failed write leaves no report folder and no staging folder', async () => {
    // The report needs a run; a failure before the report is written is enough to check the folder.
    const out = join(dir, 'rep');
    process.env.EGOGEO_FAULT_WRITE = `ENOSPC:${out}`;
    try {
      const r = await cli('report', join(dir, 'p.jsonl'), '--out', out);
      expect(r.code).toBe(1);
      expect(r.err.trim().split('\n').pop()).not.toMatch(/\n\s+at /);
    } finally {
      delete process.env.EGOGEO_FAULT_WRITE;
    }
    expect(existsSync(out)).toBe(false);
    expect(execFileSync('ls', ['-A', dir], { encoding: 'utf8' })).not.toMatch(/\.rep\./);
  });
});

describe('weak cases are named, never silent', () => {
  it('grade: duplicate (clip, question) records and oracle labels outside the choices are warned about with their line', async () => {
    const p = join(dir, 'dup.jsonl');
    const rec = (label: string) => JSON.stringify({ clip_id: 'c', question_id: 'yaw_rate_turn_direction', category: 'x', oracle_label: label, model_answer: label });
    writeFileSync(p, `${rec('sideways_blue')}\n${rec('sideways_blue')}\n`);
    const r = await cli('grade', p);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/dup\.jsonl:2: clip 'c' question 'yaw_rate_turn_direction' repeats line 1/);
    expect(r.err).toMatch(/dup\.jsonl:1: oracle label 'sideways_blue' is not one of question 'yaw_rate_turn_direction''s choices/);
  });
});
