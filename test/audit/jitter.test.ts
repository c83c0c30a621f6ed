/**
 * The ground truth's jitter measured from its own poses (audit/jitter.ts), the drifting noise model
 * and the protocol's sampling ceiling (audit/sampling.ts), on trajectories the tests make: exact
 * poses read as ~0 jitter and flip no label at their measured level; white noise of known σ (1 mm,
 * 5 mm, 2 cm) is recovered within 25 %, on even and on jittered timestamps; the residual is blind
 * to any cubic; Gauss-Markov noise has its σ and its correlation; the natural spline is SciPy's;
 * keeping every frame changes no label, and the engine's densifier is the one the estimates go through.
 */
import { describe, expect, it } from 'vitest';
import { auditLabels, type LabelClip, perturb } from '../../src/audit/labels.js';
import { clipJitter, cubicResiduals, sourceJitter } from '../../src/audit/jitter.js';
import { keptFrames, sampledTruth } from '../../src/audit/sampling.js';
import { Rng } from '../../src/core/random.js';
import { naturalCubic } from '../../src/core/spline.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { loadQuestions } from '../../src/oracle/index.js';
import { densify } from '../../src/vo/densify.js';

const questions = loadQuestions();

/**
 * A 3 s clip: speed and yaw rate varying as a car's do (accelerations to ±2.5 m/s², a sway of up
 * to 0.5 m/s at up to 0.4 Hz), exact poses by fine integration; times at 10 Hz, or jittered by up
 * to ±`jitter` s.
 */
function clip(i: number, jitter = 0): Trajectory {
  const r = new Rng(91, i);
  const v0 = r.uniform(6, 15), acc = r.uniform(-1.5, 1.5), w0 = r.uniform(-0.3, 0.3), sw = r.uniform(0, 0.5), f = r.uniform(0.1, 0.4);
  const n = 31, t = new Float64Array(n), x = new Float64Array(n), y = new Float64Array(n), yaw = new Float64Array(n);
  for (let k = 0; k < n; k++) t[k] = k / 10 + (k > 0 && k < n - 1 ? r.uniform(-jitter, jitter) : 0);
  let px = 0, py = 0, psi = 0;
  const dt = 1e-4;
  for (let k = 0, s = 0; k < n; k++) {
    for (; (s + 1) * dt <= t[k] + 1e-12; s++) {
      const ts = (s + 0.5) * dt;
      const v = v0 + acc * ts + sw * Math.sin(2 * Math.PI * f * ts);
      px += v * Math.cos(psi) * dt;
      py += v * Math.sin(psi) * dt;
      psi += (w0 + 0.2 * sw * Math.cos(2 * Math.PI * f * ts)) * dt;
    }
    x[k] = px;
    y[k] = py;
    yaw[k] = psi;
  }
  return { id: `c${i}`, t, x, y, yaw };
}

const CLIPS = Array.from({ length: 16 }, (_, i) => clip(i));

describe('the jitter of a ground truth', () => {
  it('is blind to any cubic, on any spacing of the times', () => {
    const t = [0, 0.09, 0.21, 0.3, 0.42, 0.5, 0.61];
    const v = t.map((s) => 3 - 2 * s + 5 * s * s - 7 * s ** 3);
    for (const r of cubicResiduals(t, v)) expect(Math.abs(r)).toBeLessThan(1e-12);
  });

  it('has unit variance per unit of white noise, on uneven times', () => {
    const rng = new Rng(4);
    const t = Array.from({ length: 2000 }, (_, i) => i / 10 + rng.uniform(-0.03, 0.03));
    const r = cubicResiduals(t, t.map(() => rng.normal()));
    const sd = Math.sqrt(r.reduce((a, b) => a + b * b, 0) / r.length);
    expect(sd).toBeGreaterThan(0.95);
    expect(sd).toBeLessThan(1.05);
  });

  it('reads exact poses as ~0: under 0.05 mm and 0.001°', () => {
    const j = sourceJitter(CLIPS.map((c) => clipJitter(c)!))!;
    expect(j.posM).toBeLessThan(5e-5);
    expect(j.yawDeg).toBeLessThan(1e-3);
    expect(j.n_clips).toBe(16);
  });

  for (const jitter of [0, 0.02]) {
    it(`recovers white noise of 1 mm, 5 mm and 2 cm within 25 %${jitter ? ' (timestamps jittered by ±20 ms)' : ''}`, () => {
      const clips = CLIPS.map((_, i) => clip(i, jitter));
      for (const [sigma, yawDeg] of [[0.001, 0.005], [0.005, 0.025], [0.02, 0.1]]) {
        const noisy = clips.map((c, i) => perturb(c, { kind: 'noise', posM: sigma, yawDeg }, new Rng(7, i, sigma * 1e4)));
        const j = sourceJitter(noisy.map((c) => clipJitter(c)!))!;
        expect(Math.abs(j.posM / sigma - 1)).toBeLessThan(0.25);
        expect(Math.abs(j.yawDeg / yawDeg - 1)).toBeLessThan(0.25);
      }
    });
  }
});

