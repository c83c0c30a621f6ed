/**
 * The published geometric baselines, native (native/baselines/, src/baseline/reference.ts), against
 * golden signals and answers the reference's own Python wrote on frames this project rendered
 * (test/fixtures/baselines: how they were made). The answer rules alone on constructed signals.
 * With ../shared: every window of the KITTI excerpts answered through `egogeo run --method`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { flowHeuristicAnswers, voProxyAnswers } from '../../src/baseline/reference.js';
import { evenFrames } from '../../src/vo/frames.js';
import { baselineSignals } from '../../src/native/index.js';
import { NATIVE_BUILT } from '../run/fixtures.js';

const FIX = fileURLToPath(new URL('../fixtures/baselines/', import.meta.url));
interface Golden {
  id: string;
  vo_proxy: { yaw_deg: number[]; disp_mag: number[]; answers: Record<string, string> };
  flow_heuristic: { turn_score: number[]; exp_score: number[]; motion_mag: number[]; answers: Record<string, string> };
}
const golden = JSON.parse(readFileSync(join(FIX, 'golden.json'), 'utf8')) as Golden[];
const clips = JSON.parse(readFileSync(join(FIX, 'clips.json'), 'utf8')) as { id: string; frames: string[] }[];

/** Largest relative difference (absolute below 1e-12). */
const relDiff = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]) / Math.max(1e-12, Math.abs(b[i])));
  return m;
};

describe.skipIf(!NATIVE_BUILT)('published baselines against the reference\'s golden output', () => {
  for (const g of golden) {
    const frames = clips.find((c) => c.id === g.id)!.frames.map((f) => join(FIX, f));
    it(`vo-proxy on ${g.id}: per-pair yaw and displacement within 1e-6, the same 6 answers`, () => {
      const s = baselineSignals({ method: 'vo-proxy', frames });
      expect(s.frames).toBe(10);
      expect(relDiff(s.yawDeg!, g.vo_proxy.yaw_deg)).toBeLessThan(1e-6);
      expect(relDiff(s.dispMag!, g.vo_proxy.disp_mag)).toBeLessThan(1e-6);
      expect(voProxyAnswers({ yawDeg: s.yawDeg!, dispMag: s.dispMag! })).toEqual(g.vo_proxy.answers);
    });
    it(`flow-heuristic on ${g.id}: per-pair turn, expansion and magnitude within 1e-6, the same 6 answers`, () => {
      const s = baselineSignals({ method: 'flow-heuristic', frames });
      expect(relDiff(s.turnScore!, g.flow_heuristic.turn_score)).toBeLessThan(1e-6);
      expect(relDiff(s.expScore!, g.flow_heuristic.exp_score)).toBeLessThan(1e-6);
      expect(relDiff(s.motionMag!, g.flow_heuristic.motion_mag)).toBeLessThan(1e-6);
      expect(flowHeuristicAnswers({ turnScore: s.turnScore!, expScore: s.expScore!, motionMag: s.motionMag! })).toEqual(g.flow_heuristic.answers);
    });
  }

  it('bad requests are one clear error', () => {
    expect(() => baselineSignals({ method: 'vo-proxy', frames: [join(FIX, clips[0].frames[0])] })).toThrow(/at least 2 frames/);
    expect(() => baselineSignals({ method: 'tartanvo' as 'vo-proxy', frames: [] })).toThrow(/method must be one of 'vo-proxy', 'flow-heuristic'/);
    expect(() => baselineSignals({ method: 'flow-heuristic', frames: ['/nonexistent/a.jpg', '/nonexistent/b.jpg'] })).toThrow(/'\/nonexistent\/a\.jpg' does not exist/);
  });
});

