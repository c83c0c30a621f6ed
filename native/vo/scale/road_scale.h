// Metric scale from the road plane. Road correspondences obey the plane homography
//   x2 ~ R x1 + s t (w . x1),   w = n / h  (road normal over camera height),
// which is linear in the per-pair distance s for a known plane and linear in w for known s.
// The plane's normal is the mount's prior (default the camera's down axis) made perpendicular to
// the clip's median heading, and
// |w| = 1 / camera_height fixes the metric scale. The per-pair road distances are noisy (a few
// percent), so they are fused with the three-frame relative scales (relative_scale.h), which keep
// the scale consistent from pair to pair; the road then sets the absolute level over the clip.
#pragma once

#include "../pose/geometry.h"
#include "relative_scale.h"
#include "road_direct.h"
#include "scale_fusion.h"
#include "speed_smoother.h"
#include "../track/tracker.h"
#include "../types.h"

#include <vector>

namespace egogeo::vo {

class RoadScale {
 public:
  RoadScale(const Options& opt, const Intrinsics& intr, int width, int height);

  /// Keeps the pair's road-region inlier correspondences for the joint solve.
  void add_pair(const Matches& m, const std::vector<uchar>& inliers);
  /// For the pair just added: when its road region kept too few correspondences for the fit
  /// (Options::direct_road), the road distance by direct alignment of the two frames (road_direct.h);
  /// also, to check its tracked fit, when most pairs so far had too few.
  void add_direct(const cv::Mat& prev, const cv::Mat& curr, const PairMotion& pm, double dt);
  /// Fewer road correspondences than this in a pair and the road is starving: the tracker
  /// re-detects there and guides the next pair (pipeline.cc). Twice what one fit needs.
  static constexpr int kStarvingRoadPoints = 30;
  /// The last pair's road-region correspondences.
  int last_road_points() const { return road_.empty() ? 0 : static_cast<int>(road_.back().size()); }
  /// Whether pixel `p` (working pixels) lies in the road region.
  bool in_road(const cv::Point2f& p) const { return prior_.dot(normalize(p, intr_.K())) >= road_depression_; }
  /// The pair just added's road distance before the joint solve (its tracked road fit, else its
  /// direct distance); 0 when it has neither. Feeds the motion model of guided tracking.
  double last_distance(const PairMotion& pm) const;
  /// Guided tracking (ORB-SLAM's constant-velocity model, with the road plane for depth): where
  /// `pts` of the current frame land in the next if the car repeats the motion `pm` over `distance`
  /// metres, rotation scaled by `rotation_scale` (the intervals' ratio): road-region points by the
  /// plane homography, the others by the rotation alone (far away). Points predicted behind the
  /// camera or outside the frame keep their position (an unguided start).
  std::vector<cv::Point2f> predict(const std::vector<cv::Point2f>& pts, const PairMotion& pm, double distance, double rotation_scale) const;
  /// Sets `scale` (metres) on every pair; `timestamps` has one entry per frame.
  /// `ratios` (may be empty) are relative scales between consecutive pairs, fused with the road.
  /// `headings` (may be empty; zero where unknown) are the pairs' bundle-adjusted translation
  /// directions, which set the road's pitch in place of the pairs' own (bundle_relative_scales()).
  void solve(std::vector<PairMotion>& pairs, const std::vector<double>& timestamps, const std::vector<ScaleRatio>& ratios,
             const std::vector<cv::Vec3d>& headings, double normal_out[3]);
  /// What the speed smoother chose in the last solve (ok = false when it did not run).
  const SpeedFit& speed_fit() const { return fit_; }

 private:
  struct Corr {
    cv::Vec3d x1, x2;
  };
  /// The road plane (w = n / h) for one pair: the prior made perpendicular to its heading.
  cv::Vec3d pair_plane(const PairMotion& pm) const;
  bool tracked_contradicted(size_t k, double tracked) const;
  double fit_distance(const PairMotion& pm, const std::vector<Corr>& c, const cv::Vec3d& w, double s0,
                      std::vector<double>* weights) const;

  const Options& opt_;
  Intrinsics intr_;
  cv::Vec3d prior_;          // Options::road_normal, unit length
  int width_, height_;       // working pixels
  double road_depression_;   // road region: prior_ . x >= this (x normalised, z = 1)
  std::vector<std::vector<Corr>> road_;
  std::vector<DirectRoad> direct_;  // per pair; distance 0 = none
  int horizon_top_;                 // the first row road_image prepares (the road plane's horizon, less a margin)
  RoadImage last_image_;            // the last aligned pair's current frame, prepared (road_image)
  RoadImage prev_image_;            // the pair's previous frame, prepared (buffers reused pair to pair)
  BandBlurScratch road_blur_;       // road_image's scratch
  DirectScratch direct_scratch_;
  size_t last_image_frame_ = 0;     // and its index (0: none; frame 0 is never a pair's current)
  size_t ok_pairs_ = 0, lacking_pairs_ = 0;  // pairs add_direct saw with a pose, and those without tracked road
  SpeedFit fit_;
};

}  // namespace egogeo::vo
