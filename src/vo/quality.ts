/**
 * A clip's quality verdict from what the engine measured (never silent: an estimate that could
 * not be measured is said to be so, in its trajectory file, the run record and the summary line).
 *   failed — the scale collapsed: most moving pairs (a pose with parallax: the camera moved) got no
 *            metric distance, so the clip may read as standing still. It still answers every
 *            question (run/task.ts), the verdict beside it; with `--abstain` its answers that depend
 *            on the metric scale are withheld (null) instead.
 *   weak   — the road was tracked on fewer than half of the moving pairs (the level rests on a few
 *            road distances, direct alignments and the relative scales), or pairs got no pose at all.
 * Questions whose rules read only the heading (yaw rate, heading change) keep their answers: the
 * rotation needs no scale.
 */
import type { ClipQuality } from '../io/trajectories.js';
import type { NativeResult } from '../native/index.js';
import type { Question } from '../oracle/index.js';

export type { ClipQuality } from '../io/trajectories.js';

/** Road correspondences the engine's tracked road fit needs (native/vo/road_scale.cc kMinRoadPoints). */
const MIN_ROAD_POINTS = 15;

export function clipQuality(n: Pick<NativeResult, 'pairs'>): ClipQuality {
  const moving = n.pairs.filter((p) => p.quality === 'ok');
  const measured = moving.filter((p) => p.distance > 0).length;
  // Road distances from tracked road points (the engine's fit needs 15); fewer: a direct alignment (road_direct.cc).
  const road = moving.filter((p) => p.roadDistance > 0 && p.roadPoints >= MIN_ROAD_POINTS).length;
  const direct = moving.filter((p) => p.roadDistance > 0 && p.roadPoints < MIN_ROAD_POINTS).length;
  const lost = n.pairs.filter((p) => p.quality === 'degenerate' || p.quality === 'too_few_tracks').length;
  const reasons: string[] = [];
  let verdict: ClipQuality['verdict'] = 'ok';
  if (moving.length > 0 && 2 * measured < moving.length) {
    verdict = 'failed';
    reasons.push(`scale collapsed: ${moving.length - measured} of ${moving.length} moving pairs have no metric distance`);
  } else if (moving.length > 0 && 2 * road < moving.length) {
    verdict = 'weak';
    reasons.push(`road tracked on ${road} of ${moving.length} moving pairs${direct ? ` (${direct} aligned directly)` : ''}`);
  }
  if (lost > 0) {
    if (2 * lost >= n.pairs.length) verdict = 'failed';
    else if (verdict === 'ok') verdict = 'weak';
    reasons.push(`${lost} of ${n.pairs.length} pairs without a pose`);
  }
  return { verdict, reasons, moving_pairs: moving.length, measured_pairs: measured, road_pairs: road };
}

/** Whether a question's rule reads only the heading (yaw rate, heading change): its answer needs no metric scale. */
export function scaleFree(q: Pick<Question, 'ruleName' | 'params'>): boolean {
  const features: string[] = [];
  const walk = (v: unknown, key: string) => {
    if (typeof v === 'string' && /feature$/.test(key)) features.push(v);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, Array.isArray(v) ? key : k);
  };
  walk(q.params, '');
  const heading = (f: string) => /yaw|heading/.test(f);
  return features.length > 0 ? features.every(heading) : heading(q.ruleName);
}
