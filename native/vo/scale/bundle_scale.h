// Relative scales from a bundle adjustment over windows of consecutive frames. The three-frame
// ratios (relative_scale.h) triangulate each point from one pair's baseline with that pair's own
// pose, so every pair's pose error becomes a scale error shared by its two ratios; here the poses
// and the points' inverse depths are refined jointly over every frame a point is tracked in (the
// local bundle adjustment of ORB-SLAM and of most keyframe VO), and the ratios are read from the
// adjusted camera centres, with standard errors from the adjustment's covariance.
#pragma once

#include "relative_scale.h"
#include "../track/tracker.h"
#include "../types.h"

#include <vector>

namespace egogeo::vo {

/// `three_frame` (relative_scales()) seeds the window's scales and delimits the windows: a window
/// spans consecutive good pairs joined by valid three-frame ratios (a link without shared tracks
/// has no observable scale). Links a window cannot adjust keep their three-frame ratio.
/// `headings`, when given, receives each pair's adjusted translation direction (zero for a pair no
/// window adjusted): over a window the directions scatter about half as much as the per-pair
/// essential matrices' (RoadScale::solve takes the road's pitch from them).
/// `residual_px`, when given, receives the windows' robust reprojection error (pixels, the mean over
/// the windows solved of each one's residual sigma; 0 when none was): in a turn it is lowest at the
/// true focal length (bench/RESULTS.md, "The scale chain in turns, and the focal length").
std::vector<ScaleRatio> bundle_relative_scales(const std::vector<Matches>& matches, const std::vector<std::vector<uchar>>& inliers,
                                               const std::vector<PairMotion>& pairs, const Intrinsics& intr,
                                               const std::vector<ScaleRatio>& three_frame,
                                               std::vector<cv::Vec3d>* headings = nullptr, double* residual_px = nullptr);

}  // namespace egogeo::vo
