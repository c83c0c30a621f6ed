/** `or_threshold_event`: several aggregated arrays, each against its threshold; any met → yes. */
import { comparator, valueOf } from '../rules.js';
import { compared, lookup, num, type RuleFamily, scalar, str } from './family.js';

export const orThresholdEvent: RuleFamily = {
  label(p) {
    const conds = p.list('conditions').map((q) => ({
      value: valueOf(q.str('feature'), q.str('aggregation', 'max'), 'arrays', q.where),
      thr: q.num('threshold'),
      cmp: comparator(q.str('operator'), q.where),
    }));
    const yes = p.str('above_label', 'yes');
    const no = p.str('below_label', 'no');
    return (c) => {
      let any = false;
      for (const k of conds) if (k.cmp(k.value(c), k.thr)) any = true;
      return any ? yes : no;
    };
  },
  evidence(p, c) {
    const conditions = (p.conditions as Record<string, unknown>[]).map((k) => {
      const feature = String(k.feature);
      const agg = str(k, 'aggregation', 'max');
      const value = lookup(c, feature, agg, 'arrays');
      const thr = num(k, 'threshold');
      const met = k.operator === 'less_than' ? value < thr : value > thr;
      return { feature, [`${agg}_${feature}`]: value, threshold: k.threshold, operator: k.operator, met };
    });
    return { conditions };
  },
  decisionValues: (p) => p.list('conditions').map((c) => scalar(c, 'max', 'arrays')),
  comparisons: (p) => ({
    combine: 'or',
    comparisons: p.list('conditions').map((k) => {
      const t = k.num('threshold');
      const less = k.str('operator') === 'less_than';
      return { ...compared(k, 'max', 'arrays'), thresholds: [t], holds: (v: number) => (less ? v < t : v > t) };
    }),
  }),
};
