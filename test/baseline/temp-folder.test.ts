/**
 * `egogeo baseline` without -o runs in a temporary folder. It is removed only when every clip was
 * answered; when a clip failed or the run was interrupted, the folder stays, stderr names it, and
 * rerunning with the `-o` it names resumes there (issue 52). Plus `--device` on baseline.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cli, ensureDist, NATIVE_BUILT, needsShared, ROOT, sharedPath } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-baseline-tmp-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const CALIB = 'P0: 7.188560e+02 0.000000e+00 6.071928e+02 0.000000e+00 0.000000e+00 7.188560e+02 1.852157e+02 0.000000e+00 0.000000e+00 0.000000e+00 1.000000e+00 0.000000e+00\n';
const folders = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith('egogeo-baseline-')) : []);
const lines = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8').split('\n').filter(Boolean).length : 0);

/** A KITTI sequence of `n` frames; `frame(i)` writes frame i (a path to link, or the bytes). */
function sequence(dir: string, n: number, frame: (i: number) => { link: string } | { bytes: string }): string {
  mkdirSync(join(dir, 'image_0'), { recursive: true });
  for (let i = 0; i < n; i++) {
    const f = frame(i);
    const p = join(dir, 'image_0', `${String(i).padStart(6, '0')}.jpg`);
    if ('link' in f) symlinkSync(f.link, p);
    else writeFileSync(p, f.bytes);
  }
  writeFileSync(join(dir, 'times.txt'), Array.from({ length: n }, (_, i) => (i / 10).toFixed(6)).join('\n') + '\n');
  writeFileSync(join(dir, 'calib.txt'), CALIB);
  return dir;
}

describe.skipIf(!NATIVE_BUILT)('egogeo baseline without -o: the temporary folder', () => {
  beforeAll(() => ensureDist());

  it('a clip failed: exit 1, nothing on stdout, the folder kept with the errors file stderr points to, and the -o it names resumes', () => {
    const seq = sequence(join(tmp, 'bad', '07'), 36, () => ({ bytes: 'not a jpeg' })); // two windows, neither readable
    const t = join(tmp, 'tmp-failed');
    mkdirSync(t);
    const r = cli(['baseline', '--kitti', seq, '--workers', '1', '--device', 'cpu'], { env: { TMPDIR: t } });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    const kept = folders(t);
    expect(kept).toHaveLength(1);
    const dir = join(t, kept[0]);
    const errors = join(dir, 'predictions.jsonl.errors.jsonl');
    expect(r.stderr).toContain(`see ${errors}`);
    expect(lines(errors)).toBe(2);
    expect(r.stderr).toContain(`the run's files are kept in ${dir} (rerun with -o ${join(dir, 'predictions.jsonl')} to resume`);
    // The named -o is the same run: it resumes (no "holds a run with other options" refusal).
    const again = cli(['baseline', '--kitti', seq, '--workers', '1', '--device', 'cpu', '-o', join(dir, 'predictions.jsonl')]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/2 clips failed/);
    expect(again.stderr).not.toMatch(/other options/);
  });

  it('bad input before the run: one line, no folder left behind', () => {
    const seq = sequence(join(tmp, 'bad2', '07'), 36, () => ({ bytes: 'not a jpeg' }));
    const t = join(tmp, 'tmp-bad-device');
    mkdirSync(t);
    const r = cli(['baseline', '--kitti', seq, '--device', 'tpu'], { env: { TMPDIR: t } });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("egogeo: --device must be one of auto, cpu, gpu, got 'tpu'\n");
    expect(folders(t)).toEqual([]);
  });

  const HAS_KITTI = needsShared('egogeo baseline interrupted without -o', 'data/kitti/00/image_0/000075.jpg', 'data/kitti/00/calib.txt');
  it.skipIf(!HAS_KITTI)('interrupted (SIGINT): exit 130, the folder kept and named with the -o that resumes; that rerun completes it', async () => {
    const src = sharedPath('data/kitti/00');
    // 76 frames: 10 windows, so the run is still going when the first clip's lines are written.
    const seq = sequence(join(tmp, 'kitti', '00'), 76, (i) => ({ link: join(src, 'image_0', `${String(i).padStart(6, '0')}.jpg`) }));
    writeFileSync(join(seq, 'calib.txt'), readFileSync(join(src, 'calib.txt')));
    const t = join(tmp, 'tmp-interrupted');
    mkdirSync(t);
    const out = () => (folders(t).length ? join(t, folders(t)[0], 'predictions.jsonl') : '');
    const res = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, 'baseline', '--kitti', seq, '--workers', '1', '--device', 'cpu', '--no-progress'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, TMPDIR: t } });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += String(d)));
      const timer = setInterval(() => {
        if (out() && lines(out()) >= 14) {
          clearInterval(timer);
          child.kill('SIGINT');
        }
      }, 20);
      child.on('error', reject);
      child.on('exit', (code) => {
        clearInterval(timer);
        resolve({ code, stderr });
      });
    });
    expect(res.code, res.stderr).toBe(130);
    const dir = join(t, folders(t)[0]);
    expect(res.stderr).toMatch(new RegExp(`interrupted \\(SIGINT\\): \\d/10 clips done.*rerun with -o ${join(dir, 'predictions.jsonl').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} to resume`));
    expect(res.stderr).not.toMatch(/rerun the same command/);
    expect(JSON.parse(readFileSync(join(dir, 'predictions.jsonl.run.json'), 'utf8')).status).toBe('interrupted');
    const r = cli(['baseline', '--kitti', seq, '--workers', '1', '--device', 'cpu', '-o', join(dir, 'predictions.jsonl')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/10\/10 clips .*from an earlier run/);
    expect(lines(join(dir, 'predictions.jsonl'))).toBe(10 * 14);
  });
});
