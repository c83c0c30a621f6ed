/**
 * Hostile inputs, round 3 (issue 54), the half about what is exposed and what is mixed: the
 * viewer's files under a folder swapped for a symlink between naming and opening, clip ids with
 * `../`, npz members that inflate to GiBs, queue answers from another engine or another copy of
 * the dataset, a resume over an edited dataset, and what a kill leaves behind. Each describe below
 * is named for the bullet of docs/guarantees.md it holds to (and the README's summary of it).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deflateRawSync } from 'node:zlib';
import { readNpzArrays } from '../../src/datasets/groundtruth.js';
import { encodeNpy } from '../../src/io/npz.js';
import { startViewServer, type ViewServer } from '../../src/view/server.js';
import { ViewData } from '../../src/view/data.js';
import { BIN, cli, ensureDist, NATIVE_BUILT, ROOT, syntheticDataset } from '../run/fixtures.js';
import { datasetContent, keyDiff, type RunKey } from '../../src/run/record.js';
import { answerRefusal, engineRefusal, inputDigest, inputsRefusal, queueEngine } from '../../src/queue/checks.js';
import { mapTask } from '../../src/queue/index.js';
import { parsePathMap } from '../../src/cli/options.js';
import type { ClipTask } from '../../src/run/task.js';
import { engineConfig } from '../../src/vo/config.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-hostile3-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const jsonl = (rows: unknown[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join('');

describe('hostile round 3: the viewer serves only what it may, even under a race (opened, then verified)', () => {
  let ds = '';
  let outside = '';
  let preds = '';
  let v: ViewServer | null = null;
  /** Paths whose folder the hook swaps for a symlink to `outside` just before they are opened. */
  const swapOn = new Map<string, string>();
  const log: string[] = [];
  beforeAll(async () => {
    ds = syntheticDataset(join(tmp, 'ds'), [{ id: 'a', speed: 6, yawRate: 0, seed: 3, frames: 6 }]);
    outside = join(tmp, 'outside');
    // Outside the dataset: a secret text file and a secret image, where the swapped folders lead.
    mkdirSync(join(outside, 'docs'), { recursive: true });
    writeFileSync(join(outside, 'docs', 'notes.txt'), 'SECRET outside the dataset');
    mkdirSync(join(outside, 'a'), { recursive: true });
    writeFileSync(join(outside, 'a', '0000.pgm'), readFileSync(join(ds, 'frames', 'a', '0000.pgm')));
    mkdirSync(join(ds, 'docs'));
    writeFileSync(join(ds, 'docs', 'notes.txt'), 'inside the dataset');
    // A clip whose id leaves the run's trajectories folder, and a .tum where it leads.
    const [rec] = readFileSync(join(ds, 'clips_index.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    writeFileSync(join(ds, 'clips_index.jsonl'), jsonl([rec, { ...rec, clip_id: '../escape' }]));
    writeFileSync(join(ds, 'qa.jsonl'), readFileSync(join(ds, 'qa.jsonl'), 'utf8') + jsonl([{ qa_id: 'qa_9', clip_id: '../escape', question_id: 'speed_regime', category: 'direct_dynamics', answer: 'urban' }]));
    preds = join(tmp, 'run', 'p.jsonl');
    mkdirSync(join(tmp, 'run', 'p.jsonl.trajectories'), { recursive: true });
    const pred = (clip: string) => ({ clip_id: clip, question_id: 'speed_regime', qa_id: 'qa_9', category: 'direct_dynamics', oracle_label: 'urban', model_answer: 'slow' });
    writeFileSync(preds, jsonl([pred('a'), pred('../escape')]));
    const tum = Array.from({ length: 6 }, (_, i) => `${i * 0.1} 0 0 ${i * 0.6} 0 0 0 1`).join('\n');
    writeFileSync(join(tmp, 'run', 'escape.tum'), `${tum}\n`); // p.jsonl.trajectories/../escape.tum
    v = await startViewServer({
      dataset: ds,
      predictions: [preds],
      port: 0,
      log: (l) => log.push(l),
      hooks: {
        beforeOpen: (p) => {
          const dir = swapOn.get(p);
          if (!dir) return;
          swapOn.delete(p);
          renameSync(join(ds, dir), join(ds, `${dir}.moved`));
          symlinkSync(join(outside, dir), join(ds, dir));
        },
      },
    });
  });
  afterAll(async () => v?.close());

  it('/files/: a folder swapped for a symlink out between naming and opening is refused (403), never served', async () => {
    const ok = await fetch(`${v!.url}files/docs/notes.txt`);
    expect(await ok.text()).toBe('inside the dataset');
    swapOn.set(join(ds, 'docs', 'notes.txt'), 'docs');
    const r = await fetch(`${v!.url}files/docs/notes.txt`);
    expect(r.status).toBe(403);
    expect(await r.text()).not.toContain('SECRET');
    expect(log.some((l) => l.includes('outside the dataset folder'))).toBe(true);
  });

  it('/frame/: a frame folder swapped for a symlink out is refused (403), never served', async () => {
    expect((await fetch(`${v!.url}frame/a/0.jpg`)).status).toBe(200);
    swapOn.set(join(ds, 'frames', 'a', '0001.pgm'), join('frames', 'a'));
    mkdirSync(join(outside, 'frames', 'a'), { recursive: true });
    writeFileSync(join(outside, 'frames', 'a', '0001.pgm'), readFileSync(join(outside, 'a', '0000.pgm')));
    const r = await fetch(`${v!.url}frame/a/1.jpg`);
    expect(r.status).toBe(403);
  });

  it("/api/clip/<id>: a clip id with '../' reads no .tum outside the run's trajectories folder", async () => {
    const d = new ViewData({ dataset: ds, predictions: [preds], log: () => {} });
    expect(d.byId.has('../escape')).toBe(true);
    expect(d.runEstimate(d.runs[0], '../escape')).toBeNull();
    expect(d.runQuality(d.runs[0], '../escape')).toBeNull();
    const r = await fetch(`${v!.url}api/clip/${encodeURIComponent('../escape')}`);
    if (r.status === 200) expect((await r.json()).series.runs).toEqual([null]);
    else expect(r.status).toBe(404);
  });

  it("a clip's arrays folder swapped for a symlink out after the viewer started: its npz is refused, the ground truth shown as none", () => {
    const d2 = syntheticDataset(join(tmp, 'ds-arrays'), [{ id: 'g', speed: 6, yawRate: 0, seed: 4, frames: 6 }], { arrays: true });
    const copy = join(outside, 'arrays');
    mkdirSync(copy, { recursive: true });
    writeFileSync(join(copy, 'g.npz'), readFileSync(join(d2, 'arrays', 'g.npz')));
    expect(new ViewData({ dataset: d2, log: () => {} }).groundTruth(new ViewData({ dataset: d2, log: () => {} }).byId.get('g')!)).not.toBeNull();
    const lines: string[] = [];
    const d = new ViewData({
      dataset: d2,
      log: (l) => lines.push(l),
      hooks: {
        beforeOpen: (p) => {
          if (!p.endsWith('g.npz')) return;
          renameSync(join(d2, 'arrays'), join(d2, 'arrays.moved'));
          symlinkSync(copy, join(d2, 'arrays'));
        },
      },
    });
    expect(d.groundTruth(d.byId.get('g')!)).toBeNull();
    expect(lines.some((l) => l.includes('g.npz: outside the allowed folder'))).toBe(true);
  });

  it("a run's trajectories folder swapped for a symlink out after the viewer started: its .tum is refused", () => {
    const trajOut = join(outside, 'traj');
    mkdirSync(trajOut, { recursive: true });
    writeFileSync(join(trajOut, 'a.tum'), readFileSync(join(tmp, 'run', 'escape.tum')));
    const lines: string[] = [];
    const d = new ViewData({
      dataset: ds,
      predictions: [preds],
      log: (l) => lines.push(l),
      hooks: {
        beforeOpen: (p) => {
          if (!p.endsWith('a.tum')) return;
          renameSync(`${preds}.trajectories`, `${preds}.trajectories.moved`);
          symlinkSync(trajOut, `${preds}.trajectories`);
        },
      },
    });
    try {
      expect(d.runEstimate(d.runs[0], 'a')).toBeNull();
      expect(lines.some((l) => l.includes('outside the allowed folder'))).toBe(true);
    } finally {
      rmSync(`${preds}.trajectories`);
      renameSync(`${preds}.trajectories.moved`, `${preds}.trajectories`);
    }
  });
});

