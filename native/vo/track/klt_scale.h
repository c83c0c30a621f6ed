// kltScale: a track's end refined together with its patch's scale change, gain and offset
// (Gauss-Newton on I1(q + s u) = g I0(p + u) + b over the KLT window), after the pyramidal KLT:
// at 10 frames the road's patches grow between frames far apart, which plain KLT does not model
// (bench/studies "Tracks on growing patches"). Sums in four-lane accumulators (AVX2 where the CPU
// has it) that give the bits a scalar sum gives.
#pragma once

#include <opencv2/core.hpp>

#include <vector>

namespace egogeo::vo {

/// Each track i with use[i] refined from from[i] (in I0) at to[i] (in I1, updated in place where the
/// refinement converges within max_shift px and a scale in [0.6, 1.6]), over a (2 half + 1)^2
/// window. `derivs`: I1's Scharr derivatives as the CPU pyramid holds them (level 1 of the tracking
/// pyramid), or null (the device kept the pyramid): then they are computed here into gx, gy.
void refine_tracks_scaled(const cv::Mat& I0, const cv::Mat& I1, const cv::Mat* derivs, cv::Mat& gx, cv::Mat& gy,
                          const std::vector<cv::Point2f>& from, std::vector<cv::Point2f>& to, const std::vector<bool>& use, int half,
                          float max_shift);

}  // namespace egogeo::vo
