/** `trend_classification`: an aggregated array against a positive and a negative threshold → accelerating / decelerating / steady. */
import { valueOf } from '../rules.js';
import { compared, lookup, one, type RuleFamily, scalar, str } from './family.js';

export const trendClassification: RuleFamily = {
  label(p) {
    const value = valueOf(p.str('feature'), p.str('aggregation', 'mean'), 'arrays', p.where);
    const pos = p.num('threshold_positive');
    const neg = p.num('threshold_negative');
    return (c) => {
      const v = value(c);
      return v > pos ? 'accelerating' : v < neg ? 'decelerating' : 'steady';
    };
  },
  evidence(p, c) {
    const feature = String(p.feature);
    const agg = str(p, 'aggregation', 'mean');
    return { [`${agg}_${feature}`]: lookup(c, feature, agg, 'arrays'), threshold_positive: p.threshold_positive, threshold_negative: p.threshold_negative };
  },
  decisionValues: (p) => [scalar(p, 'mean', 'arrays')],
  comparisons: (p) => one({ ...compared(p, 'mean', 'arrays'), thresholds: [p.num('threshold_positive'), p.num('threshold_negative')] }),
};
