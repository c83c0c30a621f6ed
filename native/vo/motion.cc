#include "motion.h"

#include "geometry.h"

#include <opencv2/calib3d.hpp>

#include <cmath>

namespace egogeo::vo {
namespace {

/// Robust rotation between bearing sets (weighted Kabsch, Cauchy-reweighted in pixels).
cv::Matx33d fit_rotation(const std::vector<cv::Vec3d>& b1, const std::vector<cv::Vec3d>& b2, double f,
                         std::vector<double>& residual_px) {
  cv::Matx33d R = cv::Matx33d::eye();
  const size_t n = b1.size();
  std::vector<double> w(n, 1.0);
  residual_px.assign(n, 0.0);
  for (int it = 0; it < 5; ++it) {
    cv::Matx33d H = cv::Matx33d::zeros();
    for (size_t i = 0; i < n; ++i) H += w[i] * (b2[i] * b1[i].t());
    R = nearest_rotation(H);
    for (size_t i = 0; i < n; ++i) {
      const cv::Vec3d p = R * b1[i];
      const double dx = p[0] / p[2] - b2[i][0] / b2[i][2], dy = p[1] / p[2] - b2[i][1] / b2[i][2];
      residual_px[i] = f * std::sqrt(dx * dx + dy * dy);
    }
    const double c = std::max(0.5, 1.5 * median(residual_px));
    for (size_t i = 0; i < n; ++i) w[i] = cauchy(residual_px[i], c);
  }
  return R;
}

}  // namespace

PairMotion estimate_motion(const Matches& m, const Intrinsics& intr, const Options& opt, std::vector<uchar>& inliers) {
  PairMotion pm;
  const int n = static_cast<int>(m.prev.size());
  pm.tracks = n;
  inliers.assign(n, 0);
  if (n < std::max(8, opt.min_tracks)) {
    pm.quality = PairQuality::TooFewTracks;
    return pm;
  }
  const cv::Matx33d K = intr.K();
  std::vector<cv::Vec3d> b1(n), b2(n);
  for (int i = 0; i < n; ++i) {
    b1[i] = normalize(m.prev[i], K);
    b2[i] = normalize(m.curr[i], K);
  }

  // Rotation-only model: if it explains the flow, translation is unobservable (standing still or
  // pure rotation) and the pair gets zero translation instead of a noisy essential matrix.
  std::vector<double> res;
  const cv::Matx33d R0 = fit_rotation(b1, b2, intr.fx, res);
  // The upper quartile, not the median: with a distant backdrop filling most of the view, a slow
  // turn leaves most points parallax-free while the road still shows the translation clearly.
  pm.parallax = quantile(res, 0.75);
  if (pm.parallax < opt.min_parallax) {
    pm.R = R0;
    pm.quality = PairQuality::LowParallax;
    for (int i = 0; i < n; ++i) inliers[i] = res[i] < 2.0;
    pm.inliers = cv::countNonZero(inliers);
    return pm;
  }

  const int method = opt.pose_method == PoseMethod::Usac ? cv::USAC_DEFAULT : cv::RANSAC;
  cv::Mat mask;
  cv::Mat E = cv::findEssentialMat(m.prev, m.curr, cv::Mat(K), method, opt.ransac_confidence, opt.ransac_threshold, mask);
  if (E.empty() || E.rows < 3) {
    pm.R = R0;
    pm.quality = PairQuality::Degenerate;
    return pm;
  }
  E = E.rowRange(0, 3).clone();
  cv::Mat R, t;
  // A large distance cut-off keeps far points (a facade 150 m ahead) as inliers: the default
  // (50 baselines) drops them and leaves only the road to vote.
  cv::Mat far;
  const int good = cv::recoverPose(E, m.prev, m.curr, cv::Mat(K), R, t, 1e4, mask, far);
  // Too few cheirality inliers: the essential matrix is unreliable (often a wrong rotation), and
  // the neighbours' motion is the better guess (pipeline.cc fills such pairs).
  if (good < 2 * opt.min_tracks) {
    pm.R = R0;
    pm.quality = PairQuality::Degenerate;
    return pm;
  }
  pm.R = cv::Matx33d(R);
  pm.t_dir = cv::Vec3d(t.at<double>(0), t.at<double>(1), t.at<double>(2));
  pm.t_dir *= 1.0 / cv::norm(pm.t_dir);
  pm.inliers = good;
  for (int i = 0; i < n; ++i) inliers[i] = mask.at<uchar>(i) ? 1 : 0;
  return pm;
}

}  // namespace egogeo::vo
