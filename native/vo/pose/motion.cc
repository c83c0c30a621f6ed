#include "motion.h"

#include "geometry.h"

#include <opencv2/calib3d.hpp>

#include <algorithm>
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

/// OpenCV's recoverPose (4.6) without its triangulation by a 4x4 SVD per point and candidate, which
/// cost as much as the essential-matrix estimation itself: of the four decompositions of E, the
/// one that puts the most of the `mask` points in front of both cameras and nearer than `far`
/// (in baselines) wins, ties as OpenCV breaks them; `mask` keeps only those points. Depths come
/// from the least-squares intersection of the two rays, which agrees with OpenCV's linear
/// triangulation on every point whose depth sign is observable (the decision differs only for
/// points at infinity, which both methods put beyond `far`).
int recover_pose(const cv::Mat& E, const std::vector<cv::Vec3d>& x1, const std::vector<cv::Vec3d>& x2, double far, cv::Mat& mask,
                 cv::Matx33d& R_out, cv::Vec3d& t_out) {
  cv::Mat R1m, R2m, tm;
  cv::decomposeEssentialMat(E, R1m, R2m, tm);
  const cv::Matx33d Rs[2] = {cv::Matx33d(R1m), cv::Matx33d(R2m)};
  const cv::Vec3d t(tm.at<double>(0), tm.at<double>(1), tm.at<double>(2));
  const size_t n = x1.size();
  const uchar* in = mask.ptr<uchar>();
  // Candidates in OpenCV's order: (R1, t), (R2, t), (R1, -t), (R2, -t).
  std::vector<uchar> ok[4];
  int good[4] = {0, 0, 0, 0};
  for (int c = 0; c < 4; ++c) {
    const cv::Matx33d& R = Rs[c % 2];
    const cv::Vec3d tc = c < 2 ? t : -t;
    ok[c].assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      if (!in[i]) continue;
      // Minimise |l1 R x1 + tc - l2 x2|^2 over the depths l1, l2 (x1, x2 have z = 1).
      const cv::Vec3d a = R * x1[i], b = x2[i];
      const double aa = a.dot(a), bb = b.dot(b), ab = a.dot(b), at = a.dot(tc), bt = b.dot(tc);
      const double det = aa * bb - ab * ab;
      if (!(det > 0)) continue;
      // The depths themselves: the rays have z = 1.
      const double z1 = (-at * bb + ab * bt) / det, z2 = (aa * bt - ab * at) / det;
      if (z1 > 0 && z1 < far && z2 > 0 && z2 < far) {
        ok[c][i] = 1;
        ++good[c];
      }
    }
  }
  // OpenCV takes the first candidate with at least as many as every other: the first maximum.
  const int best = static_cast<int>(std::max_element(good, good + 4) - good);
  R_out = Rs[best % 2];
  t_out = best < 2 ? t : -t;
  std::copy(ok[best].begin(), ok[best].end(), mask.ptr<uchar>());
  return good[best];
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
  cv::Matx33d R;
  cv::Vec3d t;
  // A large distance cut-off keeps far points (a facade 150 m ahead) as inliers: the default
  // (50 baselines) drops them and leaves only the road to vote.
  const int good = recover_pose(E, b1, b2, 1e4, mask, R, t);
  // Too few cheirality inliers: the essential matrix is unreliable (often a wrong rotation), and
  // the neighbours' motion is the better guess (pipeline.cc fills such pairs).
  if (good < 2 * opt.min_tracks) {
    pm.R = R0;
    pm.quality = PairQuality::Degenerate;
    return pm;
  }
  pm.R = R;
  pm.t_dir = t;
  pm.t_dir *= 1.0 / cv::norm(pm.t_dir);
  pm.inliers = good;
  for (int i = 0; i < n; ++i) inliers[i] = mask.at<uchar>(i) ? 1 : 0;
  return pm;
}

}  // namespace egogeo::vo
