// Small geometric helpers shared by the pose and scale stages.
#pragma once

#include <opencv2/core.hpp>

#include <algorithm>
#include <vector>

namespace egogeo::vo {

/// Pixel → homogeneous normalized image coordinates (z = 1).
inline cv::Vec3d normalize(const cv::Point2f& p, const cv::Matx33d& K) {
  return {(p.x - K(0, 2)) / K(0, 0), (p.y - K(1, 2)) / K(1, 1), 1.0};
}

/// Median of a copy (values are few; nth_element keeps it linear).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  return v[mid];
}

/// q-quantile (nearest rank) of a copy.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

/// Cauchy IRLS weight for a residual r with scale c.
inline double cauchy(double r, double c) { return 1.0 / (1.0 + (r * r) / (c * c)); }

/// Closest rotation to a 3x3 matrix (SVD), with det = +1.
inline cv::Matx33d nearest_rotation(const cv::Matx33d& M) {
  cv::SVD svd(cv::Mat(M), cv::SVD::FULL_UV);
  cv::Mat R = svd.u * svd.vt;
  if (cv::determinant(R) < 0) {
    cv::Mat D = cv::Mat::eye(3, 3, CV_64F);
    D.at<double>(2, 2) = -1;
    R = svd.u * D * svd.vt;
  }
  return cv::Matx33d(R);
}

}  // namespace egogeo::vo