/** A zip written by hand, so a member can declare any inflated size (the CRC is not checked by readers of npz). */
function zipOf(members: { name: string; data: Uint8Array; method: 0 | 8; size: number }[]): Buffer {
  const locals: Buffer[] = [], central: Buffer[] = [];
  let off = 0;
  for (const m of members) {
    const name = Buffer.from(m.name);
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(m.method, 8);
    h.writeUInt32LE(m.data.length, 18);
    h.writeUInt32LE(m.size, 22);
    h.writeUInt16LE(name.length, 26);
    locals.push(h, name, Buffer.from(m.data));
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(m.method, 10);
    c.writeUInt32LE(m.data.length, 20);
    c.writeUInt32LE(m.size, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(off, 42);
    central.push(c, name);
    off += 30 + name.length + m.data.length;
  }
  const cd = Buffer.concat(central);
  const e = Buffer.alloc(22);
  e.writeUInt32LE(0x06054b50, 0);
  e.writeUInt16LE(members.length, 8);
  e.writeUInt16LE(members.length, 10);
  e.writeUInt32LE(cd.length, 12);
  e.writeUInt32LE(off, 16);
  return Buffer.concat([...locals, cd, e]);
}

describe('hostile round 3: bounded work: npz members are read only when needed, and bounded', () => {
  const n = 31;
  const member = (key: string, shape: number[]) => {
    const raw = encodeNpy({ shape, data: Float64Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => i * 0.1) });
    return { name: `${key}.npy`, data: deflateRawSync(raw), method: 8 as const, size: raw.length };
  };
  const arrays = () => [...['timestamps', 'yaw', 'speed', 'accel', 'yaw_rate', 'jerk'].map((k) => member(k, [n])), member('position', [n, 2])];
  const file = (name: string, members: ReturnType<typeof member>[]) => {
    const p = join(tmp, name);
    writeFileSync(p, zipOf(members));
    return p;
  };

  it('a well-formed hand-written npz reads (the crafted files below differ from it in one member only)', () => {
    expect(readNpzArrays(file('ok.npz', arrays())).speed[3]).toBeCloseTo(0.3, 12);
  });

  it('an unused member is never inflated: damaged deflate data, or 3.75 GiB declared, in a member no one reads', () => {
    const damaged = { name: 'extra.npy', data: Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), method: 8 as const, size: 1000 };
    expect(readNpzArrays(file('unused-damaged.npz', [...arrays(), damaged])).timestamps).toHaveLength(n);
    const huge = { ...damaged, name: 'video_cache.npy', size: 0xf0000000 };
    expect(readNpzArrays(file('unused-huge.npz', [...arrays(), huge])).timestamps).toHaveLength(n);
  });

  it('a used member declaring 3.75 GiB is refused by its declared size, before inflating', () => {
    const p = file('declared-huge.npz', arrays().map((m) => (m.name === 'speed.npy' ? { ...m, size: 0xf0000000 } : m)));
    expect(() => readNpzArrays(p)).toThrow(`${p}: speed.npy declares 4026531840 bytes inflated, more than the`);
  });

  it('a used member that inflates past its declared size (200 bytes declared, 32 MiB inside) stops there, named', () => {
    const bomb = { name: 'speed.npy', data: deflateRawSync(Buffer.alloc(32 << 20)), method: 8 as const, size: 200 };
    expect(bomb.data.length).toBeLessThan(64 << 10);
    const p = file('bomb.npz', arrays().map((m) => (m.name === 'speed.npy' ? bomb : m)));
    expect(() => readNpzArrays(p)).toThrow(`${p}: not a valid npz (zip) file (speed.npy: inflates past its declared 200 bytes)`);
  });
});

