/** The resumable predictions file: clip blocks, torn/incomplete tails, foreign files, canonical finalize. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ExpectedClip, parseBlocks, PredictionsOutput } from '../../src/run/output.js';
import { parseShard } from '../../src/cli/options.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-output-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const rec = (clip: string, q: number) => `${JSON.stringify({ qa_id: `qa_${q}`, clip_id: clip, question_id: `q${q}`, model_answer: 'x' })}\n`;
const block = (clip: string, n = 2) => Array.from({ length: n }, (_, q) => rec(clip, q)).join('');
const expected = new Map<string, ExpectedClip>([
  ['a', { index: 0, count: 2 }],
  ['b', { index: 1, count: 2 }],
  ['c', { index: 2, count: 2 }],
]);

describe('parseBlocks', () => {
  it('keeps whole clip blocks in file order', () => {
    const r = parseBlocks(block('c') + block('a'), expected, 'f');
    expect(r.blocks.map((b) => [b.id, b.count])).toEqual([['c', 2], ['a', 2]]);
    expect(r).toMatchObject({ dropped: [], repaired: false });
    expect(r.blocks[0].text).toBe(block('c'));
  });

  it('drops a torn last line and the short block it leaves', () => {
    const torn = block('a') + rec('b', 0) + rec('b', 1).slice(0, 20);
    const r = parseBlocks(torn, expected, 'f');
    expect(r.blocks.map((b) => b.id)).toEqual(['a']);
    expect(r).toMatchObject({ dropped: ['b'], repaired: true });
  });

  it('drops a short block and lines that are not JSON', () => {
    const r = parseBlocks(block('a') + rec('b', 0) + block('c') + 'garbage\n', expected, 'f');
    expect(r.blocks.map((b) => b.id)).toEqual(['a', 'c']);
    expect(r.dropped).toEqual(['b']);
    expect(r.repaired).toBe(true);
  });

  it('refuses files of another run: unknown clips, repeated clips', () => {
    expect(() => parseBlocks(block('zz'), expected, 'f')).toThrow(/f: has records of clip 'zz', which this run does not include/);
    expect(() => parseBlocks(block('a') + block('b') + block('a'), expected, 'f')).toThrow(/clip 'a' appears twice/);
  });
});

describe('PredictionsOutput', () => {
  it('recovers, appends whole blocks, and finalizes in canonical order', () => {
    const p = join(tmp, 'p.jsonl');
    writeFileSync(p, block('c') + rec('a', 0));
    const f = new PredictionsOutput(p, expected);
    const r = f.recover();
    expect(r.blocks.map((b) => b.id)).toEqual(['c']);
    expect(r.dropped).toEqual(['a']);
    expect(readFileSync(p, 'utf8')).toBe(block('c')); // repaired on disk before appending
    f.append(block('b'));
    f.append(block('a'));
    expect(f.finalize().map((b) => b.id)).toEqual(['a', 'b', 'c']);
    expect(readFileSync(p, 'utf8')).toBe(block('a') + block('b') + block('c'));
  });

  it('starts an empty file when there is none', () => {
    const p = join(tmp, 'new.jsonl');
    const f = new PredictionsOutput(p, expected);
    expect(f.recover().blocks).toEqual([]);
    f.close();
    expect(readFileSync(p, 'utf8')).toBe('');
  });
});

describe('parseShard', () => {
  it('reads i/n and names bad values', () => {
    expect(parseShard('1/4')).toEqual({ index: 1, count: 4 });
    expect(() => parseShard('4/4')).toThrow(/0 <= i < n/);
    expect(() => parseShard('a/2')).toThrow(/--shard must be i\/n/);
  });
});
