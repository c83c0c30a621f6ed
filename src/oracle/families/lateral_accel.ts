/** `lateral_accel_threshold`: the aggregated lateral acceleration (speed · |yaw rate|) against one threshold → yes / no. */
import { aggregator, emptyGuard, lateral } from '../rules.js';
import { one, type RuleFamily, str } from './family.js';

export const lateralAccelThreshold: RuleFamily = {
  label(p) {
    const thr = p.num('threshold');
    const agg = emptyGuard(aggregator(p.str('aggregation', 'max'), p.where), 'aggregation');
    return (c) => (agg(lateral(c)) > thr ? 'yes' : 'no');
  },
  evidence(p, c) {
    const aggName = str(p, 'aggregation', 'max');
    return { [`${aggName}_lateral_accel`]: aggregator(aggName)(Float64Array.from(lateral(c))), threshold: p.threshold };
  },
  decisionValues(p) {
    const name = p.str('aggregation', 'max');
    const agg = aggregator(name);
    return [{ name: `${name}(speed*|yaw_rate|)`, get: (c) => agg(lateral(c)) }];
  },
  comparisons(p) {
    const name = p.str('aggregation', 'max');
    const agg = aggregator(name);
    return one({ feature: `${name}(speed*|yaw_rate|)`, get: (c) => agg(lateral(c)), thresholds: [p.num('threshold')] });
  },
};
