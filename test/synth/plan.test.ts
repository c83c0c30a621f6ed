/**
 * The scenario mix: deterministic by seed, prefix-stable, and balanced over the 14 answers as the
 * oracle labels them (the distribution is printed so a change in balance shows in the test log).
 */
import { describe, expect, it } from 'vitest';
import { loadQuestions } from '../../src/oracle/index.js';
import { labelDistribution, planCandidate, planDataset } from '../../src/synth/plan.js';
import { PROFILE_NAMES } from '../../src/synth/profiles.js';
import { CRUISING, SCENARIO_NAMES } from '../../src/synth/scenarios.js';

const questions = loadQuestions();

describe('planDataset', () => {
  const clips = planDataset({ clips: 150, seed: 5, preset: 'carla', questions });

  it('balances the answers of every question (label distribution of a 150-clip mix)', () => {
    const d = labelDistribution(clips, questions);
    console.log(`answer distribution, 150 clips, seed 5:\n${Object.entries(d).map(([q, m]) => `  ${q.padEnd(28)} ${JSON.stringify(m)}`).join('\n')}`);
    for (const [q, m] of Object.entries(d)) {
      const counts = Object.values(m);
      // every answer occurs, none dominates
      expect(Math.min(...counts), `${q}: ${JSON.stringify(m)}`).toBeGreaterThanOrEqual(q === 'braking_intensity' || q === 'speed_regime' ? 8 : 15);
      expect(Math.max(...counts), `${q}: ${JSON.stringify(m)}`).toBeLessThanOrEqual(0.8 * clips.length);
    }
  });

  it('uses every behaviour profile and many scenarios', () => {
    expect(new Set(clips.map((c) => c.profile)).size).toBe(PROFILE_NAMES.length);
    expect(new Set(clips.map((c) => c.scenario.replace(/-(left|right)$/, ''))).size).toBeGreaterThanOrEqual(10);
  });

  it('is a pure function of the seed, and the first k clips of a larger set are the k-clip set', () => {
    const again = planDataset({ clips: 20, seed: 5, preset: 'carla', questions });
    expect(again.map((c) => c.id)).toEqual(clips.slice(0, 20).map((c) => c.id));
    expect(again[7].x).toEqual(clips[7].x);
    expect(planDataset({ clips: 20, seed: 6, preset: 'carla', questions }).map((c) => c.x[30])).not.toEqual(again.map((c) => c.x[30]));
  });

  it('gives carla clips 31 frames at 10 Hz and nuscenes clips ~12 Hz jittered frames covering 3 s', () => {
    expect(clips[0].timestamps).toHaveLength(31);
    expect(clips[0].timestamps[30]).toBeCloseTo(3.0, 9);
    const nu = planDataset({ clips: 4, seed: 1, preset: 'nuscenes', questions });
    for (const c of nu) {
      expect(c.id.startsWith('clip_')).toBe(true); // the grader's nuScenes rule
      expect(c.timestamps[c.timestamps.length - 1]).toBeGreaterThanOrEqual(3.0);
      const dts = c.timestamps.slice(1).map((t, i) => t - c.timestamps[i]);
      expect(Math.min(...dts)).toBeGreaterThan(0.075);
      expect(Math.max(...dts)).toBeLessThan(0.092);
      expect(new Set(dts.map((x) => x.toFixed(4))).size).toBeGreaterThan(3); // jittered
    }
    const mixed = planDataset({ clips: 4, seed: 1, preset: 'mixed', questions });
    expect(mixed.map((c) => c.preset)).toEqual(['carla', 'nuscenes', 'carla', 'nuscenes']);
  });

  it('--speed MIN:MAX: only the cruising scenarios, starting inside the range; the manoeuvres stay (braking, turning)', () => {
    const hw = planDataset({ clips: 30, seed: 8, preset: 'carla', questions, speed: [20, 33] });
    for (const c of hw) {
      expect(CRUISING.some((k) => c.scenario.startsWith(k.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)) || ['accelerate-then-brake', 'brake-then-accelerate'].includes(c.scenario)), c.scenario).toBe(true);
      const v0 = Math.hypot(c.x[1] - c.x[0], c.y[1] - c.y[0]) / (c.timestamps[1] - c.timestamps[0]);
      expect(v0, c.id).toBeGreaterThan(14);
      expect(v0, c.id).toBeLessThan(36);
    }
    const labels = labelDistribution(hw, questions);
    expect(labels.speed_regime.highway).toBeGreaterThan(24);
    expect(labels.braking_intensity.emergency + labels.braking_intensity.moderate).toBeGreaterThan(0);
    expect(labels.yaw_rate_turn_direction.left + labels.yaw_rate_turn_direction.right).toBeGreaterThan(0);
    // Without a range the mix is what it was (the same seed, the same clips).
    expect(planDataset({ clips: 5, seed: 8, preset: 'carla', questions }).map((c) => c.scenario)).toEqual(planDataset({ clips: 5, seed: 8, preset: 'carla', questions, speed: undefined }).map((c) => c.scenario));
  });

  it.each(SCENARIO_NAMES)('scenario %s simulates for every profile', (name) => {
    for (const p of PROFILE_NAMES) {
      const c = planCandidate(1, 0, 0, 'carla', questions, p, name);
      expect(c.x.every(Number.isFinite)).toBe(true);
      expect(Object.keys(c.oracle.labels)).toHaveLength(14);
    }
  });

  it('produces the manoeuvres its names promise', () => {
    const labels = (name: string, seed: number) => planCandidate(seed, 0, 0, 'carla', questions, 'default', name).oracle.labels;
    for (let s = 0; s < 5; s++) {
      expect(labels('standing', s).speed_regime).toBe('stopped');
      expect(labels('emergencyBrake', s).braking_intensity).toBe('emergency');
      expect(labels('stopAndGo', s).stop_and_go).toBe('yes');
    }
  });
});
