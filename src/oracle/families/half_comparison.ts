/** `half_comparison`: an aggregate of a series over the first and the second half → first_half / second_half / similar. */
import { aggregator, type ClipData, emptyGuard, needArray } from '../rules.js';
import { one, type RuleFamily, str } from './family.js';

export const halfComparison: RuleFamily = {
  label(p) {
    const feature = p.str('feature');
    const agg = emptyGuard(aggregator(p.str('aggregation', 'rms'), p.where), 'aggregation');
    const simThr = p.num('similarity_threshold', 0.2);
    return (c) => {
      const arr = needArray(c, feature);
      const mid = Math.floor(arr.length / 2);
      const a = Math.abs(agg(arr, 0, mid));
      const b = Math.abs(agg(arr, mid, arr.length));
      const m = Math.max(a, b);
      if (m < 1e-9) return 'similar';
      if (Math.abs(a - b) / m < simThr) return 'similar';
      return a > b ? 'first_half' : 'second_half';
    };
  },
  evidence(p, c) {
    const aggName = str(p, 'aggregation', 'rms');
    const agg = aggregator(aggName);
    const arr = c.arrays[String(p.feature)];
    const mid = Math.floor(arr.length / 2);
    return {
      [`${aggName}_first_half`]: agg(arr.slice(0, mid)),
      [`${aggName}_second_half`]: agg(arr.slice(mid)),
      similarity_threshold: p.similarity_threshold ?? 0.2,
    };
  },
  decisionValues(p) {
    const feature = p.str('feature');
    const name = p.str('aggregation', 'rms');
    const agg = aggregator(name);
    const halves = (c: ClipData): [number, number] => {
      const a = needArray(c, feature);
      const mid = Math.floor(a.length / 2);
      return [Math.abs(agg(a, 0, mid)), Math.abs(agg(a, mid, a.length))];
    };
    return [
      { name: `${name}(${feature}) 1st half`, get: (c) => halves(c)[0] },
      { name: `${name}(${feature}) 2nd half`, get: (c) => halves(c)[1] },
      {
        name: '|1st-2nd|/max',
        get: (c) => {
          const [a, b] = halves(c);
          return Math.abs(a - b) / Math.max(a, b, 1e-9);
        },
      },
    ];
  },
  comparisons(p) {
    const feature = p.str('feature');
    const agg = aggregator(p.str('aggregation', 'rms'));
    return one({
      feature: `${feature} |1st−2nd half|/max`,
      get: (c) => {
        const a = needArray(c, feature);
        const mid = Math.floor(a.length / 2);
        const x = Math.abs(agg(a, 0, mid)), y = Math.abs(agg(a, mid, a.length));
        const m = Math.max(x, y);
        return m < 1e-9 ? 0 : Math.abs(x - y) / m;
      },
      thresholds: [p.num('similarity_threshold', 0.2)],
    });
  },
};
