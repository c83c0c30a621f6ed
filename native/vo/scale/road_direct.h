// Road distance by direct alignment, for pairs whose road region kept too few tracks: frames far
// apart (the published protocol's 10 frames over 3 s: 8 m per pair at highway speed) move road
// points near the camera by hundreds of pixels, past KLT's reach, so the tracked road fit has
// nothing to fit. The pair's rotation and translation direction (from the essential matrix, which
// the far points still give) and the road plane relate every road pixel of the two frames for a
// distance s:  x2 ~ K (R + s t w^T) K^-1 x1,  w = n / h. The distance whose mapping best matches
// the frames is the measurement: a coarse grid on blurred images (a wide basin), then a
// golden-section refinement on lightly blurred ones.
// Zero-mean normalised cross-correlation over textured road samples scores a distance (gain and
// offset changes cancel). The samples are the current frame's, mapped back into the previous frame
// by the homography's inverse: mapped back, road points move towards the focus of expansion as s
// grows and stay inside the frame, so every distance is scored on the same samples. Mapped
// forward, the previous frame's near road leaves the current frame as s grows; the far road that
// remains hardly moves and correlates well at any distance, so the score rises with s (KITTI at 10
// frames read +23% long, median; bench/RESULTS.md, "The direct alignment's fixed support").
#pragma once

#include "../track/band_blur.h"
#include "../types.h"

#include <opencv2/core.hpp>

#include <vector>

namespace egogeo::vo {

struct DirectRoad {
  double distance = 0;  // metres; 0 = no measurement
  double score = 0;     // the correlation at the optimum
  int samples = 0;      // road samples that landed inside the previous frame there
};

/// A frame as the alignment reads it: float copies blurred for the coarse search (sigma 3) and the
/// refinement (sigma 1). Each frame is the current one of a pair and the previous one of the
/// next, so the caller prepares it once for both (RoadScale::add_direct).
/// Only rows from `top` down are prepared (the rest are zero): road points never project above the
/// road plane's horizon, and the blurs are most of the alignment's cost.
struct RoadImage {
  cv::Mat coarse, fine;
  int top = 0;
};
/// Prepares `grey` into `out`, reusing its buffers (a clip's frames share one size) and the blur's
/// (band_blur.h).
void road_image(const cv::Mat& grey, int top, RoadImage& out, BandBlurScratch& scratch);

/// Buffers an alignment reuses from pair to pair (the samples' projections).
struct DirectScratch {
  std::vector<double> xy;
};

/// `prior`: the road's downward unit normal; `depression`: the road region is prior . x >= this
/// (x normalised, z = 1); `s_max`: the largest distance searched (metres).
DirectRoad direct_road_distance(const RoadImage& prev, const RoadImage& curr, const Intrinsics& intr, const PairMotion& pm,
                                const cv::Vec3d& w, const cv::Vec3d& prior, double depression, double s_max, DirectScratch& scratch);

}  // namespace egogeo::vo
