/** `multi_threshold_classification`: a feature against ascending thresholds → one of k+1 labels. */
import { InputError } from '../../core/errors.js';
import { valueOf } from '../rules.js';
import { compared, lookup, one, type RuleFamily, scalar, str } from './family.js';

export const multiThresholdClassification: RuleFamily = {
  label(p) {
    const thresholds = p.nums('thresholds');
    const labels = p.strs('labels');
    if (labels.length !== thresholds.length + 1) {
      throw new InputError(`${p.where}: expected ${thresholds.length + 1} labels for ${thresholds.length} thresholds, got ${labels.length}`);
    }
    const value = valueOf(p.str('feature'), p.str('aggregation', 'mean'), 'features', p.where);
    return (c) => {
      const v = value(c);
      for (let i = 0; i < thresholds.length; i++) if (v < thresholds[i]) return labels[i];
      return labels[labels.length - 1];
    };
  },
  evidence(p, c) {
    const feature = String(p.feature);
    const agg = str(p, 'aggregation', 'mean');
    return { [`${agg}_${feature}`]: lookup(c, feature, agg, 'features'), thresholds: p.thresholds, labels: p.labels };
  },
  decisionValues: (p) => [scalar(p, 'mean', 'features')],
  comparisons: (p) => one({ ...compared(p, 'mean', 'features'), thresholds: p.nums('thresholds') }),
};
