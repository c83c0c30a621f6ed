// The clip's camera (camera.cc): its intrinsics from the input or the defaults the benchmark's
// baselines assume, checked for plausibility, and the change of pixels between the caller's
// resolution and the working one (Options::downsample).
#pragma once

#include "../types.h"

#include <opencv2/core.hpp>

#include <vector>

namespace egogeo::vo {

/// The clip's intrinsics in the caller's pixels: given, else from the horizontal field of view,
/// else fx = fy = 0.9 W at the image centre (SPEC.md). Implausible ones are an InputError.
Intrinsics clip_intrinsics(const ClipInput& in, int width, int height);

/// Pixel centres at integer coordinates: working pixel j averages input pixels ds*j .. ds*j+ds-1,
/// whose centre is ds*j + (ds-1)/2.
Intrinsics to_working(Intrinsics k, int ds);

/// Working-resolution points back to the caller's pixels.
std::vector<cv::Point2f> to_input(std::vector<cv::Point2f> pts, int ds);

}  // namespace egogeo::vo

