/**
 * audit: the shortcut bound against brute force on small cases (every answer per cell tried), the
 * per-cell gains summing to bound − chance, the numbers on the published selected_clips.json
 * (skipped without ../shared), the turn geometry derived by hand for two turns, and one-line errors.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAuditClips } from '../../src/audit/load.js';
import { type AuditClip, cellKey, shortcutBound } from '../../src/audit/shortcut.js';
import { cameraGeometry, turnBound } from '../../src/audit/turn.js';
import { balancedAccuracy, semanticAccuracy } from '../../src/grade/metrics.js';
import { cli } from '../helpers/cli.js';
import { needsShared, sharedPath } from '../helpers/shared.js';

const tmp = mkdtempSync(join(tmpdir(), 'egogeo-audit-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A deterministic small data set: `n` clips, cells from field `g`, questions with 2–3 labels. */
function small(seed: number, n: number, cells: number, qs: { id: string; labels: string[] }[]): AuditClip[] {
  let s = seed >>> 0;
  const rnd = (): number => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  return Array.from({ length: n }, (_, i) => {
    const g = Math.floor(rnd() * cells);
    const answers: Record<string, string> = {};
    // skew labels by cell so that the cells carry information
    for (const q of qs) answers[q.id] = q.labels[Math.min(q.labels.length - 1, Math.floor(rnd() * q.labels.length * 0.6 + g * 0.5) % q.labels.length)];
    return { id: `c${i}`, answers, fields: { g: `g${g}`, source: i % 2 ? 'carla' : 'nuscenes' } };
  });
}

/** Every assignment of one label per cell. */
function* assignments(cells: string[], labels: string[]): Generator<Record<string, string>> {
  const idx = cells.map(() => 0);
  for (;;) {
    yield Object.fromEntries(cells.map((c, i) => [c, labels[idx[i]]]));
    let k = 0;
    while (k < idx.length && ++idx[k] === labels.length) idx[k++] = 0;
    if (k === idx.length) return;
  }
}

const QS = [
  { id: 'q1', labels: ['a', 'b', 'c'] },
  { id: 'q2', labels: ['yes', 'no'] },
];

describe('audit shortcut: the optimum per (cell, question) is argmax_y n(cell, y) / n(y)', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`equals brute force over every answer per cell (seed ${seed})`, () => {
      const clips = small(seed, 17 + seed * 3, 3, QS);
      const r = shortcutBound(clips, ['g']);
      const cells = [...new Set(clips.map((c) => cellKey(c.fields, ['g'])))];
      const labelsOf = (q: string) => [...new Set(clips.map((c) => c.answers[q]))];
      const perQBest: Record<string, number> = {};
      const all: Record<string, Record<string, string>[]> = {};
      for (const q of QS) {
        const o = clips.map((c) => c.answers[q.id]);
        let best = -1;
        all[q.id] = [...assignments(cells, labelsOf(q.id))];
        for (const a of all[q.id]) best = Math.max(best, balancedAccuracy(o, clips.map((c) => a[cellKey(c.fields, ['g'])]), null));
        perQBest[q.id] = best;
        expect(r.per_question[q.id].bound).toBeCloseTo(best, 12);
      }
      // pooled: the grader's pooled score of the per-question optima, and the pooled metric's own optimum
      let pooledBest = -1;
      const o = QS.flatMap((q) => clips.map((c) => c.answers[q.id]));
      for (const a1 of all.q1) {
        for (const a2 of all.q2) {
          const p = [...clips.map((c) => a1[cellKey(c.fields, ['g'])]), ...clips.map((c) => a2[cellKey(c.fields, ['g'])])];
          pooledBest = Math.max(pooledBest, balancedAccuracy(o, p, null));
        }
      }
      expect(r.pooled14_max).toBeCloseTo(pooledBest, 12);
      const p = QS.flatMap((q) => clips.map((c) => r.per_question[q.id].answers[cellKey(c.fields, ['g'])]));
      expect(r.pooled14).toBeCloseTo(balancedAccuracy(o, p, null), 12);
      expect(r.pooled14).toBeLessThanOrEqual(r.pooled14_max + 1e-12);
      // the cells' gains add up to bound − chance
      for (const q of QS) {
        const sum = r.cells.reduce((s, c) => s + (c.per_question[q.id]?.gain ?? 0), 0);
        expect(sum).toBeCloseTo(r.per_question[q.id].bound - r.per_question[q.id].chance, 12);
      }
    });
  }

  it('accuracy: the optimum is the majority per cell (brute force)', () => {
    const clips = small(9, 25, 3, QS);
    const r = shortcutBound(clips, ['g'], 'acc');
    const cells = [...new Set(clips.map((c) => cellKey(c.fields, ['g'])))];
    for (const q of QS) {
      const o = clips.map((c) => c.answers[q.id]);
      let best = -1;
      for (const a of assignments(cells, [...new Set(o)])) best = Math.max(best, semanticAccuracy(o, clips.map((c) => a[cellKey(c.fields, ['g'])])));
      expect(r.per_question[q.id].bound).toBeCloseTo(best, 12);
    }
  });

  it('one cell: every question is at chance (a constant answer)', () => {
    const clips = small(5, 20, 1, QS);
    const r = shortcutBound(clips, ['g']);
    for (const q of QS) expect(r.per_question[q.id].bound).toBeCloseTo(r.per_question[q.id].chance, 12);
  });

  it('reads qa.jsonl + clips_index.jsonl and cells from any record field (CARLA behavior)', async () => {
    const dir = join(tmp, 'carla_clips');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    const ids = ['s__Aggressive__w0', 's__Aggressive__w1', 's__Comfort__w0', 's__Comfort__w1'];
    writeFileSync(join(dir, 'clips_index.jsonl'), ids.map((id) => JSON.stringify({ clip_id: id, behavior: id.split('__')[1], source: 'carla' })).join('\n') + '\n');
    writeFileSync(
      join(dir, 'qa.jsonl'),
      ids.map((id) => JSON.stringify({ clip_id: id, question_id: 'extreme_maneuver', answer: id.includes('Aggressive') ? 'yes' : 'no' })).join('\n') + '\n',
    );
    const out = join(tmp, 'b.json');
    const r = await cli('audit', 'shortcut', '--clips', dir, '--by', 'behavior', '--json', out);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(readFileSync(out, 'utf8'));
    expect(j.per_question.extreme_maneuver.bound).toBe(1);
    expect(j.per_question.extreme_maneuver.chance).toBe(0.5);
    expect(Object.keys(j).slice(0, 3)).toEqual(['pooled14', 'pooled6', 'per_question']);
  });
});

