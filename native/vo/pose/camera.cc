#include "camera.h"

#include "../../default_camera.h"

#include <cmath>
#include <string>

namespace egogeo::vo {

Intrinsics clip_intrinsics(const ClipInput& in, int width, int height) {
  Intrinsics intr = in.intrinsics;
  if (!in.intrinsics_given) {
    intr.fx = intr.fy = in.hfov_deg > 0 ? 0.5 * width / std::tan(in.hfov_deg * CV_PI / 360.0) : kDefaultFocalPerWidth * width;
    intr.cx = width / 2.0;
    intr.cy = height / 2.0;
  }
  // Absurd intrinsics give NaN poses without a word: the focal lengths must put the field of view
  // between about 0.6 and 170 degrees and the principal point inside the image.
  {
    const double W = width, H = height;
    auto bad = [](double v, double lo, double hi) { return !std::isfinite(v) || v < lo || v > hi; };
    if (bad(intr.fx, 0.04 * W, 100 * W) || bad(intr.fy, 0.04 * W, 100 * W)) {
      throw InputError("intrinsics fx = " + std::to_string(intr.fx) + ", fy = " + std::to_string(intr.fy) + " are not plausible for a " +
                       std::to_string(width) + "-pixel-wide image (expected " + std::to_string(0.04 * W) + " .. " + std::to_string(100 * W) + ")");
    }
    if (bad(intr.cx, 0, W) || bad(intr.cy, 0, H)) {
      throw InputError("intrinsics cx = " + std::to_string(intr.cx) + ", cy = " + std::to_string(intr.cy) + " are outside the " +
                       std::to_string(width) + "x" + std::to_string(height) + " image");
    }
  }
  return intr;
}

/// Pixel centres at integer coordinates: working pixel j averages input pixels ds*j .. ds*j+ds-1,
/// whose centre is ds*j + (ds-1)/2.
Intrinsics to_working(Intrinsics k, int ds) {
  if (ds == 1) return k;
  const double off = 0.5 * (ds - 1);
  return {k.fx / ds, k.fy / ds, (k.cx - off) / ds, (k.cy - off) / ds};
}

std::vector<cv::Point2f> to_input(std::vector<cv::Point2f> pts, int ds) {
  const float off = 0.5f * static_cast<float>(ds - 1);
  for (auto& p : pts) p = p * static_cast<float>(ds) + cv::Point2f(off, off);
  return pts;
}

}  // namespace egogeo::vo
