/** The results manifest's model name: `--model` with {domain} (issue 53). */
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.js';
import { resolveModel } from '../../src/run/manifest.js';

describe('resolveModel (--model)', () => {
  it("puts the run's CARLA domain for {domain}, each occurrence", () => {
    expect(resolveModel('x_{domain}', 'egogeo', 'simulation')).toBe('x_simulation');
    expect(resolveModel('{domain}/x_{domain}', 'vo-proxy', 'transferred')).toBe('transferred/x_transferred');
  });
  it('keeps a name without {domain} as given, and defaults as the leaderboard names its rows', () => {
    expect(resolveModel('mine', 'egogeo', 'simulation')).toBe('mine');
    expect(resolveModel(undefined, 'egogeo', 'transferred')).toBe('egogeo_transferred');
    expect(resolveModel(undefined, 'vo-proxy', null)).toBe('vo_proxy');
  });
  it('refuses {domain} in a run without a CARLA domain, in one line', () => {
    expect(() => resolveModel('x_{domain}', 'egogeo', null)).toThrow(InputError);
    expect(() => resolveModel('x_{domain}', 'egogeo', null)).toThrow(/^--model 'x_\{domain\}': \{domain\} stands for the run's CARLA domain, and this run has none[^\n]*$/);
  });
});
