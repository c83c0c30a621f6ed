// The published geometric baselines of EgoDyn-Bench (`baselines/` in TUM-AVS/EgoDyn-Bench), their
// per-pair signals computed exactly as the reference's Python computes them on the same OpenCV:
// the VO proxy (vo_proxy_baseline.py: goodFeaturesToTrack in the central 60%, pyramidal KLT,
// findEssentialMat + recoverPose, yaw and median track displacement per pair, with its fallbacks)
// and the Farneback flow heuristic (flow_heuristic.py: width 320 by INTER_AREA, Gaussian blur,
// Farneback, median tangential / radial / magnitude flow in the 20-85% band). NumPy's float32
// arithmetic is kept where the reference uses it (element order, medians of two middle values).
// The answers the reference derives from these signals are in src/baselines/. No global state.
#pragma once

#include <opencv2/core.hpp>

#include <vector>

namespace egogeo::baselines {

/// vo_proxy_baseline.compute_vo_signals with its defaults (800 corners, ROI 0.6, 50 px, RANSAC
/// 1 px / 0.999, 15 inliers, intrinsics fx = fy = 0.9 W centred).
struct VoProxySignals {
  std::vector<double> yaw_deg;   // per pair; positive = left
  std::vector<double> disp_mag;  // per pair: median KLT displacement (px)
};

/// flow_heuristic.compute_flow_signals (max width 320).
struct FlowSignals {
  std::vector<double> turn_score, exp_score, motion_mag;  // per pair
};

/// `grey`: the clip's frames as 8-bit grey, as cv2.cvtColor(frame, COLOR_BGR2GRAY) gives them.
VoProxySignals vo_proxy_signals(const std::vector<cv::Mat>& grey);
FlowSignals flow_signals(const std::vector<cv::Mat>& grey);

/// numpy.median of float32 values (the mean of the two middle values in float32 when even); 0 for none.
float np_median(std::vector<float> v);

}  // namespace egogeo::baselines
