// Relative pose between consecutive frames: a rotation-only model first (standing still, pure
// rotation), the essential matrix with cheirality when the translation is observable.
#pragma once

#include "../track/tracker.h"
#include "../types.h"

#include <vector>

namespace egogeo::vo {

/// Estimates R and the unit translation direction for one frame pair; `inliers` marks the
/// correspondences consistent with the model (used by the scale stage).
PairMotion estimate_motion(const Matches& m, const Intrinsics& intr, const Options& opt, std::vector<uchar>& inliers);

}  // namespace egogeo::vo
