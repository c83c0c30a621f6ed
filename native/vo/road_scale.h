// Metric scale from the road plane. Road correspondences obey the plane homography
//   x2 ~ R x1 + s t (w . x1),   w = n / h  (road normal over camera height),
// which is linear in the per-pair distance s for a known plane and linear in w for known s.
// The plane's normal is the mount's prior (default the camera's down axis) made perpendicular to
// the clip's median heading, and
// |w| = 1 / camera_height fixes the metric scale. The per-pair road distances are noisy (a few
// percent), so they are fused with the three-frame relative scales (relative_scale.h), which keep
// the scale consistent from pair to pair; the road then sets the absolute level over the clip.
#pragma once

#include "relative_scale.h"
#include "tracker.h"
#include "types.h"

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
};

/// The smoother's Gaussian posterior over the pairs' log distances, beyond its mean: the variance
/// of each pair's log speed and its covariance with the previous pair's.
struct SpeedPosterior {
  std::vector<double> var, cov_prev;
};

/// Jerk-driven speed smoother. v: per-pair mean speed (in: initial estimate, out: the posterior
/// mean); moving: pairs whose speed is unknown (others are held at 0 and break the chain);
/// road/wr: log road distance per pair and its weight (1/variance, 0 = none); rho/wq: log ratio of
/// pair k's distance to pair k-1's and its weight. Noise scales and q are chosen by maximum
/// marginal likelihood on a grid (the clip's own residuals). post (optional): the posterior's
/// variances.
SpeedFit smooth_speed(std::vector<double>& v, const std::vector<bool>& moving, const std::vector<double>& timestamps,
                      const std::vector<double>& road, const std::vector<double>& wr, const std::vector<double>& rho,
                      const std::vector<double>& wq, const SpeedPrior& prior, SpeedPosterior* post);

class RoadScale {
 public:
  RoadScale(const Options& opt, const Intrinsics& intr, int width, int height);

  /// Keeps the pair's road-region inlier correspondences for the joint solve.
  void add_pair(const Matches& m, const std::vector<uchar>& inliers);
  /// Sets `scale` (metres) on every pair; `timestamps` has one entry per frame.
  /// `ratios` (may be empty) are relative scales between consecutive pairs, fused with the road.
  void solve(std::vector<PairMotion>& pairs, const std::vector<double>& timestamps, const std::vector<ScaleRatio>& ratios,
             double normal_out[3]);
  /// What the speed smoother chose in the last solve (ok = false when it did not run).
  const SpeedFit& speed_fit() const { return fit_; }

 private:
  struct Corr {
    cv::Vec3d x1, x2;
  };
  double fit_distance(const PairMotion& pm, const std::vector<Corr>& c, const cv::Vec3d& w, double s0,
                      std::vector<double>* weights) const;

  const Options& opt_;
  Intrinsics intr_;
  cv::Vec3d prior_;          // Options::road_normal, unit length
  double road_depression_;   // road region: prior_ . x >= this (x normalised, z = 1)
  std::vector<std::vector<Corr>> road_;
  SpeedFit fit_;
};

/// Whittaker smoother: minimises sum c_k (u_k - v_k)^2 + lambda sum (second difference of u)^2.
std::vector<double> whittaker(const std::vector<double>& v, const std::vector<double>& c, double lambda);

}  // namespace egogeo::vo
