/** `dominant_axis_comparison`: longitudinal against lateral acceleration (speed · |yaw rate|) → longitudinal / lateral / none. */
import { InputError } from '../../core/errors.js';
import { aggregator, type ClipData, emptyGuard, exact, lateral, needArray, SLOT_ABS } from '../rules.js';
import { type RuleFamily, str } from './family.js';

export const dominantAxisComparison: RuleFamily = {
  label(p) {
    const longName = p.str('longitudinal_feature', 'accel');
    if (p.str('lateral_method', 'speed_times_yaw') !== 'speed_times_yaw') {
      throw new InputError(`${p.where}: unknown lateral_method '${p.params.lateral_method}'`);
    }
    const agg = emptyGuard(aggregator(p.str('aggregation', 'rms'), p.where), 'aggregation');
    const ratioThr = p.num('ratio_threshold', 1.0);
    const dzLong = p.num('deadzone_long', 0.2);
    const dzLat = p.num('deadzone_lat', 0.2);
    return (c) => {
      const src = c.arrays.accel_long ?? c.arrays[longName];
      if (!src) throw new Error(`required array '${longName}' (or 'accel_long') not found in clip arrays`);
      const absLong = exact(SLOT_ABS, src.length);
      for (let i = 0; i < src.length; i++) absLong[i] = Math.abs(src[i]);
      const longAgg = agg(absLong);
      const latAgg = agg(lateral(c));
      if (longAgg < dzLong && latAgg < dzLat) return 'none';
      if (longAgg < 1e-9) return 'lateral';
      return latAgg / longAgg > ratioThr ? 'lateral' : 'longitudinal';
    };
  },
  evidence(p, c) {
    const aggName = str(p, 'aggregation', 'rms');
    const agg = aggregator(aggName);
    const used = c.arrays.accel_long ? 'accel_long' : str(p, 'longitudinal_feature', 'accel');
    const longAgg = agg(Float64Array.from(c.arrays[used], Math.abs));
    const latAgg = agg(Float64Array.from(lateral(c)));
    return {
      [`${aggName}_longitudinal_accel`]: longAgg,
      [`${aggName}_lateral_accel`]: latAgg,
      ratio_threshold: p.ratio_threshold ?? 1.0,
      longitudinal_feature_used: used,
      deadzone_long: p.deadzone_long ?? 0.2,
      deadzone_lat: p.deadzone_lat ?? 0.2,
    };
  },
  decisionValues(p) {
    const name = p.str('aggregation', 'rms');
    const longName = p.str('longitudinal_feature', 'accel');
    const agg = aggregator(name);
    const absLong = (c: ClipData): Float64Array => needArray(c, longName).map(Math.abs);
    return [
      { name: `${name}(|${longName}|)`, get: (c) => agg(absLong(c)) },
      { name: `${name}(speed*|yaw_rate|)`, get: (c) => agg(lateral(c)) },
      {
        name: 'lateral/longitudinal',
        get: (c) => {
          const lo = agg(absLong(c));
          return lo > 1e-9 ? agg(lateral(c)) / lo : NaN;
        },
      },
    ];
  },
  comparisons(p) {
    const agg = aggregator(p.str('aggregation', 'rms'));
    const longName = p.str('longitudinal_feature', 'accel');
    const lon = (c: ClipData) => agg((c.arrays.accel_long ?? needArray(c, longName)).map(Math.abs));
    const lat = (c: ClipData) => agg(lateral(c));
    const dzLong = p.num('deadzone_long', 0.2), dzLat = p.num('deadzone_lat', 0.2);
    // The gate ("none": both inside their dead zones) as one value: max of the two normalised
    // magnitudes against 1.
    return {
      combine: 'gated',
      comparisons: [
        { feature: 'max(rms long/dead zone, rms lat/dead zone)', get: (c) => Math.max(lon(c) / dzLong, lat(c) / dzLat), thresholds: [1], holds: (v) => v < 1 },
        {
          feature: 'lateral/longitudinal',
          get: (c) => {
            const lo = lon(c);
            return lo > 1e-9 ? lat(c) / lo : Infinity;
          },
          thresholds: [p.num('ratio_threshold', 1.0)],
        },
      ],
    };
  },
};
