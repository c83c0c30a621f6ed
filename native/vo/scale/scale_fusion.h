// A clip's speed from its scale measurements (scale_fusion.cc): the per-pair road distances fused
// with the relative scales between consecutive pairs, then the jerk-driven speed smoother. The one
// preparation both the engine (road_scale.cc) and the exported smoothSpeed (`speed_from_pairs`) use.
#pragma once

#include "relative_scale.h"
#include "speed_smoother.h"

#include <vector>

namespace egogeo::vo {

/// One clip's scale measurements per frame pair (NativeResult.pairs: roadDistance, roadSigma,
/// logRatio, ratioSigma; quality low_parallax = not moving).
struct ScaleMeasurements {
  std::vector<double> timestamps;     // one per frame
  std::vector<double> road_distance;  // metres, from the road plane; <= 0: none
  std::vector<double> road_sigma;     // the nominal standard deviation of its log
  std::vector<ScaleRatio> ratios;     // ratios[k]: pair k's distance over pair k-1's (log, sd, valid)
  std::vector<bool> moving;           // false: standing still (speed 0, known exactly)
};

/// v, conf (in): per-pair speed from the road distance (m/s, 0 = none) and whether it is known
/// (standing still counts as known). Out: the fused speeds, and with `smoother` the smoothed ones
/// with their posterior log-speed variance (var; 0 standing still) and lag-1 covariance (covp)
/// and the smoother's choices (fit). Leaves everything as it was when no road distance anchors it.
void fuse_scales(const ScaleMeasurements& m, const SpeedPrior& prior, bool smoother, std::vector<double>& v,
                 std::vector<double>& conf, std::vector<double>& var, std::vector<double>& covp, SpeedFit& fit);

/// The engine's speeds from per-pair measurements as NativeResult.pairs reports them (the addon's
/// smoothSpeed): road distance (m; <= 0 none) and the sd of its log, the three-frame log ratio and
/// its sd (<= 0 none; entry 0 unused), whether each pair moves. The same preparation as the
/// engine's, so its own measurements give its own profile. `fit.ok` false: no road distance anchors it.
struct MeasuredSpeed {
  std::vector<double> speed;  // m/s per pair
  std::vector<double> sigma;  // posterior sd (m/s)
  SpeedFit fit;
};
MeasuredSpeed speed_from_pairs(const std::vector<double>& timestamps, const std::vector<double>& road_distance, const std::vector<double>& road_sigma,
                               const std::vector<double>& log_ratio, const std::vector<double>& ratio_sigma, const std::vector<bool>& moving,
                               const SpeedPrior& prior);

}  // namespace egogeo::vo
