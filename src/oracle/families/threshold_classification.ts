/** `threshold_classification`: a feature (or aggregated array) below / above one threshold → two labels. */
import { valueOf } from '../rules.js';
import { compared, lookup, one, type RuleFamily, scalar, str } from './family.js';

export const thresholdClassification: RuleFamily = {
  label(p) {
    const value = valueOf(p.str('feature'), p.str('aggregation', 'mean'), 'features', p.where);
    const thr = p.num('threshold');
    const below = p.str('below_label');
    const above = p.str('above_label');
    return (c) => (value(c) < thr ? below : above);
  },
  evidence(p, c) {
    const feature = String(p.feature);
    return { [`value_${feature}`]: lookup(c, feature, str(p, 'aggregation', 'mean'), 'features'), threshold: p.threshold };
  },
  decisionValues: (p) => [scalar(p, 'mean', 'features')],
  comparisons: (p) => one({ ...compared(p, 'mean', 'features'), thresholds: [p.num('threshold')] }),
};
