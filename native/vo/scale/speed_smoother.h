// The speed smoother (speed_smoother.cc): per-pair speeds of a clip from its road distances and
// relative scales under a white-noise-jerk motion model, with their posterior uncertainty.
#pragma once

#include "../types.h"

#include <vector>

namespace egogeo::vo {

/// The speed smoother's motion prior: white-noise jerk of power spectral density q (m^2/s^5),
/// fixed when jerk_psd > 0, else chosen per clip by maximum marginal likelihood within [q_min, q_max];
/// its model of the relative scales' errors: the share of a ratio's variance that accumulates
/// along a chain of ratios (the rest is each pair's own error, which does not; road_scale.cc); and
/// the standard deviation of the road distances' common level error (log; it widens the posterior,
/// the mean does not depend on it); the correlation time of the road distances' own errors; and an
/// optional log-normal prior on q (maximum a posteriori instead of maximum likelihood).
struct SpeedPrior {
  double jerk_psd = 0, q_min = 0.05, q_max = 200;
  double ratio_drift = kRatioDrift;
  double road_bias = kRoadBias;
  double road_corr_time = -1;  // s: the road errors' AR(1) correlation time (0 = white, < 0 = chosen per clip)
  double q_prior = 0, q_prior_width = kJerkPsdPriorWidth;  // log-normal prior on q: centre (0 = none) and sd of ln q
};

struct SpeedFit {
  bool ok = false;
  double jerk_psd = 0;     // the chosen q
  double road_scale = 1;   // chosen factor on the road distances' nominal variances
  double ratio_scale = 1;  // and on the relative scales'
  double road_corr_time = 0;  // the road errors' correlation time (s)
  double neg2_log_ml = 0;     // -2 log marginal likelihood at the choice (up to a constant; the last pass's weights)
};

/// The smoother's Gaussian posterior over the pairs' log distances, beyond its mean: the variance
/// of each pair's log speed and its covariance with the previous pair's.
struct SpeedPosterior {
  std::vector<double> var, cov_prev;
};

/// A clip's per-pair measurements. moving: pairs whose speed is unknown (others are held at 0 and
/// break the chain); timestamps: one per frame; road/wr: log road distance per pair and its weight
/// (1/variance, 0 = none); rho/wq: log ratio of pair k's distance to pair k-1's and its weight.
struct SpeedMeasurements {
  std::vector<bool> moving;
  std::vector<double> timestamps, road, wr, rho, wq;
};

/// Jerk-driven speed smoother. v: per-pair mean speed (in: initial estimate, out: the posterior
/// mean). Noise scales and q are chosen by maximum marginal likelihood on a grid (the clip's own
/// residuals). post (optional): the posterior's variances.
SpeedFit smooth_speed(std::vector<double>& v, const SpeedMeasurements& m, const SpeedPrior& prior, SpeedPosterior* post);

}  // namespace egogeo::vo
