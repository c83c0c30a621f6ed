/** `sequential_event`: a first event followed, within a time gap, by a second → yes / no (brake then turn). */
import { aggregator, type ClipData, comparator, needArray, type ParamReader } from '../rules.js';
import { extremeFor, num, type RuleFamily } from './family.js';

const EVENTS = ['first_event', 'second_event'] as const;

export const sequentialEvent: RuleFamily = {
  label(p) {
    const ev = (q: ParamReader) => ({ feature: q.str('feature'), thr: q.num('threshold'), cmp: comparator(q.str('operator'), q.where, true) });
    const first = ev(p.sub('first_event'));
    const second = ev(p.sub('second_event'));
    const minGap = Math.max(p.num('min_gap_seconds', 0.0), 1e-6);
    const maxGap = p.num('max_gap_seconds', Infinity);
    return (c) => {
      const t = needArray(c, 'timestamps');
      const a1 = needArray(c, first.feature);
      const a2 = needArray(c, second.feature);
      // Second-event times ascend with the grid, so a forward scan is the reference's searchsorted.
      const secondTimes: number[] = [];
      for (let i = 0; i < a2.length; i++) if (second.cmp(a2[i], second.thr)) secondTimes.push(t[i]);
      if (secondTimes.length === 0) return 'no';
      for (let i = 0; i < a1.length; i++) {
        if (!first.cmp(a1[i], first.thr)) continue;
        const lo = t[i] + minGap;
        const hi = t[i] + maxGap;
        // searchsorted(left): earliest second event at or after lo.
        let k = 0;
        while (k < secondTimes.length && secondTimes[k] < lo) k++;
        if (k < secondTimes.length && secondTimes[k] <= hi) return 'yes';
      }
      return 'no';
    };
  },
  evidence(p, c) {
    const t = c.arrays.timestamps;
    const mask = (cfg: Record<string, unknown>) => {
      const a = c.arrays[String(cfg.feature)];
      const thr = num(cfg, 'threshold');
      return Array.from(a, (v) => (cfg.operator === 'less_than' ? v < thr : cfg.operator === 'greater_than' ? v > thr : Math.abs(v) > thr));
    };
    const m1 = mask(p.first_event as Record<string, unknown>);
    const m2 = mask(p.second_event as Record<string, unknown>);
    const minGap = Math.max(num(p, 'min_gap_seconds', 0), 1e-6);
    const maxGap = num(p, 'max_gap_seconds', Infinity);
    const second = m2.flatMap((m, i) => (m ? [i] : []));
    let found: [number, number] | null = null;
    for (let i = 0; i < m1.length && !found && second.length > 0; i++) {
      if (!m1[i]) continue;
      const lo = t[i] + minGap, hi = t[i] + maxGap;
      const k = second.findIndex((j) => t[j] >= lo);
      if (k >= 0 && t[second[k]] <= hi) found = [i, second[k]];
    }
    const ev: Record<string, unknown> = {
      first_event_count: m1.filter(Boolean).length,
      second_event_count: m2.filter(Boolean).length,
      sequence_found: found !== null,
    };
    if (found) {
      ev.first_event_index = found[0];
      ev.second_event_index = found[1];
      ev.first_event_time = t[found[0]];
      ev.second_event_time = t[found[1]];
      ev.gap_seconds = t[found[1]] - t[found[0]];
    }
    return ev;
  },
  decisionValues: (p) =>
    EVENTS.map((k) => {
      const e = p.sub(k);
      const feature = e.str('feature');
      const name = extremeFor(e.str('operator'));
      const agg = aggregator(name);
      return { name: `${k === 'first_event' ? '1st' : '2nd'}: ${name}(${feature})`, get: (c: ClipData) => agg(needArray(c, feature)) };
    }),
  // The timing window aside, "yes" needs both events: an AND of their extremes.
  comparisons: (p) => ({
    combine: 'and',
    comparisons: EVENTS.map((key) => {
      const e = p.sub(key);
      const feature = e.str('feature');
      const op = e.str('operator');
      const t = e.num('threshold');
      const name = extremeFor(op);
      const agg = aggregator(name);
      return { feature: `${name}(${feature})`, get: (c: ClipData) => agg(needArray(c, feature)), thresholds: [t], holds: (v: number) => (op === 'less_than' ? v < t : v > t) };
    }),
  }),
};
