/**
 * `egogeo prompts` streams (issue 53 item 4): the output split at `--max-file-mb` into parts each
 * within the limit, every request exactly once and in order, valid JSONL; an earlier run's parts
 * replaced; nothing left behind on a failed write (temporary parts, extracted video frames) or by
 * a run killed outright; frames inline or as file URLs. Sizes, not timings, decide everything here.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mkdtempSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { partPath } from '../../src/io/jsonlparts.js';
import { cli } from '../helpers/cli.js';
import { NATIVE_BUILT, syntheticDataset } from '../run/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-prompts-stream-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => {
  delete process.env.EGOGEO_FAULT_WRITE;
});

const linesOf = (f: string): string[] => readFileSync(f, 'utf8').split('\n').slice(0, -1);
const fresh = (name: string): string => {
  const d = join(tmp, name);
  mkdirSync(d, { recursive: true });
  return d;
};

describe('partPath', () => {
  it('names parts predictably beside the output', () => {
    expect(partPath('/a/batch.jsonl', 1)).toBe('/a/batch.part-001.jsonl');
    expect(partPath('/a/batch.jsonl', 12)).toBe('/a/batch.part-012.jsonl');
    expect(partPath('/a/batch', 2)).toBe('/a/batch.part-002');
  });
});

describe.skipIf(!NATIVE_BUILT)('egogeo prompts streams its output in parts', () => {
  // Four clips of two QA items, three frames each inline: eight lines of a few tens of kB.
  const ds = syntheticDataset(join(tmp, 'ds'), [
    { id: 'a', speed: 8, yawRate: 0, seed: 1, frames: 12 },
    { id: 'b', speed: 5, yawRate: 0.2, seed: 2, frames: 12 },
    { id: 'c', speed: 12, yawRate: -0.1, seed: 3, frames: 12 },
    { id: 'd', speed: 3, yawRate: 0.1, seed: 4, frames: 12 },
  ], { arrays: true });
  const args = ['prompts', '--dataset', ds, '--embedding', 'full', '--format', 'openai-batch', '--frames', '3'];
  const whole = join(fresh('whole'), 'batch.jsonl');
  let all: string[] = [];
  let longest = 0;

  it('one file under the default limit: OUT itself, named on stdout', async () => {
    const r = await cli(...args, '-o', whole);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`${whole}\n`);
    all = linesOf(whole);
    expect(all).toHaveLength(8);
    longest = Math.max(...all.map((l) => Buffer.byteLength(l) + 1));
    expect(longest).toBeGreaterThan(10_000); // frames inline: the lines are worth splitting
  });

  it('--max-file-mb splits: every part within the limit, every request exactly once in order, valid JSONL; a rerun replaces the parts', async () => {
    const dir = fresh('split');
    const out = join(dir, 'batch.jsonl');
    const limit = Math.floor(longest * 2.5); // two lines a part, at most
    const r = await cli(...args, '--max-file-mb', String(limit / 1e6), '-o', out);
    expect(r.code, r.err).toBe(0);
    const files = r.out.trim().split('\n');
    expect(files.length).toBeGreaterThanOrEqual(4);
    expect(files).toEqual(files.map((_, i) => partPath(out, i + 1)));
    expect(r.err).toContain(`${files.length} parts of at most ${limit / 1e6} MB`);
    const seen: string[] = [];
    for (const f of files) {
      expect(statSync(f).size, f).toBeLessThanOrEqual(limit);
      const ls = linesOf(f);
      expect(ls.length, f).toBeGreaterThan(0);
      for (const l of ls) JSON.parse(l);
      seen.push(...ls);
    }
    expect(seen).toEqual(all); // byte for byte the unsplit file's lines, each once, in order
    expect(new Set(seen.map((l) => JSON.parse(l).custom_id)).size).toBe(all.length);
    // Only the parts: no OUT, no temporary file, no frames folder.
    expect(readdirSync(dir).sort()).toEqual(files.map((f) => f.slice(dir.length + 1)).sort());

    // Fewer, larger parts: the earlier run's surplus parts go; one part again: OUT and no parts.
    const r2 = await cli(...args, '--max-file-mb', String((longest * 4.5) / 1e6), '-o', out);
    expect(r2.code, r2.err).toBe(0);
    const files2 = r2.out.trim().split('\n');
    expect(readdirSync(dir).sort()).toEqual(files2.map((f) => f.slice(dir.length + 1)).sort());
    expect(files2.flatMap(linesOf)).toEqual(all);
    const r3 = await cli(...args, '-o', out);
    expect(r3.code, r3.err).toBe(0);
    expect(readdirSync(dir)).toEqual(['batch.jsonl']);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(whole, 'utf8'));
  });

  it('a line larger than the limit is refused in one line, and nothing is left', async () => {
    const dir = fresh('toosmall');
    const r = await cli(...args, '--max-file-mb', String(longest / 2 / 1e6), '-o', join(dir, 'batch.jsonl'));
    expect(r.code).not.toBe(0);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/line 1 is [\d.]+ MB, more than the part size limit .*--max-file-mb/);
    expect(readdirSync(dir)).toEqual([]);
    expect((await cli(...args, '--max-file-mb', '0', '-o', join(dir, 'x.jsonl'))).err).toMatch(/--max-file-mb must be a positive number, got '0'/);
  });

  it('a write failing part-way (a full disk at the second part) leaves nothing: no part, no OUT, no temporary file', async () => {
    const dir = fresh('enospc');
    process.env.EGOGEO_FAULT_WRITE = 'ENOSPC:part-002';
    const r = await cli(...args, '--max-file-mb', String((longest * 2.5) / 1e6), '-o', join(dir, 'batch.jsonl'));
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/batch\.jsonl: cannot write.*ENOSPC: no space left on device/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a run killed outright left temporary parts: the next run removes them (their pid is gone), not a live run\'s', async () => {
    const dir = fresh('stale');
    const dead = join(dir, '.batch.jsonl.4194303.0badf00d.part-001.tmp');
    const live = join(dir, `.batch.jsonl.${process.ppid}.0badf00d.part-001.tmp`);
    writeFileSync(dead, '{"half": ');
    writeFileSync(live, '{"half": ');
    expect((await cli(...args, '-o', join(dir, 'batch.jsonl'))).code).toBe(0);
    expect(existsSync(dead)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual([live.slice(dir.length + 1), 'batch.jsonl'].sort());
  });

  it('--frame-urls file: each frame a file:// URL of its file (lines of a few kB)', async () => {
    const out = join(fresh('fileurls'), 'batch.jsonl');
    const r = await cli(...args, '--frame-urls', 'file', '-o', out);
    expect(r.code, r.err).toBe(0);
    const [l] = linesOf(out).map((x) => JSON.parse(x));
    const urls = l.body.messages[0].content.slice(1).map((c: { image_url: { url: string } }) => c.image_url.url);
    expect(urls[0]).toBe(pathToFileURL(join(ds, 'frames', 'a', '0000.pgm')).href);
    expect(urls).toHaveLength(3);
    expect(Math.max(...linesOf(out).map((x) => x.length))).toBeLessThan(5000);
    expect((await cli(...args, '--frame-urls', 'http', '-o', out)).err).toMatch(/--frame-urls must be 'inline' or 'file', got 'http'/);
  });
});

describe.skipIf(!NATIVE_BUILT)('video frames are not left behind', () => {
  it('inline frames: the extraction folder goes once the lines are written, and on a failure; by path (--format requests) a failed run removes the OUT.frames/ it made', async () => {
    const { publishedDataset } = await import('../helpers/published.js');
    const pub = publishedDataset(join(tmp, 'pub'), [
      { id: 'Town01__Default__w0', source: 'carla', speed: 7, yawRate: -0.2, seed: 4, frames: 31 },
      { id: 'Town01__Default__w1', source: 'carla', speed: 9, yawRate: 0.1, seed: 5, frames: 31 },
    ]);
    if (!pub.videos) return; // no mp4 writer here (the addon is not built): nothing to extract
    const base = ['prompts', '--dataset', pub.root, '--embedding', 'none', '--frames', '3'];
    const ok = fresh('video-ok');
    const r = await cli(...base, '--format', 'openai-batch', '-o', join(ok, 'batch.jsonl'));
    expect(r.code, r.err).toBe(0);
    expect(readdirSync(ok)).toEqual(['batch.jsonl']);
    expect(linesOf(join(ok, 'batch.jsonl'))[0]).toContain('data:image/jpeg;base64,');

    const bad = fresh('video-bad');
    process.env.EGOGEO_FAULT_WRITE = 'ENOSPC:part-001';
    const f = await cli(...base, '--format', 'openai-batch', '-o', join(bad, 'batch.jsonl'));
    expect(f.code).not.toBe(0);
    expect(readdirSync(bad)).toEqual([]);
    const f2 = await cli(...base, '-o', join(bad, 'requests.jsonl'));
    expect(f2.code).not.toBe(0);
    expect(readdirSync(bad)).toEqual([]); // requests.jsonl.frames/ was this run's: removed
  });
});
