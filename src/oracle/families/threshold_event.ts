/** `threshold_event`: an aggregated array (default its minimum) against one threshold → yes / no. */
import { comparator, valueOf } from '../rules.js';
import { compared, lookup, one, type RuleFamily, scalar, str } from './family.js';

export const thresholdEvent: RuleFamily = {
  label(p) {
    const value = valueOf(p.str('feature'), p.str('aggregation', 'min'), 'arrays', p.where);
    const thr = p.num('threshold');
    const cmp = comparator(p.str('operator'), p.where);
    return (c) => (cmp(value(c), thr) ? 'yes' : 'no');
  },
  evidence(p, c) {
    const feature = String(p.feature);
    const agg = str(p, 'aggregation', 'min');
    return { [`${agg}_${feature}`]: lookup(c, feature, agg, 'arrays'), threshold: p.threshold, operator: p.operator };
  },
  decisionValues: (p) => [scalar(p, 'min', 'arrays')],
  comparisons: (p) => one({ ...compared(p, 'min', 'arrays'), thresholds: [p.num('threshold')] }),
};
