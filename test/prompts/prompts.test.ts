/**
 * The benchmark's VLM prompts (src/prompts/) against golden prompts the reference's own code built
 * (test/fixtures/prompts: how), byte for byte, for every embedding, per QA item and per clip; the
 * Python number formatting on its own; `egogeo prompts` end to end.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readDataset } from '../../src/datasets/benchmark.js';
import { EMBEDDINGS, pyFixed, selectIndices } from '../../src/prompts/prompt.js';
import { promptRequests } from '../../src/prompts/requests.js';
import { cli } from '../helpers/cli.js';

const FIX = fileURLToPath(new URL('../fixtures/prompts/', import.meta.url));
const golden = readFileSync(join(FIX, 'golden.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { mode: string; clip_id: string; qa_id?: string; grouped?: boolean; prompt: string });
const tmp = mkdtempSync(join(tmpdir(), 'egogeo-prompts-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('VLM prompts, as the reference builds them', () => {
  const { clips } = readDataset(join(FIX, 'data'), { needFrames: false });
  for (const mode of EMBEDDINGS) {
    it(`${mode}: every QA item's prompt and every clip's grouped prompt byte-identical to the reference's`, () => {
      const items = promptRequests(clips, { embedding: mode, groupByClip: false, numFrames: 10 });
      const grouped = promptRequests(clips, { embedding: mode, groupByClip: true, numFrames: 10 });
      const want = golden.filter((g) => g.mode === mode);
      expect(items.length + grouped.length).toBe(want.length);
      for (const g of want) {
        const got = g.grouped ? grouped.find((r) => r.clip_id === g.clip_id) : items.find((r) => 'qa_id' in r && r.qa_id === g.qa_id && r.clip_id === g.clip_id);
        expect(got?.prompt, `${g.clip_id} ${g.qa_id ?? '(grouped)'}`).toBe(g.prompt);
      }
      expect(items.every((r) => r.frames.length === 10)).toBe(true);
    });
  }

  it('numbers as Python formats them: ties to even on the exact binary value, the sign of a rounded-away negative', () => {
    expect(pyFixed(0.125, 2)).toBe('0.12'); // an exact tie: Python's round-half-even (toFixed gives 0.13)
    expect(pyFixed(0.375, 2)).toBe('0.38');
    expect(pyFixed(2.675, 2)).toBe('2.67'); // 2.67499999… in binary
    expect(pyFixed(-0.0001, 2)).toBe('-0.00');
    expect(pyFixed(32.5, 0)).toBe('32');
    expect(selectIndices(31, 10)).toEqual([0, 3, 7, 10, 13, 17, 20, 23, 27, 30]);
    expect(selectIndices(31, 1)).toEqual([15]);
  });

  it('egogeo prompts writes the requests as JSONL; bad flags are one line', async () => {
    const out = join(tmp, 'p.jsonl');
    const r = await cli('prompts', '--dataset', join(FIX, 'data'), '--embedding', 'timeseries', '--group-by-clip', '-o', out);
    expect(r.code, r.err).toBe(0);
    const recs = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(recs).toHaveLength(2);
    expect(recs[0]).toMatchObject({ clip_id: expect.any(String), qa_ids: expect.any(Array), question_ids: expect.any(Array), frames: expect.any(Array) });
    expect(recs[0].prompt).toBe(golden.find((g) => g.mode === 'timeseries' && g.grouped && g.clip_id === recs[0].clip_id)!.prompt);
    expect((await cli('prompts', '--dataset', join(FIX, 'data'), '--embedding', 'video', '-o', out)).err).toMatch(/--embedding must be one of none, summary, timeseries, coordinates, full, got 'video'/);
    expect((await cli('prompts', '--dataset', join(FIX, 'data'), '--embedding', 'full', '--trajectory', 'estimated', '-o', out)).err).toMatch(/--trajectory must be 'gt'/);
  });
});