describe.skipIf(!needsShared('audit shortcut on the published list', 'reference/selected_clips.json', 'reference/leaderboard.json'))('audit shortcut on the published selected_clips.json (needs ../shared)', () => {
  it('--by source: 0.490 pooled, 0.516 on the 6-question subset, the per-question bounds, the leaderboard count', async () => {
    const out = join(tmp, 'source.json');
    const r = await cli('audit', 'shortcut', '--clips', sharedPath('reference', 'selected_clips.json'), '--by', 'source', '--leaderboard', sharedPath('reference', 'leaderboard.json'), '--json', out);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(readFileSync(out, 'utf8'));
    expect(j.pooled14.toFixed(3)).toBe('0.490');
    expect(j.pooled6.toFixed(3)).toBe('0.516');
    expect(j.mean_bound.toFixed(3)).toBe('0.562');
    expect(j.mean_chance.toFixed(3)).toBe('0.393');
    expect(j.per_question.stop_and_go.bound.toFixed(3)).toBe('0.762');
    expect(j.per_question.high_lateral_accel.bound.toFixed(3)).toBe('0.768');
    expect(j.per_question.brake_then_turn.bound.toFixed(3)).toBe('0.737');
    expect(j.pooled14).toBeGreaterThan(0.471); // above the best vision-only model (gemini3_pro, 0.4705)
    expect(j.leaderboard.n_rows).toBe(49);
    expect(j.leaderboard.pooled.at_or_below).toBe(27);
    expect(j.leaderboard.pooled.models).toContain('gemini3_pro');
    expect(r.out).toContain('pooled over all 14 questions: 0.490');
    expect(r.out).toMatch(new RegExp(`caveat: the bound comes from these ${j.n_clips} clips .*compare like with like`));
  });

  it('a KITTI sequence folder, as egogeo run reads it: its windows, answered as the benchmark folder answers them', () => {
    const clips = loadAuditClips([sharedPath('data/kitti/06')]);
    const qa = readFileSync(sharedPath('data/egodyn_kitti/qa.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { clip_id: string; question_id: string; answer: unknown });
    const ids = clips.map((c) => c.id);
    expect(ids).toEqual([...new Set(qa.filter((q) => q.clip_id.startsWith('kitti06_')).map((q) => q.clip_id))]);
    for (const q of qa.filter((x) => x.clip_id.startsWith('kitti06_'))) {
      expect([q.clip_id, q.question_id, clips.find((c) => c.id === q.clip_id)!.answers[q.question_id]]).toEqual([q.clip_id, q.question_id, String(q.answer).toLowerCase()]);
    }
    expect(clips[0].fields).toMatchObject({ source: 'kitti', seq: '06' });
  });

  it('on a few dozen clips the leaderboard count carries a caveat: the bound is fitted to the same clips', async () => {
    const few = join(tmp, 'few.json');
    writeFileSync(few, JSON.stringify(JSON.parse(readFileSync(sharedPath('reference', 'selected_clips.json'), 'utf8')).slice(0, 49)));
    const r = await cli('audit', 'shortcut', '--clips', few, '--by', 'source', '--leaderboard', sharedPath('reference', 'leaderboard.json'));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/caveat: the bound comes from these 49 clips \(\d+ cells, [\d.]+ clips a cell\).*optimistic .*indicative only/);
  });
});

describe('audit turn-geometry: pinhole, fy from the vertical field of view, fx = fy', () => {
  const g = cameraGeometry({ width: 640, height: 480, vfovDeg: 120 });
  const h = g.halfAngleDeg;
  it('640×480 at 120° vertical: half-angle 66.5868°', () => {
    // fy = 240 / tan 60° = 138.564; h = atan(320 / 138.564)
    expect(g.focal).toBeCloseTo(240 / Math.sqrt(3), 10);
    expect(h.toFixed(4)).toBe('66.5868');
  });
  it('turn 90° right, by hand: bearings [−h−90, h−90] → front h−45, left 90, behind h−45', () => {
    const t = turnBound(h, 90);
    expect(t.reachable.map((a) => a.answer)).toEqual(['front', 'behind', 'left']);
    const deg = Object.fromEntries(t.reachable.map((a) => [a.answer, a.degrees]));
    expect(deg.front).toBeCloseTo(h - 45, 10);
    expect(deg.behind).toBeCloseTo(h - 45, 10);
    expect(deg.left).toBeCloseTo(90, 10);
    expect(t.bound).toBeCloseTo(90 / (2 * h), 12);
    expect(t.best).toBe('left');
  });
  it('turn 30° right, by hand: bearings [−h−30, h−30] → front h+15, left h−15', () => {
    const t = turnBound(h, 30);
    expect(t.reachable.map((a) => a.answer)).toEqual(['front', 'left']);
    expect(t.reachable[0].degrees).toBeCloseTo(h + 15, 10);
    expect(t.reachable[1].degrees).toBeCloseTo(h - 15, 10);
    expect(t.bound).toBeCloseTo((h + 15) / (2 * h), 12);
    // a left turn is the mirror image
    expect(turnBound(h, -30).reachable.map((a) => a.answer)).toEqual(['front', 'right']);
  });
  it('prints the half-angle and the reachable sets', async () => {
    const r = await cli('audit', 'turn-geometry', '--width', '640', '--height', '480', '--vfov', '120', '--turns', '30,60,90,120,180');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('horizontal half-angle 66.5868°');
    expect(r.out).toMatch(/90°.*front 16\.2%, behind 16\.2%, left 67\.6%\s+0\.676\s+left/);
    expect(r.out).toMatch(/180°.*right 16\.2%, behind 67\.6%, left 16\.2%\s+0\.676\s+behind/);
  });
});

describe('audit: bad input is one line and exit 1', () => {
  it.each([
    [['audit', 'shortcut', '--clips', '/nonexistent/x.json', '--by', 'source'], /x\.json: cannot read/],
    [['audit', 'turn-geometry', '--width', 'abc', '--height', '480', '--vfov', '120'], /--width: expected a number/],
    [['audit', 'turn-geometry', '--width', '640', '--height', '480', '--vfov', '190'], /--vfov/],
    [['audit', 'shortcut', '--clips', 'X', '--by', 'source', '--metric', 'f1'], /--metric/],
  ])('%j', async (args, re) => {
    const r = await cli(...(args as string[]));
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(re);
  });
  it('a field no clip has, and a clip without answers', async () => {
    const p = join(tmp, 'clips.json');
    writeFileSync(p, JSON.stringify([{ id: 'a', source: 'carla', answers: { q: 'x' } }]));
    const r = await cli('audit', 'shortcut', '--clips', p, '--by', 'weather');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/--by: no clip .* has the field 'weather'/);
    const p2 = join(tmp, 'clips2.json');
    writeFileSync(p2, JSON.stringify([{ id: 'a', source: 'carla' }]));
    const r2 = await cli('audit', 'shortcut', '--clips', p2, '--by', 'source');
    expect(r2.code).toBe(1);
    expect(r2.err).toMatch(/clips2\.json: clip 1 \(a\) has no "answers" object/);
  });
});