describe('hostile round 3: one engine per output: the run key carries the dataset by content', () => {
  const clip = (id: string, answer: string) => ({ id, source: 'synthetic', index: 0, qa: [{ qa_id: 'qa_1', clip_id: id, question_id: 'speed_regime', category: 'direct_dynamics', answer }] });
  const key = (c: ReturnType<typeof clip>[]) => ({ dataset: '/data/ds', dataset_content: datasetContent(c as never) }) as unknown as RunKey;

  it('an edited QA record, an edited clip list, or a record from before it was kept: keyDiff names what changed', () => {
    const before = key([clip('a', 'urban'), clip('b', 'slow')]);
    expect(keyDiff(key([clip('a', 'urban'), clip('b', 'slow')]), before)).toBeNull();
    expect(keyDiff(key([clip('a', 'urban'), clip('b', 'highway')]), before)).toBe('dataset /data/ds: its QA records changed; answers from both would mix');
    expect(keyDiff(key([clip('a', 'urban')]), before)).toBe('dataset /data/ds: its clip list changed; answers from both would mix');
    expect(keyDiff(key([clip('a', 'urban')]), { dataset: '/data/ds' } as RunKey)).toMatch(/^dataset \/data\/ds: its content \(QA records, clip list\) was not recorded then/);
  });

  it.skipIf(!NATIVE_BUILT)('qa.jsonl edited after a run: the resume refuses in one line (what changed, how to start over) instead of keeping the old labels', () => {
    ensureDist();
    const ds = syntheticDataset(join(tmp, 'ds-edit'), [
      { id: 'c0', speed: 6, yawRate: 0, seed: 1, frames: 6 },
      { id: 'c1', speed: 8, yawRate: 0.3, seed: 2, frames: 6 },
    ]);
    const out = join(tmp, 'edit.jsonl');
    const args = ['run', '--dataset', ds, '--questions', 'subset', '--no-progress', '--workers', '1', '-o', out];
    const first = cli(args);
    expect(first.code, first.stderr).toBe(0);
    const qa = join(ds, 'qa.jsonl');
    writeFileSync(qa, readFileSync(qa, 'utf8').replace('"answer":"urban"', '"answer":"highway"'));
    const r = cli(args);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`dataset ${ds}: its QA records changed; answers from both would mix); rerun with the same options to resume, or use another -o`);
  }, 120_000);
});

