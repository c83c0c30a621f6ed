/**
 * The benchmark's VLM prompts (src/prompts/) against golden prompts the reference's own code built
 * (test/fixtures/prompts: how), byte for byte, for every embedding, per QA item and per clip; the
 * Python number formatting on its own; `egogeo prompts` end to end.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readDataset } from '../../src/datasets/benchmark.js';
import { EMBEDDINGS, pyFixed, selectIndices, summaryEmbedding, timeseriesEmbedding } from '../../src/prompts/prompt.js';
import { answersFromResults, parseGroupedResponse } from '../../src/prompts/answers.js';
import { promptRequests } from '../../src/prompts/requests.js';
import { cli } from '../helpers/cli.js';
import { needsShared, sharedPath } from '../helpers/shared.js';
import { NATIVE_BUILT, syntheticDataset } from '../run/fixtures.js';

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
    // Issue 54: what Python prints for non-finite and huge values (f"{x:.1f}"), not JavaScript's NaN / Infinity / 5e+21.
    expect([NaN, -NaN, Infinity, -Infinity].map((x) => pyFixed(x, 1))).toEqual(['nan', 'nan', 'inf', '-inf']);
    expect(pyFixed(5e21, 1)).toBe('5000000000000000000000.0');
    expect(pyFixed(1e23, 2)).toBe('99999999999999991611392.00'); // every digit of the binary value
    expect(pyFixed(-1e22, 0)).toBe('-10000000000000000000000');
    expect(pyFixed(123456789012345.67, 2)).toBe('123456789012345.67');
    expect(pyFixed(5e-324, 3)).toBe('0.000');
    // …and so in the prompts built from them (a non-finite feature, a huge or non-finite array value).
    expect(summaryEmbedding({ max_speed: Infinity, mean_speed: NaN, min_accel: -Infinity, max_abs_jerk: 5e21 })).toBe(
      'Vehicle dynamics: max_speed=infm/s (infkm/h), mean_speed=nanm/s, min_accel=-infm/s², max_yaw_rate=0.000rad/s, max_jerk=5000000000000000000000.00m/s³, mean_jerk=0.00m/s³, max_lat_accel=0.00m/s², heading_change=0.000rad',
    );
    const arr = { timestamps: [0, 1.5, 3], x: [0, 1, 2], y: [0, 0, 0], speed: [NaN, Infinity, 2e21] };
    expect(timeseriesEmbedding(arr, 3).split('\n')[2]).toBe('speed(m/s): nan, inf, 2000000000000000000000.0');
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
    // The fixture keeps no frames: the engine cannot run, and says which clip and why in one line.
    const e = await cli('prompts', '--dataset', join(FIX, 'data'), '--embedding', 'full', '--trajectory', 'estimated', '-o', out);
    expect(e.err.trim().split('\n')).toHaveLength(1);
    expect(e.err).toMatch(/--trajectory estimated: clip synth21__\w+: missing frame /);
    expect((await cli('prompts', '--dataset', join(FIX, 'data'), '--embedding', 'full', '--trajectory', join(tmp, 'nope.jsonl'), '-o', out)).err).toMatch(/no .*nope\.jsonl\.trajectories/);
  });
});

describe.skipIf(!NATIVE_BUILT)('prompts from estimated trajectories, and the OpenAI batch format', () => {
  it('--trajectory estimated carries the engine\'s numbers (speeds within the engine\'s error of the truth); a run\'s trajectories give the same prompts', async () => {
    const ds = syntheticDataset(join(tmp, 'est'), [
      { id: 'fast', speed: 12, yawRate: 0.1, seed: 2, frames: 31 },
      { id: 'slow', speed: 5, yawRate: -0.2, seed: 3, frames: 31 },
    ], { arrays: true });
    const est = join(tmp, 'est.jsonl'), gt = join(tmp, 'gt.jsonl'), viaRun = join(tmp, 'run-prompts.jsonl'), run = join(tmp, 'run.jsonl');
    for (const [t, o] of [['estimated', est], ['gt', gt]]) {
      const r = await cli('prompts', '--dataset', ds, '--embedding', 'timeseries', '--trajectory', t, '--group-by-clip', '-o', o);
      expect(r.code, r.err).toBe(0);
    }
    const speeds = (p: string) => p.split('\n').find((l) => l.startsWith('speed(m/s): '))!.slice(12).split(', ').map(Number);
    const read = (f: string) => readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { clip_id: string; prompt: string });
    for (const [e, g] of read(est).map((r, i) => [r, read(gt)[i]] as const)) {
      expect(e.prompt).not.toBe(g.prompt); // the engine's numbers, not the truth's
      const d = speeds(e.prompt).map((v, i) => Math.abs(v - speeds(g.prompt)[i])).sort((a, b) => a - b);
      expect(d[d.length >> 1], `${e.clip_id}: median speed difference (the test renderer: a few per cent)`).toBeLessThan(0.6);
      expect(d[d.length - 1], `${e.clip_id}: largest (the clip's ends)`).toBeLessThan(1.2);
    }
    expect((await cli('run', '--dataset', ds, '-o', run, '--workers', '1', '--no-progress')).code).toBe(0);
    expect((await cli('prompts', '--dataset', ds, '--embedding', 'timeseries', '--trajectory', run, '--group-by-clip', '-o', viaRun)).code).toBe(0);
    expect(readFileSync(viaRun, 'utf8')).toBe(readFileSync(est, 'utf8'));
  });

  it('--format openai-batch: the reference\'s request lines, frames as data URIs of the files', async () => {
    const ds = syntheticDataset(join(tmp, 'batch'), [{ id: 'c', speed: 8, yawRate: 0, seed: 4, frames: 12 }]);
    const out = join(tmp, 'batch.jsonl');
    expect((await cli('prompts', '--dataset', ds, '--embedding', 'none', '--format', 'openai-batch', '--frames', '3', '-o', out)).code).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2); // the fixture's two QA items
    const l = lines[0];
    expect(l).toMatchObject({ custom_id: 'qa_00000000', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', max_tokens: 256, temperature: 0 } });
    const content = l.body.messages[0].content;
    expect(content[0].text).toMatch(/^The 3 images show the forward camera view/);
    expect(content).toHaveLength(4);
    const frame0 = join(ds, 'frames', 'c', '0000.pgm');
    expect(content[1].image_url).toEqual({ url: `data:image/jpeg;base64,${readFileSync(frame0).toString('base64')}`, detail: 'low' });
  });
});

describe('VLM answers back into predictions', () => {
  const result = (id: string, text: string | null, status = 200) => ({ custom_id: id, response: { status_code: status, body: text === null ? { error: { message: 'x' } } : { choices: [{ message: { content: text } }] } } });
  it('parse_grouped_response: A1. / 1) / A2: lines, answers by number, blanks where none', () => {
    expect(parseGroupedResponse('A1. left\n2) none\n  A4: yes  \nnoise\nA9. far', 4)).toEqual(['left', 'none', '', 'yes']);
  });
  it('an answer record is the prediction record egogeo run writes: the oracle label as text (oracleText), not the raw QA value', () => {
    const qa = (qa_id: string, question_id: string, answer: unknown) => ({ qa_id, clip_id: 'c', question_id, category: 'x', answer, answer_type: 'categorical' });
    const clip = { id: 'c', source: 'carla', index: 0, camera: {}, qa: [qa('q1', 'a', true), qa('q2', 'b', 1.5), qa('q3', 'c', 2), qa('q4', 'd', 'left')] };
    const r = answersFromResults([clip as never], ['q1', 'q2', 'q3', 'q4'].map((id) => result(id, 'x')), false);
    expect(r.records.map((x) => x.oracle_label)).toEqual(['True', '1.5', '2', 'left']);
    expect(Object.keys(r.records[0])).toEqual(['qa_id', 'clip_id', 'question_id', 'category', 'oracle_label', 'model_answer', 'source']);
  });
  it('egogeo answers: per item and grouped results become records the grader scores; failures are empty answers, unknown ids are named', async () => {
    const { clips } = readDataset(join(FIX, 'data'), { needFrames: false });
    const qa = clips.flatMap((c) => c.qa.map((q) => [c, q] as const));
    // Per item: the oracle's own answer for every item but the first, which failed.
    const items = qa.map(([, q], i) => result(q.qa_id, i === 0 ? null : String(q.answer), i === 0 ? 500 : 200));
    const r = answersFromResults(clips, [...items, result('qa_99999999', 'left')], false);
    expect(r.records).toHaveLength(qa.length);
    expect([r.ok, r.failed, r.unknown]).toEqual([qa.length, 1, ['qa_99999999']]); // answered requests (the unknown one too), failed ones
    expect(r.records[0].model_answer).toBe('');
    expect(r.records.slice(1).every((x) => x.model_answer === String(x.oracle_label))).toBe(true);
    // Grouped: one numbered reply per clip.
    const grouped = clips.map((c) => result(c.id, c.qa.map((q, i) => `A${i + 1}. ${String(q.answer)}`).join('\n')));
    const g = answersFromResults(clips, grouped, true);
    expect(g.records.map((x) => [x.qa_id, x.model_answer])).toEqual(qa.map(([, q]) => [q.qa_id, String(q.answer)]));
    // Through the CLI, then graded: every answer the oracle's.
    const res = join(tmp, 'results.jsonl'), out = join(tmp, 'answers.jsonl');
    writeFileSync(res, grouped.map((x) => JSON.stringify(x)).join('\n') + '\n');
    const a = await cli('answers', '--dataset', join(FIX, 'data'), '--results', res, '--group-by-clip', '-o', out);
    expect(a.code, a.err).toBe(0);
    expect(a.err).toMatch(/parsable coverage 1\.0000, balanced accuracy 1\.0000/);
    const gr = await cli('grade', out);
    expect(gr.out).toMatch(/parsable coverage 1\.0000/);
    expect((await cli('answers', '--dataset', join(FIX, 'data'), '--results', res, '-o', out)).err).toMatch(/grouped prompts need --group-by-clip/);
  });
});

describe.skipIf(!NATIVE_BUILT)('video clips in the requests', () => {
  it('a CARLA clip\'s frames are extracted once, as the reference extracts them, to OUT.frames/<clip>/ (colour JPEGs of the video\'s size)', async () => {
    const { publishedDataset } = await import('../helpers/published.js');
    const sharp = (await import('sharp')).default;
    const pub = publishedDataset(join(tmp, 'pub'), [{ id: 'Town01__Default__w0', source: 'carla', speed: 7, yawRate: -0.2, seed: 4, frames: 31 }]);
    if (!pub.videos) return; // no mp4 writer here (the addon is not built): nothing to extract
    const out = join(tmp, 'video.jsonl');
    const r = await cli('prompts', '--dataset', pub.root, '--embedding', 'none', '--group-by-clip', '-o', out);
    expect(r.code, r.err).toBe(0);
    const [rec] = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { frames: string[]; prompt: string });
    expect(rec.frames.map((f) => f.slice(f.lastIndexOf('/') + 1))).toEqual(['000000', '000003', '000007', '000010', '000013', '000017', '000020', '000023', '000027', '000030'].map((n) => `${n}.jpg`));
    expect(rec.frames[0].startsWith(join(`${out}.frames`, 'Town01__Default__w0'))).toBe(true);
    expect(rec.prompt).toMatch(/^The 10 images show/);
    const m = await sharp(rec.frames[3]).metadata();
    expect([m.format, m.channels, m.width, m.height]).toEqual(['jpeg', 3, 320, 180]); // the fixture's camera
  });
});

describe.skipIf(!needsShared('the shared datasets\' prompt digests', 'data/egodyn_kitti/qa.jsonl', 'data/published/egodyn-bench', 'data/published/nuscenes'))('prompts over ../shared against the reference\'s (digests checked in)', () => {
  const digests = JSON.parse(readFileSync(join(FIX, 'shared-digests.json'), 'utf8')) as Record<string, Record<string, { n: number; sha256: string }>>;
  const sets = {
    egodyn_kitti: () => readDataset(sharedPath('data/egodyn_kitti'), { needFrames: false }).clips,
    published: () => readDataset(sharedPath('data/published/egodyn-bench'), { nuscenesRoot: sharedPath('data/published/nuscenes'), cacheDir: null }).clips,
  };
  for (const [name, clipsOf] of Object.entries(sets)) {
    it(`${name}: every prompt, each embedding, per QA item and per clip, byte-identical to the reference's (sha256 of all of them)`, () => {
      const clips = clipsOf();
      for (const mode of EMBEDDINGS) {
        for (const grouped of [false, true]) {
          const reqs = promptRequests(clips, { embedding: mode, groupByClip: grouped, numFrames: 10 });
          const key = (r: (typeof reqs)[number]) => [r.clip_id, 'qa_id' in r ? r.qa_id : ''] as const;
          const sorted = [...reqs].sort((a, b) => { const [x, y] = [key(a), key(b)]; return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0; });
          const want = digests[name][`${mode}/${grouped ? 'clip' : 'item'}`];
          expect(sorted.length, `${name} ${mode}`).toBe(want.n);
          expect(createHash('sha256').update(sorted.map((r) => r.prompt).join('\0')).digest('hex'), `${name} ${mode} ${grouped ? 'per clip' : 'per item'}`).toBe(want.sha256);
        }
      }
    });
  }
});

describe('batch results grade as the equivalent predictions', () => {
  it('a results file in the batch output schema gives the same metrics as the prediction JSONL it stands for', async () => {
    const { clips } = readDataset(join(FIX, 'data'), { needFrames: false });
    // Answers of a middling model: the oracle's for two items in three, the next choice (or "7") otherwise; one refusal.
    const rows = clips.flatMap((c) => c.qa.map((q, i) => {
      const ch = (q.choices ?? []).map(String);
      const right = String(q.answer);
      const answer = i % 3 === 2 ? (ch.length ? ch[(ch.indexOf(right) + 1) % ch.length] : '7') : i === 4 ? 'I cannot tell.' : right;
      return { c, q, answer };
    }));
    const preds = join(tmp, 'equiv-preds.jsonl'), res = join(tmp, 'equiv-results.jsonl'), back = join(tmp, 'equiv-back.jsonl');
    writeFileSync(preds, rows.map(({ c, q, answer }) => JSON.stringify({ qa_id: q.qa_id, clip_id: c.id, question_id: q.question_id, category: q.category, oracle_label: q.answer, model_answer: answer, source: c.source })).join('\n') + '\n');
    writeFileSync(res, rows.map(({ q, answer }) => JSON.stringify({ id: `batch_req_${q.qa_id}`, custom_id: q.qa_id, response: { status_code: 200, request_id: 'r', body: { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }] } }, error: null })).join('\n') + '\n');
    expect((await cli('answers', '--dataset', join(FIX, 'data'), '--results', res, '-o', back)).code).toBe(0);
    const metrics = async (f: string) => {
      const j = join(tmp, `${f.split('/').pop()}.metrics.json`);
      expect((await cli('grade', f, '--json', j)).code).toBe(0);
      const m = JSON.parse(readFileSync(j, 'utf8'));
      delete m.file;
      return m;
    };
    expect(await metrics(back)).toEqual(await metrics(preds));
  });
});
