/** `yaw_rate_sign_with_deadzone`: the aggregated yaw rate against a dead zone → left / right / straight. */
import { aggregator, emptyGuard, needArray } from '../rules.js';
import { one, type RuleFamily, str } from './family.js';

export const yawRateSignWithDeadzone: RuleFamily = {
  label(p) {
    const pos = p.num('threshold_positive');
    const neg = p.num('threshold_negative');
    const agg = emptyGuard(aggregator(p.str('aggregation', 'mean'), p.where), 'aggregation');
    const posLabel = p.str('positive_label', 'left');
    const negLabel = p.str('negative_label', 'right');
    return (c) => {
      const v = agg(needArray(c, 'yaw_rate'));
      return v > pos ? posLabel : v < neg ? negLabel : 'straight';
    };
  },
  evidence(p, c) {
    const agg = str(p, 'aggregation', 'mean');
    return {
      [`${agg}_yaw_rate`]: aggregator(agg)(c.arrays.yaw_rate),
      threshold_positive: p.threshold_positive,
      threshold_negative: p.threshold_negative,
      positive_label: str(p, 'positive_label', 'left'),
      negative_label: str(p, 'negative_label', 'right'),
    };
  },
  decisionValues(p) {
    const name = p.str('aggregation', 'mean');
    const agg = aggregator(name);
    return [{ name: `${name}(yaw_rate)`, get: (c) => agg(needArray(c, 'yaw_rate')) }];
  },
  comparisons(p) {
    const name = p.str('aggregation', 'mean');
    const agg = aggregator(name);
    return one({ feature: `${name}(yaw_rate)`, get: (c) => agg(needArray(c, 'yaw_rate')), thresholds: [p.num('threshold_positive'), p.num('threshold_negative')] });
  },
};
