/** `range_check`: a feature inside [min_value, max_value] → yes / no. */
import { valueOf } from '../rules.js';
import { compared, lookup, num, one, type RuleFamily, scalar, str } from './family.js';

export const rangeCheck: RuleFamily = {
  label(p) {
    const value = valueOf(p.str('feature'), p.str('aggregation', 'mean'), 'features', p.where);
    const lo = p.num('min_value', -Infinity);
    const hi = p.num('max_value', Infinity);
    const inL = p.str('in_range_label', 'yes');
    const outL = p.str('out_range_label', 'no');
    return (c) => {
      const v = value(c);
      return lo <= v && v <= hi ? inL : outL;
    };
  },
  evidence(p, c) {
    const feature = String(p.feature);
    const value = lookup(c, feature, str(p, 'aggregation', 'mean'), 'features');
    const lo = num(p, 'min_value', -Infinity), hi = num(p, 'max_value', Infinity);
    return { [`value_${feature}`]: value, min_value: lo, max_value: hi, in_range: lo <= value && value <= hi };
  },
  decisionValues: (p) => [scalar(p, 'mean', 'features')],
  comparisons: (p) => one({ ...compared(p, 'mean', 'features'), thresholds: [p.num('min_value', -Infinity), p.num('max_value', Infinity)] }),
};
