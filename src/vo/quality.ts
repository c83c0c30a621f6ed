/**
 * A clip's quality verdict from what the engine measured (never silent: an estimate that could
 * not be measured is said to be so, in its trajectory file, the run record and the summary line).
 *   failed — the scale collapsed: most moving pairs (a pose with parallax: the camera moved) got no
 *            metric distance, so the clip would read as standing still; or most pairs got no pose.
 *            It still answers every question (run/task.ts), the verdict beside it; with
 *            `--abstain` its answers that depend on the metric scale are withheld (null) instead.
 *   weak   — the engine's own uncertainty says the speeds may be off: the speed smoother is less
 *            sure of them than a road-measured level allows (mean relative speed sigma over the
 *            moving pairs above 1.5 × the road level's 5%), or the two tracking sizes of
 *            `--resolution auto` disagree grossly on the distance travelled (one of them failed,
 *            and nothing says the kept one is the right one).
 * Calibrated on rendered clips at 10 and all frames, then checked on the published-layout stand-in
 * and KITTI (bench/verdict.mjs, docs/vo.md "The quality verdict"): flagged clips' median speed
 * RMSE is several times the unflagged ones'. How much road was tracked is reported, not judged:
 * clips whose level rests on direct alignments (rendered highway at 10 frames) are mostly right.
 * Questions whose rules read only the heading (yaw rate, heading change) keep their answers: the
 * rotation needs no scale.
 */
import type { ClipQuality } from '../io/trajectories.js';
import type { NativeResult } from '../native/index.js';
import type { Question } from '../oracle/index.js';
import { GROSS_DISAGREEMENT } from './config.js';

export type { ClipQuality } from '../io/trajectories.js';

/** Road correspondences the engine's tracked road fit needs (native/vo/scale/road_scale.cc kMinRoadPoints). */
const MIN_ROAD_POINTS = 15;

/**
 * The road distances' common level error the speed smoother assumes (the addon's roadBias default,
 * native/vo/types.h kRoadBias): the floor of a clip's relative speed uncertainty when the road
 * measures every pair.
 */
const ROAD_LEVEL_SIGMA = 0.05;
/**
 * A clip is weak above this mean relative speed sigma: 1.5 × the road level's, i.e. more
 * uncertainty beyond the level than the level's own. Chosen on rendered sets (bench/verdict.mjs):
 * 0.06-0.12 all catch every rendered clip off by more than 3 m/s; 1.5× is the principle, not a fit.
 */
export const WEAK_SPEED_UNCERTAINTY = 1.5 * ROAD_LEVEL_SIGMA;

/** What the verdict reads beside the engine's result: the frames' times (the smoother's relative sigmas) and, with both sizes, their distances' ratio. */
export interface QualityContext {
  /** The timestamps of the frames the engine saw (seconds). Without them the speed uncertainty is not judged. */
  timestamps?: ArrayLike<number>;
  /** `--resolution auto`: the first size's distance travelled over the second's (vo/estimate.ts `Estimate.sizeRatio`). */
  sizeRatio?: number;
}

export function clipQuality(n: Pick<NativeResult, 'pairs'>, ctx: QualityContext = {}): ClipQuality {
  const moving = n.pairs.filter((p) => p.quality === 'ok');
  const measured = moving.filter((p) => p.distance > 0).length;
  // Road distances from tracked road points (the engine's fit needs 15); fewer: a direct alignment (road_direct.cc).
  const road = moving.filter((p) => p.roadDistance > 0 && p.roadPoints >= MIN_ROAD_POINTS).length;
  const lost = n.pairs.filter((p) => p.quality === 'degenerate' || p.quality === 'too_few_tracks').length;
  const uncertainty = ctx.timestamps && moving.length > 0 ? speedUncertainty(n, ctx.timestamps) : null;
  const reasons: string[] = [];
  let verdict: ClipQuality['verdict'] = 'ok';
  if (moving.length > 0 && 2 * measured < moving.length) {
    verdict = 'failed';
    reasons.push(`scale collapsed: ${moving.length - measured} of ${moving.length} moving pairs have no metric distance`);
  }
  if (lost > 0 && 2 * lost >= n.pairs.length) {
    verdict = 'failed';
    reasons.push(`${lost} of ${n.pairs.length} pairs without a pose`);
  }
  if (verdict === 'ok' && uncertainty !== null) {
    if (!Number.isFinite(uncertainty)) {
      verdict = 'weak';
      reasons.push('the speeds carry no uncertainty (no metric scale)');
    } else if (uncertainty > WEAK_SPEED_UNCERTAINTY) {
      verdict = 'weak';
      reasons.push(`speeds uncertain: the smoother's mean relative speed sigma is ${pct(uncertainty)} over ${moving.length} moving pairs (above ${pct(WEAK_SPEED_UNCERTAINTY)}; road tracked on ${road})`);
    }
  }
  // A size that travelled nothing (ratio 0 or infinite) disagrees as grossly as any; NaN: neither moved.
  const r = ctx.sizeRatio;
  if (verdict !== 'failed' && r !== undefined && !Number.isNaN(r) && (r > GROSS_DISAGREEMENT || r < 1 / GROSS_DISAGREEMENT)) {
    verdict = 'weak';
    reasons.push(`the two tracking sizes disagree on the distance travelled: ${Number.isFinite(r) ? `${r.toFixed(2)}×` : 'one of them travelled nothing'} (more than a third apart)`);
  }
  return {
    verdict,
    reasons,
    moving_pairs: moving.length,
    measured_pairs: measured,
    road_pairs: road,
    speed_uncertainty: uncertainty === null || !Number.isFinite(uncertainty) ? null : round4(uncertainty),
    ...(r !== undefined ? { size_ratio: Number.isFinite(r) ? round4(r) : null } : {}),
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * How unsure the smoother is of a clip's speeds: the mean over its moving pairs (a pose with
 * parallax) of the posterior standard deviation of the pair's speed relative to the speed; a moving
 * pair without a metric distance counts as 1 (its speed unknown to within itself). Infinity when no
 * pair moves or an uncertainty is not finite (scale 'none'); 0 with ground-truth speeds.
 */
export function speedUncertainty(nat: Pick<NativeResult, 'pairs'>, timestamps: ArrayLike<number>): number {
  let sum = 0, n = 0;
  nat.pairs.forEach((p, k) => {
    if (p.quality !== 'ok') return;
    n++;
    sum += p.distance > 0 ? p.speedSigma / (p.distance / (timestamps[k + 1] - timestamps[k])) : 1;
  });
  return n > 0 && Number.isFinite(sum) ? sum / n : Infinity;
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
