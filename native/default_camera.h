#pragma once
// The camera egogeo assumes when a clip states none: fx = fy = kDefaultFocalPerWidth x the image
// width, the principal point at the image centre (the reference baselines' assumption, SPEC.md).
// One place for the VO engine (vo/camera.cc), the renderer (render/raster.cc) and the VO proxy
// (baselines/proxy.cc); TS names it core/clip.ts DEFAULT_FOCAL_PER_WIDTH, which
// test/vo/camera-default.test.ts checks against this file and against the addon's output.

namespace egogeo {

constexpr double kDefaultFocalPerWidth = 0.9;

}  // namespace egogeo
