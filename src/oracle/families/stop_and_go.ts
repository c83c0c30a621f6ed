/** `stop_and_go_detection`: stop→go cycles of the speed (hysteresis between two thresholds) → yes / no. */
import { aggregator, needArray, stopGoCycles } from '../rules.js';
import { num, type RuleFamily } from './family.js';

export const stopAndGoDetection: RuleFamily = {
  label(p) {
    const stopThr = p.num('stop_speed_threshold');
    const goThr = p.num('go_speed_threshold');
    const minStops = p.num('min_stops', 1);
    return (c) => (stopGoCycles(needArray(c, 'speed'), stopThr, goThr) >= minStops ? 'yes' : 'no');
  },
  evidence(p, c) {
    const cycles = stopGoCycles(c.arrays.speed, num(p, 'stop_speed_threshold'), num(p, 'go_speed_threshold'));
    return { stop_go_cycles: cycles, min_stops: p.min_stops ?? 1, stop_speed_threshold: p.stop_speed_threshold, go_speed_threshold: p.go_speed_threshold };
  },
  decisionValues(p) {
    const stop = p.num('stop_speed_threshold');
    const go = p.num('go_speed_threshold');
    const min = aggregator('min'), max = aggregator('max');
    return [
      { name: 'min(speed)', get: (c) => min(needArray(c, 'speed')) },
      { name: 'max(speed)', get: (c) => max(needArray(c, 'speed')) },
      { name: 'stop-go cycles', get: (c) => stopGoCycles(needArray(c, 'speed'), stop, go) },
    ];
  },
  comparisons(p) {
    const stop = p.num('stop_speed_threshold');
    const go = p.num('go_speed_threshold');
    const min = aggregator('min'), max = aggregator('max');
    return {
      combine: 'and',
      comparisons: [
        { feature: 'min(speed)', get: (c) => min(needArray(c, 'speed')), thresholds: [stop], holds: (v) => v < stop },
        { feature: 'max(speed)', get: (c) => max(needArray(c, 'speed')), thresholds: [go], holds: (v) => v > go },
      ],
    };
  },
};
