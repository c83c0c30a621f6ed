/**
 * Hostile inputs, round 2 (issue 26): inputs that change under a run, damaged video, clips whose
 * frames do not fit their record, nuScenes lists out of order, ids too long in bytes, and the
 * viewer under bad files. Each case gives a clear error or the right answer, never exit 0 with
 * changed answers.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishedDataset } from '../helpers/published.js';
import { BIN, cli, ensureDist, NATIVE_BUILT, readJsonl, ROOT } from '../run/fixtures.js';

let tmp = '';
let ds = '';
const read = (p: string) => readFileSync(p, 'utf8');
const jsonl = (rows: unknown[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join('');
const oneLine = (s: string) => expect(s).not.toMatch(/\n\s+at |terminate called|Aborted|core dumped/);

describe.skipIf(!NATIVE_BUILT)('hostile round 2: egogeo run', () => {
  beforeAll(() => {
    ensureDist();
    tmp = mkdtempSync(join(tmpdir(), 'egogeo-hostile2-'));
    ds = join(tmp, 'ds');
    const s = cli(['synth', '--clips', '3', '--seed', '11', '--out', ds, '--no-progress', '--workers', '2']);
    expect(s.code, s.stderr).toBe(0);
  }, 120_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  const copyDs = (name: string) => {
    const d = join(tmp, name);
    execFileSync('cp', ['-r', ds, d]);
    return d;
  };
  const records = (d: string) => readJsonl<Record<string, unknown> & { clip_id: string; frame_paths: string[]; frame_timestamps: number[] }>(join(d, 'clips_index.jsonl'));

  it('a question file edited between two runs on one output: the resume and the merge refuse, naming the file', () => {
    const q = join(tmp, 'q.yaml');
    writeFileSync(q, read(join(ROOT, 'config/questions.yaml')));
    const out = join(tmp, 'edited.jsonl');
    const args = ['run', '--dataset', ds, '--config', q, '--questions', 'subset', '--no-progress', '--workers', '1'];
    expect(cli([...args, '--limit', '1', '-o', out]).code).toBe(0);
    // Any byte of the file changes the run: a threshold here.
    writeFileSync(q, read(q).replace(/threshold: ([0-9.]+)/, (_m, v) => `threshold: ${Number(v) * 1.5}`));
    const r = cli([...args, '--limit', '1', '-o', out]);
    expect(r.code).toBe(1);
    oneLine(r.stderr);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`question file ${q}: its content changed`);
    // Shards run before and after an edit do not merge.
    const s0 = join(tmp, 's0.jsonl'), s1 = join(tmp, 's1.jsonl');
    expect(cli([...args, '--shard', '0/2', '-o', s0]).code).toBe(0);
    writeFileSync(q, read(q).replace(/threshold: ([0-9.]+)/, (_m, v) => `threshold: ${Number(v) * 1.5}`));
    expect(cli([...args, '--shard', '1/2', '-o', s1]).code).toBe(0);
    const m = cli(['merge', s0, s1, '-o', join(tmp, 'merged.jsonl')]);
    expect(m.code).toBe(1);
    expect(m.stderr).toContain('its content changed');
  }, 120_000);

  it('frames that do not cover the clip (3 of 31) and timestamps in nanoseconds go to the errors file, with the reason', () => {
    const d = copyDs('timing');
    const recs = records(d);
    recs[0] = { ...recs[0], frame_paths: recs[0].frame_paths.slice(0, 3), frame_timestamps: recs[0].frame_timestamps.slice(0, 3) };
    recs[1] = { ...recs[1], frame_timestamps: recs[1].frame_timestamps.map((t) => Math.round((t + 1.7e9) * 1e9)) };
    writeFileSync(join(d, 'clips_index.jsonl'), jsonl(recs));
    const out = join(tmp, 'timing.jsonl');
    const r = cli(['run', '--dataset', d, '-o', out, '--no-progress']);
    expect(r.code).toBe(1);
    oneLine(r.stderr);
    const errs = readJsonl<{ clip_id: string; reason: string }>(`${out}.errors.jsonl`);
    expect(errs.map((e) => e.clip_id)).toEqual([recs[0].clip_id, recs[1].clip_id]);
    expect(errs[0].reason).toMatch(/3 frames span 0\.2 s but the clip's ground truth spans 3 s/);
    expect(errs[1].reason).toMatch(/timestamps must be in seconds \(these look like nanoseconds\)/);
    expect(readJsonl<{ clip_id: string }>(out).every((p) => p.clip_id === recs[2].clip_id)).toBe(true);
  }, 120_000);

  it('a clip id of 100 CJK characters (300 bytes) fails alone, named; the run goes on', () => {
    const d = copyDs('cjk');
    const recs = records(d);
    const long = '\u8def'.repeat(100);
    const qa = readJsonl<{ clip_id: string }>(join(d, 'qa.jsonl')).map((q) => (q.clip_id === recs[0].clip_id ? { ...q, clip_id: long } : q));
    recs[0] = { ...recs[0], clip_id: long };
    writeFileSync(join(d, 'clips_index.jsonl'), jsonl(recs));
    writeFileSync(join(d, 'qa.jsonl'), jsonl(qa));
    const out = join(tmp, 'cjk.jsonl');
    const r = cli(['run', '--dataset', d, '-o', out, '--no-progress', '--questions', 'subset']);
    expect(r.code).toBe(1);
    oneLine(r.stderr);
    const errs = readJsonl<{ clip_id: string; reason: string }>(`${out}.errors.jsonl`);
    expect(errs).toHaveLength(1);
    expect(errs[0].reason).toMatch(/not a safe file name .*at most 200 bytes/);
    expect(new Set(readJsonl<{ clip_id: string }>(out).map((p) => p.clip_id))).toEqual(new Set([recs[1].clip_id, recs[2].clip_id]));
  }, 120_000);

  it.skipIf(!NATIVE_BUILT)('a damaged mp4 (every 101st byte of its middle third flipped) is an error naming the video, never an answer', () => {
    const d = join(tmp, 'vid');
    expect(cli(['synth', '--clips', '1', '--seed', '12', '--video', '--out', d, '--no-progress']).code).toBe(0);
    const [rec] = readJsonl<{ clip_id: string; video_path: string }>(join(d, 'clips_index.jsonl'));
    const f = join(d, rec.video_path);
    const b = readFileSync(f);
    for (let i = Math.floor(b.length / 3); i < Math.floor((2 * b.length) / 3); i += 101) b[i] ^= 0xff;
    writeFileSync(f, b);
    const out = join(tmp, 'vid.jsonl');
    const r = cli(['run', '--dataset', d, '-o', out, '--no-progress']);
    expect(r.code).toBe(1);
    oneLine(r.stderr);
    const errs = readJsonl<{ clip_id: string; reason: string }>(`${out}.errors.jsonl`);
    expect(errs.map((e) => e.clip_id)).toEqual([rec.clip_id]);
    expect(errs[0].reason).toContain(`'${f}' is not a readable video`);
    expect(read(out)).toBe('');
  }, 120_000);

  it('nuScenes frame_paths out of order against frame_tokens: the clip fails naming the frame; in order it runs', () => {
    const pub = publishedDataset(join(tmp, 'pub'), [
      { id: 'clip_00001', source: 'nuscenes', speed: 8, yawRate: 0, seed: 3, frames: 12 },
      { id: 'clip_00002', source: 'nuscenes', speed: 6, yawRate: 0.2, seed: 4, frames: 12 },
    ]);
    const index = join(pub.root, 'nuscenes_clips', 'clips_index.jsonl');
    const recs = readJsonl<{ clip_id: string; frame_paths: string[] }>(index);
    recs[0].frame_paths.reverse();
    writeFileSync(index, jsonl(recs));
    const out = join(tmp, 'pub.jsonl');
    const r = cli(['run', '--dataset', pub.root, '--nuscenes-root', pub.nuscenes, '--no-cache', '-o', out, '--no-progress']);
    expect(r.code, `signal ${r.signal}, stderr: ${r.stderr}`).toBe(1);
    const errs = readJsonl<{ clip_id: string; reason: string }>(`${out}.errors.jsonl`);
    expect(errs.map((e) => e.clip_id)).toEqual(['clip_00001']);
    expect(errs[0].reason).toMatch(/^frame 0: frame_paths names .* but its frame_token \S+ is .* in .*sample_data\.json \(the two lists disagree\)$/);
    expect(new Set(readJsonl<{ clip_id: string }>(out).map((p) => p.clip_id))).toEqual(new Set(['clip_00002']));
  }, 120_000);
});

describe.skipIf(!NATIVE_BUILT)('hostile round 2: the viewer under bad files', () => {
  let dir = '';
  let child: ChildProcess | null = null;
  let url = '';
  let stderr = '';
  beforeAll(async () => {
    ensureDist();
    dir = mkdtempSync(join(tmpdir(), 'egogeo-hostile2-view-'));
    const d = join(dir, 'ds');
    expect(cli(['synth', '--clips', '1', '--seed', '13', '--out', d, '--no-progress']).code).toBe(0);
    const [rec] = readJsonl<Record<string, unknown> & { frame_paths: string[] }>(join(d, 'clips_index.jsonl'));
    const p = rec.frame_paths;
    // Frame 0: a directory; 1: a FIFO; 2: /etc/passwd by path; 3: a symlink inside the dataset to it; 4: missing.
    mkdirSync(join(d, 'adir.jpg'));
    execFileSync('mkfifo', [join(d, 'fifo.jpg')]);
    symlinkSync('/etc/passwd', join(d, 'link.jpg'));
    const bad = ['adir.jpg', 'fifo.jpg', '/etc/passwd', 'link.jpg', 'gone.jpg'];
    writeFileSync(join(d, 'clips_index.jsonl'), jsonl([{ ...rec, frame_paths: [...bad, ...p.slice(bad.length)] }]));
    child = spawn(process.execPath, [BIN, 'view', '--dataset', d, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.on('data', (b) => (stderr += b));
    url = await new Promise<string>((ok, fail) => {
      let out = '';
      child!.stdout!.on('data', (b) => {
        out += b;
        const m = /http:\/\/\S+\//.exec(out);
        if (m) ok(m[0]);
      });
      child!.once('exit', (code) => fail(new Error(`viewer exited ${code}: ${stderr}`)));
    });
  }, 120_000);
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('a directory, a FIFO, a non-image, a symlink out and a missing file: an error response each, the server stays up', async () => {
    const clip = (await (await fetch(`${url}api/clips`)).json()).clips[0].id as string;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${url}frame/${encodeURIComponent(clip)}/${i}.jpg`, { signal: AbortSignal.timeout(5000) });
      statuses.push(r.status);
      if (i === 2 || i === 3) expect(await r.text()).not.toContain('root:');
    }
    expect(statuses).toEqual([403, 403, 415, 415, 404]);
    const f = await fetch(`${url}files/fifo.jpg`, { signal: AbortSignal.timeout(5000) });
    expect(f.status).toBe(403);
    expect((await fetch(`${url}frame/${encodeURIComponent(clip)}/6.jpg`)).status).toBe(200); // a real frame still works
  });

  it('refuses a Host header that is not this machine (DNS rebinding)', async () => {
    const status = await new Promise<number>((ok, fail) => {
      const u = new URL(url);
      const req = request({ host: u.hostname, port: u.port, path: '/api/clips', headers: { host: 'evil.example:80' } }, (res) => {
        res.resume();
        ok(res.statusCode ?? 0);
      });
      req.on('error', fail);
      req.end();
    });
    expect(status).toBe(421);
  });

  it('stops on the first SIGTERM after all that', async () => {
    const code = await new Promise<number | null>((ok) => {
      child!.once('exit', (c) => ok(c));
      child!.kill('SIGTERM');
    });
    expect(code).toBe(0);
    oneLine(stderr);
    child = null;
  });
});