describe('drifting (Gauss-Markov) noise', () => {
  it('keeps σ per pose and correlates neighbours by exp(−Δt/τ)', () => {
    const n = 31, flat: Trajectory = { id: 'f', t: Float64Array.from({ length: n }, (_, i) => i / 10), x: new Float64Array(n), y: new Float64Array(n), yaw: new Float64Array(n) };
    let ss = 0, lag = 0, cnt = 0, cntLag = 0;
    for (let k = 0; k < 3000; k++) {
      const p = perturb(flat, { kind: 'noise', posM: 0.02, yawDeg: 0, tauS: 1 }, new Rng(2, k));
      for (let i = 0; i < n; i++) {
        ss += p.x[i] ** 2;
        cnt++;
        if (i > 0) {
          lag += p.x[i] * p.x[i - 1];
          cntLag++;
        }
      }
    }
    const sd = Math.sqrt(ss / cnt);
    expect(sd).toBeGreaterThan(0.019);
    expect(sd).toBeLessThan(0.021);
    expect(lag / cntLag / (ss / cnt)).toBeCloseTo(Math.exp(-0.1), 1);
  });

  it('moves fewer labels than white noise of the same σ', () => {
    const lc: LabelClip[] = CLIPS.map((c) => ({ id: c.id, source: 'kitti', traj: c, published: null }));
    const r = auditLabels(lc, questions, { levels: [{ kind: 'noise', posM: 0.02, yawDeg: 0.1 }, { kind: 'noise', posM: 0.02, yawDeg: 0.1, tauS: 10 }], draws: 6, seed: 1 });
    expect(r.pooled['0.02:0.1@10']).toBeGreaterThan(r.pooled['0.02:0.1']);
  });
});

describe('the audit at the measured level', () => {
  const lc: LabelClip[] = CLIPS.map((c, i) => ({ id: c.id, source: i % 2 ? 'kitti' : 'carla', traj: c, published: null }));
  const r = auditLabels(lc, questions, { levels: [], draws: 4, seed: 3, frames: [10, 'all'] });

  it('measures ~0 on exact poses, flips no label there; CARLA stays exact', () => {
    expect(r.source_level_basis.kitti.basis).toBe('measured');
    expect(r.source_level_basis.carla).toMatchObject({ basis: 'exact', key: '0:0' });
    expect(r.jitter.kitti!.posM).toBeLessThan(5e-5);
    for (const q of r.questions) expect(r.per_source.kitti.per_question[q][r.source_levels.kitti]).toBe(1);
    for (const c of r.per_clip) expect(Object.values(c.flips).every((v) => v === 0)).toBe(true);
    expect(r.ceiling.pooled.all).toBe(1);
  });

  it('keeping every frame changes no label; ten frames cost the speed-derivative questions', () => {
    for (const how of ['spline', 'densify'] as const) expect(r.sampling.all[how].pooled.all).toBe(1);
    expect(r.sampling['10'].spline.pooled.all).toBeLessThanOrEqual(1);
    expect(Object.keys(r.sampling)).toEqual(['10', 'all']);
    expect(r.per_clip[0].sampled['10'].spline.mean_speed_low).toBe(r.per_clip[0].clean.mean_speed_low);
  });

  it('takes a literature level by name and refuses a source without one', () => {
    const lit = auditLabels(lc.slice(0, 2), questions, { levels: [], draws: 2, seed: 0, sourceLevels: { kitti: 'literature' } });
    expect(lit.source_levels.kitti).toBe('0.02:0.1');
    expect(lit.source_level_basis.kitti.basis).toBe('literature');
    expect(() => auditLabels(lc.slice(0, 2), questions, { levels: [], draws: 2, seed: 0, sourceLevels: { carla: 'literature' } })).toThrow(/--source-level carla=literature: no published accuracy/);
  });
});

describe('the sampling ceiling', () => {
  it('keeps the protocol frames round(i·(n−1)/9)', () => {
    expect([...keptFrames(CLIPS[0], 10).t].map((x) => Math.round(x * 10))).toEqual([0, 3, 7, 10, 13, 17, 20, 23, 27, 30]);
    expect(keptFrames(CLIPS[0], 'all').t).toEqual(CLIPS[0].t);
  });

  it('puts the poses back with the natural spline at every frame, or as the engine densifies them', () => {
    const s = sampledTruth(CLIPS[1], 10, 'spline');
    expect(s.t).toEqual(CLIPS[1].t);
    // Smooth motion: the spline through 10 of 31 poses stays within centimetres of the others.
    for (let i = 0; i < s.t.length; i++) expect(Math.hypot(s.x[i] - CLIPS[1].x[i], s.y[i] - CLIPS[1].y[i])).toBeLessThan(0.05);
    const d = sampledTruth(CLIPS[1], 10, 'densify');
    expect(d).toEqual(densify(keptFrames(CLIPS[1], 10), 10).trajectory);
  });

  it('the natural spline is SciPy’s CubicSpline(bc_type="natural")', () => {
    // scipy.interpolate.CubicSpline([0, 1, 2], [0, 1, 0], bc_type='natural')([0.5, 1.5, 2]) = [0.6875, 0.6875, 0]
    expect([...naturalCubic([0, 1, 2], [0, 1, 0], [0.5, 1.5, 2])]).toEqual([0.6875, 0.6875, 0]);
    expect([...naturalCubic([0, 2], [1, 5], [1])]).toEqual([3]);
    expect(() => naturalCubic([0], [1], [0])).toThrow(/at least 2 knots/);
  });
});