describe('the published baselines\' answer rules', () => {
  const vo = (yaw: number[], disp: number[]) => voProxyAnswers({ yawDeg: yaw, dispMag: disp });
  it('vo-proxy: turn by the mean yaw with a peak gate; trend by the displacement slope; stop-and-go by hysteresis', () => {
    expect(vo([0.1, 0.2, 0.1], [5, 5, 5]).yaw_rate_turn_direction).toBe('left');
    expect(vo([0.1, 0.1, 0.1], [5, 5, 5]).yaw_rate_turn_direction).toBe('straight'); // peak 0.1 < 0.15
    expect(vo([-0.05, -0.2, 0], [5, 5, 5]).yaw_rate_turn_direction).toBe('right');
    expect(vo([0, 0, 0], [2, 3, 4]).speed_trend).toBe('accelerating'); // slope 1 px per pair
    expect(vo([0, 0, 0], [4, 3.9, 3.8]).speed_trend).toBe('steady');
    expect(vo([0, 0, 0, 0], [3, 0.2, 0.1, 2.5]).stop_and_go).toBe('yes'); // moving → stopped → moving
    expect(vo([0, 0, 0, 0], [3, 0.2, 0.1, 1.5]).stop_and_go).toBe('no'); // not above 2.0 again
    expect(vo([0.5, 0.5, 0.6], [5, 5, 5]).significant_heading_change).toBe('yes'); // Σ|yaw| 1.6 > 1.5
    expect(vo([0, 0.9, 0], [5, 5, 5]).high_lateral_accel).toBe('yes');
    // Braking: a drop by more than 40% of the mean displacement, then a turn later.
    expect(vo([0, 0, 0.2], [10, 4, 4]).brake_then_turn).toBe('yes');
    expect(vo([0.2, 0, 0], [10, 4, 4]).brake_then_turn).toBe('no');
  });
  it('flow-heuristic: mean turn and expansion against their dead zones; cumulative and peak turn', () => {
    const fh = (turn: number[], exp: number[], mag: number[]) => flowHeuristicAnswers({ turnScore: turn, expScore: exp, motionMag: mag });
    const a = fh([0.1, 0.1, 0.1], [0.3, 0.3, 0.3], [2, 2, 2]);
    expect([a.yaw_rate_turn_direction, a.speed_trend, a.significant_heading_change, a.high_lateral_accel, a.stop_and_go]).toEqual(['left', 'accelerating', 'no', 'no', 'no']);
    expect(fh([-2, -2, 0], [-0.3, 0, 0], [2, 0.1, 2]).yaw_rate_turn_direction).toBe('right');
    expect(fh([-2, -2, 0], [-0.3, 0, 0], [2, 0.1, 2]).stop_and_go).toBe('yes');
    expect(fh([0, 0, -2], [-0.3, 0, 0], [2, 2, 2]).brake_then_turn).toBe('yes');
    expect(fh([-2, 0, 0], [0, 0, -0.3], [2, 2, 2]).brake_then_turn).toBe('no');
  });
  it('frames chosen as the reference chooses them: round(i·(n−1)/(k−1)), halves to even', () => {
    expect(evenFrames(31, 10)).toEqual([0, 3, 7, 10, 13, 17, 20, 23, 27, 30]);
    // 0, 2.5, 5, 7.5, 10: Python's round gives 0, 2, 5, 8, 10.
    expect(evenFrames(11, 5)).toEqual([0, 2, 5, 8, 10]);
  });
});

