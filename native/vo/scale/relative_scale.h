// Relative scale between consecutive frame pairs from points tracked over three frames: a point's
// depth in the middle frame, triangulated from the pair before (unit baseline) and from the pair
// after (unit baseline), gives the ratio of the two translation lengths. Unlike the road estimate
// it uses every well-triangulated point (the far field too), so it is much less noisy.
#pragma once

#include "../track/tracker.h"
#include "../types.h"

#include <vector>

namespace egogeo::vo {

struct ScaleRatio {
  double log_ratio = 0;  // log(|t_k| / |t_{k-1}|)
  double sigma = 0;      // its standard error
  bool valid = false;
};

/// ratios[k] links pair k-1 and pair k (ratios[0] is never valid).
std::vector<ScaleRatio> relative_scales(const std::vector<Matches>& matches, const std::vector<std::vector<uchar>>& inliers,
                                        const std::vector<PairMotion>& pairs, const Intrinsics& intr);

}  // namespace egogeo::vo
