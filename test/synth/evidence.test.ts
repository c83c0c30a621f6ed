/**
 * QA evidence: recomputed from a clip's arrays, it equals what the reference's own QA generator
 * wrote for the KITTI windows in ../shared/data/egodyn_kitti (same keys, same order, same values).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_QUESTIONS_PATH, loadQuestions, summaryFeatures } from '../../src/oracle/index.js';
import { qaRecords } from '../../src/synth/qa.js';
import { needsShared, sharedPath } from '../helpers/shared.js';
import { dynamicsFromNpz } from './helpers.js';

function close(a: unknown, b: unknown, where: string): void {
  if (typeof a === 'number' && typeof b === 'number') {
    expect(Math.abs(a - b), where).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(b)));
  } else if (Array.isArray(a) && Array.isArray(b)) {
    expect(a.length, where).toBe(b.length);
    a.forEach((x, i) => close(x, b[i], `${where}[${i}]`));
  } else if (a && b && typeof a === 'object' && typeof b === 'object') {
    expect(Object.keys(a), where).toEqual(Object.keys(b));
    for (const k of Object.keys(b)) close((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${where}.${k}`);
  } else {
    expect(a, where).toEqual(b);
  }
}

const HAVE = needsShared('QA records against the reference generator', 'data/egodyn_kitti/qa.jsonl', 'data/egodyn_kitti/clips_index.jsonl');

describe.skipIf(!HAVE)('QA records against the reference generator (egodyn_kitti)', () => {
  it('reproduces every field, evidence included, from the clip arrays', () => {
    const questions = loadQuestions();
    const qa = readFileSync(sharedPath('data/egodyn_kitti/qa.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const index = readFileSync(sharedPath('data/egodyn_kitti/clips_index.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    index.forEach((rec, i) => {
      const arrays = dynamicsFromNpz(sharedPath('data/egodyn_kitti', rec.array_ref));
      const features = summaryFeatures(arrays);
      // the labels as the reference wrote them; evidence and the other fields recomputed here
      const labels = Object.fromEntries(qa.filter((q) => q.clip_id === rec.clip_id).map((q) => [q.question_id, q.answer]));
      const mine = qaRecords(rec.clip_id, { arrays, features, labels }, questions, i * 14, rec.t_end);
      const theirs = qa.filter((q) => q.clip_id === rec.clip_id);
      expect(mine).toHaveLength(theirs.length);
      mine.forEach((m, k) => close(JSON.parse(JSON.stringify(m)), theirs[k], `${rec.clip_id}/${theirs[k].question_id}`));
    });
  });
});