describe.skipIf(!NATIVE_BUILT)('--method on egogeo run, and the report over the three methods', () => {
  it('answers the 6 questions it supports from 10 frames, writes its signals per clip, names the model as the leaderboard does; the report names each run\'s protocol', async () => {
    const { existsSync, mkdtempSync, readdirSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { cli, syntheticDataset, readJsonl } = await import('../run/fixtures.js');
    const tmp = mkdtempSync(join(tmpdir(), 'egogeo-methods-'));
    try {
      const ds = syntheticDataset(join(tmp, 'd'), [
        { id: 'left', speed: 8, yawRate: 0.3, seed: 2, frames: 31 },
        { id: 'right', speed: 8, yawRate: -0.3, seed: 3, frames: 31 },
      ]);
      const outs: string[] = [];
      for (const m of ['egogeo', 'vo-proxy', 'flow-heuristic']) {
        const out = join(tmp, `${m}.jsonl`);
        const r = cli(['run', '--dataset', ds, '--method', m, '-o', out, '--workers', '1']);
        expect(r.code, r.stderr).toBe(0);
        outs.push(out);
      }
      const vo = readJsonl<{ clip_id: string; question_id: string; model_answer: string }>(outs[1]);
      // The fixture's QA asks turn direction and speed regime; the proxy answers the first only.
      expect(vo.map((p) => [p.clip_id, p.question_id])).toEqual([['left', 'yaw_rate_turn_direction'], ['right', 'yaw_rate_turn_direction']]);
      expect(vo.map((p) => p.model_answer)).toEqual(['left', 'right']);
      expect(readdirSync(`${outs[1]}.trajectories`).sort()).toEqual(['left.signals.json', 'right.signals.json']);
      const sig = JSON.parse(readFileSync(join(`${outs[1]}.trajectories`, 'left.signals.json'), 'utf8'));
      expect(sig.frame_indices).toEqual([0, 3, 7, 10, 13, 17, 20, 23, 27, 30]);
      expect(sig.yawDeg).toHaveLength(9);
      expect(JSON.parse(readFileSync(`${outs[1]}.manifest.json`, 'utf8')).model).toBe('vo_proxy');
      expect(JSON.parse(readFileSync(`${outs[2]}.manifest.json`, 'utf8')).model).toBe('flow_heuristic');
      // The baselines' manifests say what they used: the method, 10 frames, the 6-question subset (issue 53).
      expect(JSON.parse(readFileSync(`${outs[1]}.manifest.json`, 'utf8')).settings).toMatchObject({ method: 'vo-proxy', frames: 10, questions: 'subset' });
      expect(JSON.parse(readFileSync(`${outs[2]}.manifest.json`, 'utf8')).settings).toMatchObject({ method: 'flow-heuristic', frames: 10, questions: 'subset' });
      expect(JSON.parse(readFileSync(`${outs[0]}.manifest.json`, 'utf8')).settings).toMatchObject({ method: 'egogeo', frames: 'all', questions: 'all' });
      // A resumed run skips the clips whose signals are written.
      expect(cli(['run', '--dataset', ds, '--method', 'vo-proxy', '-o', outs[1], '--workers', '1']).stderr).toMatch(/2 from an earlier run/);
      // --protocol published: what the geometric rows used, for egogeo too (10 frames, 6 questions).
      const pub = join(tmp, 'pub.jsonl');
      expect(cli(['run', '--dataset', ds, '--protocol', 'published', '-o', pub, '--workers', '1']).code).toBe(0);
      expect(JSON.parse(readFileSync(`${pub}.run.json`, 'utf8')).key).toMatchObject({ method: 'egogeo', frames: 10, questions: 'subset' });
      // The record and the manifest name the protocol (issue 53); a run without --protocol says null.
      expect(JSON.parse(readFileSync(`${pub}.run.json`, 'utf8')).protocol).toBe('published');
      expect(JSON.parse(readFileSync(`${pub}.manifest.json`, 'utf8')).settings).toMatchObject({ protocol: 'published', frames: 10, questions: 'subset' });
      expect(JSON.parse(readFileSync(`${outs[0]}.run.json`, 'utf8')).protocol).toBeNull();
      expect(JSON.parse(readFileSync(`${outs[0]}.manifest.json`, 'utf8')).settings.protocol).toBeNull();
      expect(cli(['run', '--dataset', ds, '--protocol', 'vlm', '-o', join(tmp, 'x.jsonl')]).stderr).toMatch(/--protocol must be 'published', got 'vlm'/);
      // --model with {domain} on a dataset without CARLA videos: one line, nothing written (issue 53).
      const dm = cli(['run', '--dataset', ds, '--model', 'x_{domain}', '-o', join(tmp, 'dm.jsonl'), '--workers', '1']);
      expect(dm.code).not.toBe(0);
      expect(dm.stderr.trim().split('\n')).toEqual([expect.stringMatching(/--model 'x_\{domain\}': \{domain\} stands for the run's CARLA domain/)]);
      expect(existsSync(join(tmp, 'dm.jsonl'))).toBe(false);
      const rep = cli(['report', ...outs, '--out', join(tmp, 'rep')]);
      expect(rep.code, rep.stderr).toBe(0);
      expect(rep.stdout).toMatch(/run vo_proxy: vo-proxy, 10 frames, 6 questions, 2 clips/);
      expect(rep.stdout).toMatch(/run flow_heuristic: flow-heuristic, 10 frames, 6 questions, 2 clips/);
      expect(rep.stdout).toMatch(/run egogeo_vo: egogeo, all frames, 14 questions, 2 clips/);
      expect(readFileSync(join(tmp, 'rep', 'per_question.svg'), 'utf8')).toMatch(/3 runs, \d+ clips/);
      const one = cli(['report', outs[1], '--out', join(tmp, 'rep1')]);
      expect(one.code, one.stderr).toBe(0);
      expect(readFileSync(join(tmp, 'rep1', 'per_source.svg'), 'utf8')).toContain('vo-proxy, 10 frames, 6 questions, 2 clips');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
