/**
 * The dynamics plots' value axis (src/view/page.ts `axisRange`, inlined into the page's script):
 * at least a minimum span per series, so that a 0.2 m/s offset between truth and estimate does
 * not fill the plot; speed never below 0 when the data are not.
 */
import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { axisRange, MIN_SPAN, PAGE } from '../../src/view/page.js';

describe('axisRange', () => {
  it('widens a narrow speed band to the minimum span, centred on the data', () => {
    const [lo, hi] = axisRange(8.0, 8.2, MIN_SPAN.speed, 0);
    expect(hi - lo).toBeGreaterThanOrEqual(2);
    expect((lo + hi) / 2).toBeCloseTo(8.1, 9);
    // A 0.2 m/s offset takes at most a tenth of the axis (it filled ~86% before: 0.2 of a 0.232 span).
    expect(0.2 / (hi - lo)).toBeLessThanOrEqual(0.1);
  });

  it('keeps speed at or above 0 when the data are, shifting the band up rather than narrowing it', () => {
    const [lo, hi] = axisRange(0, 0.3, MIN_SPAN.speed, 0);
    expect(lo).toBe(0);
    expect(hi).toBeGreaterThanOrEqual(2);
    const wide = axisRange(0, 20, MIN_SPAN.speed, 0);
    expect(wide[0]).toBe(0);
    expect(wide[1]).toBeCloseTo(20 + 2 * 0.08 * 20, 9);
  });

  it('leaves wide data alone but for 8% padding; signed series have no floor', () => {
    expect(axisRange(2, 12, MIN_SPAN.speed, 0)).toEqual([2 - 0.8, 12 + 0.8]);
    const [lo, hi] = axisRange(-0.1, 0.1, MIN_SPAN.accel, null);
    expect(lo).toBeCloseTo(-0.5 - 0.08, 12);
    expect(hi).toBeCloseTo(0.5 + 0.08, 12);
    expect(axisRange(-5, -4.9, MIN_SPAN.jerk, null)[0]).toBeLessThan(-5.9);
    // Flat data (a constant series) get the minimum span too, not a zero-height axis.
    expect(axisRange(0.02, 0.02, MIN_SPAN.yaw_rate, null).map((v) => Math.round(v * 1e6) / 1e6)).toEqual([-0.038, 0.078]);
  });

  it('a speed band that already shows negative values is not clipped', () => {
    expect(axisRange(-0.5, 3, MIN_SPAN.speed, 0)[0]).toBeLessThan(-0.5);
  });

  it("is the page's own axis rule: inlined in the script, which parses", () => {
    const script = PAGE.split('<script>')[1].split('</script>')[0];
    expect(script).toContain(`function axisRange(lo, hi, minSpan, floor)`);
    expect(script).toContain(`var MIN_SPAN = ${JSON.stringify(MIN_SPAN)};`);
    expect(script).toContain("axisRange(Math.min.apply(null, vs), Math.max.apply(null, vs), MIN_SPAN[key], key === 'speed' ? 0 : null)");
    expect(() => new Script(script)).not.toThrow();
  });
});