describe('hostile round 3: the queue mixes no engines and no datasets (no Redis: the checks each side runs)', () => {
  const run = queueEngine('cpu');
  const other = { ...run, egogeo: '0.0.9' };

  it("a worker of another egogeo build refuses the job; an answer naming another engine, or none, is not used", () => {
    expect(engineRefusal(run, run)).toBeNull();
    expect(engineRefusal(run, other)).toBe(`this worker's engine (egogeo 0.0.9, addon ${run.addon}, cpu) is not the run's (egogeo ${run.egogeo}, addon ${run.addon}, cpu); run the same egogeo build on the coordinator and every worker`);
    expect(engineRefusal(run, { ...run, addon: 'ffffffffffffffff' })).not.toBeNull();
    expect(engineRefusal(run, { ...run, device: 'gpu' })).not.toBeNull();
    const answer = { id: 'c', records: [], tum: '' };
    expect(answerRefusal({ ...answer, engine: run, inputs: {} }, { engine: run, inputs: {} })).toBeNull();
    expect(answerRefusal({ ...answer, engine: other, inputs: {} }, { engine: run })).toBe(
      `answered by another engine (egogeo 0.0.9, addon ${run.addon}, cpu; this run's: egogeo ${run.egogeo}, addon ${run.addon}, cpu): not used; run the same egogeo build on every worker, then rerun to redo it`,
    );
    expect(answerRefusal(answer, { engine: run })).toMatch(/^the worker's answer names no engine \(another egogeo version\?\)/);
  });

  it('a worker whose --path-map leads to an edited copy of the dataset refuses the clip, naming the file; an identical copy answers', () => {
    const a = join(tmp, 'q-coord'), b = join(tmp, 'q-worker');
    for (const d of [a, b]) {
      mkdirSync(join(d, 'frames'), { recursive: true });
      writeFileSync(join(d, 'frames', '0.pgm'), 'P5 1 1 255 x');
      writeFileSync(join(d, 'frames', '1.pgm'), 'P5 1 1 255 y');
      writeFileSync(join(d, 'c.npz'), 'arrays');
    }
    const task: ClipTask = { clip: { index: 0, id: 'c', source: 's', camera: {}, qa: [], frames: [join(a, 'frames', '0.pgm'), join(a, 'frames', '1.pgm')], arrays: join(a, 'c.npz') }, qa: [], engine: engineConfig({}), config: '/q.yaml', questionIds: [], qaBase: 0 };
    const coordinator = inputDigest(task.clip);
    const worker = () => inputDigest(mapTask(task, [parsePathMap(`${a}=${b}`)]).clip);
    expect(inputsRefusal(coordinator, worker())).toBeNull();
    writeFileSync(join(b, 'frames', '1.pgm'), 'P5 1 1 255 z'); // the copy's frame 1 edited
    expect(inputsRefusal(coordinator, worker())).toBe(`its frame 1 ${join(b, 'frames', '1.pgm')} differs from the coordinator's ${join(a, 'frames', '1.pgm')} (sha256 ${worker()['frame 1'].sha}… here, ${coordinator['frame 1'].sha}… there); --path-map must lead to the same dataset`);
    // The coordinator checks the answer's digest too (a worker that does not check is caught there).
    expect(answerRefusal({ id: 'c', records: [], tum: '', engine: run, inputs: worker() }, { engine: run, inputs: coordinator })).toMatch(/^answered from other input files: its frame 1 /);
  });
});

/** Starts `node args…`, sends `sig` once `ready()` holds, and resolves with how it ended and its stderr. */
function killWhen(args: string[], ready: () => boolean, sig: NodeJS.Signals = 'SIGINT', env: Record<string, string> = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; sent: boolean }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  let sent = false;
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const poll = setInterval(() => {
    if (!sent && ready()) {
      sent = true;
      child.kill(sig);
    }
  }, 5);
  return new Promise((ok) =>
    child.on('exit', (code, signal) => {
      clearInterval(poll);
      ok({ code, signal, stderr, sent });
    }),
  );
}
const leftovers = (dir: string, base: string) => readdirSync(dir).filter((f) => f.startsWith(`.${base}.`) || f.startsWith(`${base}.`) || f === base);

