/** `peak_half_detection`: which half of the clip holds a prominent peak of a series → first_half / second_half / no_peak. */
import { npMean } from '../../core/numeric.js';
import { aggregator, type ClipData, needArray } from '../rules.js';
import { num, type RuleFamily } from './family.js';

export const peakHalfDetection: RuleFamily = {
  label(p) {
    const feature = p.str('feature');
    const minPeak = p.optNum('min_peak_value');
    const prominence = p.num('prominence_ratio', 0.05);
    return (c) => {
      const arr = needArray(c, feature);
      if (arr.length === 0) return 'no_peak';
      const mid = Math.floor(arr.length / 2);
      let peak = 0;
      for (let i = 1; i < arr.length; i++) if (arr[i] > arr[peak]) peak = i;
      const peakValue = arr[peak];
      const mean = npMean(arr);
      let prominent = true;
      if (Math.abs(mean) > 1e-6) {
        if ((peakValue - mean) / Math.abs(mean) < prominence) prominent = false;
      } else if (peakValue < prominence) prominent = false;
      if ((minPeak !== null && peakValue < minPeak) || !prominent) return 'no_peak';
      return peak < mid ? 'first_half' : 'second_half';
    };
  },
  evidence(p, c) {
    const feature = String(p.feature);
    const arr = c.arrays[feature];
    if (arr.length === 0) return { error: 'empty_array' };
    const mid = Math.floor(arr.length / 2);
    let peak = 0;
    for (let i = 1; i < arr.length; i++) if (arr[i] > arr[peak]) peak = i;
    const mean = aggregator('mean')(arr);
    const prominence = num(p, 'prominence_ratio', 0.05);
    const prominent = Math.abs(mean) > 1e-6 ? (arr[peak] - mean) / Math.abs(mean) >= prominence : !(arr[peak] < prominence);
    const ev: Record<string, unknown> = { peak_index: peak, midpoint_index: mid, peak_value: arr[peak], mean_value: mean, is_prominent: prominent, feature_name: feature };
    if (p.min_peak_value !== undefined && p.min_peak_value !== null) ev.min_peak_value = p.min_peak_value;
    return ev;
  },
  decisionValues(p) {
    const feature = p.str('feature');
    return [
      {
        name: `argmax(${feature})/(n-1)`,
        get: (c) => {
          const a = needArray(c, feature);
          let k = 0;
          for (let i = 1; i < a.length; i++) if (a[i] > a[k]) k = i;
          return a.length > 1 ? k / (a.length - 1) : NaN;
        },
      },
      {
        name: `(max-mean)/|mean| of ${feature}`,
        get: (c) => {
          const a = needArray(c, feature);
          const m = npMean(a);
          return Math.abs(m) > 1e-6 ? (Math.max(...a) - m) / Math.abs(m) : NaN;
        },
      },
    ];
  },
  comparisons(p) {
    // "no_peak" below the prominence; else the half the peak falls in.
    const feature = p.str('feature');
    const prominence = p.num('prominence_ratio', 0.05);
    const prom = (c: ClipData) => {
      const a = needArray(c, feature);
      const m = npMean(a);
      const peak = Math.max(...a);
      return Math.abs(m) > 1e-6 ? (peak - m) / Math.abs(m) : peak;
    };
    // Which half holds the peak is an argmax: its boundary is a tie between the two halves'
    // maxima, so the distance to it is their difference relative to the peak (a U-shaped
    // profile with nearly equal ends is a near-tie, whatever index the argmax lands on).
    const halves = (c: ClipData) => {
      const a = needArray(c, feature);
      const mid = Math.floor(a.length / 2);
      if (mid === 0) return NaN;
      const m1 = Math.max(...a.slice(0, mid)), m2 = Math.max(...a.slice(mid));
      return (m1 - m2) / Math.max(Math.abs(m1), Math.abs(m2), 1e-9);
    };
    return {
      combine: 'gated',
      comparisons: [
        { feature: `${feature} peak prominence`, get: prom, thresholds: [prominence], holds: (v) => v < prominence },
        { feature: `${feature} (max 1st half − max 2nd half)/peak`, get: halves, thresholds: [0] },
      ],
    };
  },
};