describe('hostile round 3: kills leave nothing behind', () => {
  beforeAll(() => ensureDist());

  it('an output folder written atomically (report, sensitivity --plots): SIGINT mid-write removes its .DIR.PID.*.tmp and exits by the signal', async () => {
    const dir = join(tmp, 'kill-dir');
    mkdirSync(dir);
    const script = `import('${join(ROOT, 'dist/io/atomic.js')}').then((m) => m.writeDirAtomic(${JSON.stringify(join(dir, 'report'))}, async (stage) => { (await import('node:fs')).writeFileSync(stage + '/index.html', 'x'); await new Promise((r) => setTimeout(r, 60000)); }))`;
    const r = await killWhen(['--input-type=module', '-e', script], () => readdirSync(dir).some((f) => f.endsWith('.tmp') && existsSync(join(dir, f, 'index.html'))));
    expect(r.sent).toBe(true);
    expect(r.signal ?? r.code).toBe(r.signal ? 'SIGINT' : 130);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('the next run removes the staging folders a SIGKILLed one left (its pid gone), and keeps a live one\'s', async () => {
    const dir = join(tmp, 'stale-dir');
    mkdirSync(join(dir, '.plots.999999999.0123abcd.tmp'), { recursive: true });
    mkdirSync(join(dir, '.plots.tmp-Ab12Cd')); // as egogeo synth named its staging folders before
    mkdirSync(join(dir, `.plots.${process.pid}.0123abcd.tmp`)); // a live process's (this one)
    const { writeDirAtomic } = await import('../../src/io/atomic.js');
    await writeDirAtomic(join(dir, 'plots'), (stage) => writeFileSync(join(stage, 'a.svg'), '<svg/>'));
    expect(readdirSync(dir).sort()).toEqual([`.plots.${process.pid}.0123abcd.tmp`, 'plots']);
  });

  /** Two shards egogeo run would have written (1 clip each), made by hand; shard 0 with `extra` trajectory files. */
  const shards = (name: string, extra = 0) => {
    const d = join(tmp, name);
    mkdirSync(d);
    const key = { dataset: '/d', method: 'egogeo', questions: 'subset', scale: 'road', frames: null, config: '/q.yaml', config_sha256: 'x', engine: { egogeo: '0', addon: 'a' } };
    return [0, 1].map((i) => {
      const p = join(d, `s${i}.jsonl`);
      writeFileSync(p, `${JSON.stringify({ clip_id: `c${i}`, question_id: 'speed_regime', model_answer: 'slow' })}\n`);
      writeFileSync(`${p}.run.json`, JSON.stringify({ egogeo_run: 1, key, shard: { index: i, count: 2 }, model: 'm', clips_total: 2, clips: [[i, `c${i}`, 's', 1]], status: 'complete', started: '2026-01-01T00:00:00Z' }));
      mkdirSync(`${p}.trajectories`);
      writeFileSync(join(`${p}.trajectories`, `c${i}.tum`), '0 0 0 0 0 0 0 1\n');
      if (i === 0) for (let k = 0; k < extra; k++) writeFileSync(join(`${p}.trajectories`, `x${k}.tum`), '0 0 0 0 0 0 0 1\n');
      return p;
    });
  };

  it('merge: SIGINT while it copies leaves no OUT.errors.jsonl, no OUT.trajectories/ and no lock without OUT', async () => {
    const [s0, s1] = shards('merge-kill', 5000);
    const out = join(tmp, 'merge-kill', 'm.jsonl');
    const r = await killWhen([BIN, 'merge', s0, s1, '-o', out], () => existsSync(`${out}.trajectories`) && readdirSync(`${out}.trajectories`).length > 100);
    expect(r.sent).toBe(true);
    expect(r.signal ?? r.code).toBe(r.signal ? 'SIGINT' : 130);
    expect(leftovers(join(tmp, 'merge-kill'), 'm.jsonl')).toEqual([]);
  }, 60_000);

  it("merge: a failed copy names the merge's file, not the shard's", () => {
    const [s0, s1] = shards('merge-fail');
    const out = join(tmp, 'merge-fail', 'm.jsonl');
    mkdirSync(join(`${out}.trajectories`, 'c1.tum'), { recursive: true }); // a folder where the merge writes a file
    const r = cli(['merge', s0, s1, '-o', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`egogeo: ${join(`${out}.trajectories`, 'c1.tum')}: cannot write (EISDIR: is a folder)\n`);
    const full = cli(['merge', s0, s1, '-o', join(tmp, 'merge-fail', 'n.jsonl')], { env: { EGOGEO_FAULT_WRITE: 'ENOSPC:n.jsonl.trajectories' } });
    expect(full.stderr).toMatch(new RegExp(`^egogeo: ${join(tmp, 'merge-fail', 'n.jsonl.trajectories')}/c\\d\\.tum: cannot write \\(ENOSPC: no space left on device\\)\\n$`));
    expect(leftovers(join(tmp, 'merge-fail'), 'n.jsonl')).toEqual([]);
    // The hand-made shards themselves merge.
    const ok = cli(['merge', s0, s1, '-o', join(tmp, 'merge-fail', 'ok.jsonl')]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readdirSync(join(tmp, 'merge-fail', 'ok.jsonl.trajectories')).sort()).toEqual(['c0.tum', 'c1.tum']);
  });

  it.skipIf(!NATIVE_BUILT)('synth: SIGINT mid-render removes its staging folder; the next run removes what a SIGKILL left', async () => {
    const dir = join(tmp, 'synth-kill');
    mkdirSync(dir);
    const out = join(dir, 'ds');
    const stage = () => readdirSync(dir).find((f) => f.startsWith('.ds.'));
    const r = await killWhen([BIN, 'synth', '--clips', '40', '--seed', '5', '--out', out, '--no-progress', '--workers', '1'], () => {
      const s = stage();
      return !!s && existsSync(join(dir, s, 'frames'));
    });
    expect(r.sent).toBe(true);
    expect(r.signal ?? r.code).toBe(r.signal ? 'SIGINT' : 130);
    expect(readdirSync(dir)).toEqual([]);
    const k = await killWhen([BIN, 'synth', '--clips', '40', '--seed', '5', '--out', out, '--no-progress', '--workers', '1'], () => !!stage(), 'SIGKILL');
    expect(k.signal).toBe('SIGKILL');
    expect(stage()).toBeDefined(); // SIGKILL runs no cleanup
    const again = cli(['synth', '--clips', '1', '--seed', '5', '--out', out, '--no-progress', '--workers', '1']);
    expect(again.code, again.stderr).toBe(0);
    expect(readdirSync(dir)).toEqual(['ds']);
  }, 120_000);
});
