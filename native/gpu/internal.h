// Host-side pieces shared by the CUDA context (context.cu) and the host reference (host.cc):
// argument checks, pyramid geometry, and the corner ranking and bucketing of Tracker::detect.
#pragma once

#include "egogeo_gpu.h"

#include <cstdint>
#include <string>
#include <vector>

namespace egogeo::gpu {

constexpr int kMaxLevels = 8;   // OpenCV maxLevel accepted here (the addon allows 0..8)
constexpr int kMaxWindow = 31;  // the per-thread KLT patch lives in local memory: 3 * 31 * 31 shorts
constexpr int kMaxSide = 1 << 15;

/// One FAST corner as the detection kernels emit it.
struct Corner {
  uint16_t x, y;
  uint16_t score, pad;
};

/// "" when p is usable, else what is wrong with it.
std::string check_params(const egogeo_gpu_params& p);

/// The top level buildOpticalFlowPyramid builds for a w x h frame: it stops early once the next
/// level would be no larger than the window.
int pyramid_top(int w, int h, int levels, int window);

/// Width and height of each level 0..top (OpenCV: (w + 1) / 2 per level).
void level_sizes(int w, int h, int top, int* ws, int* hs);

/// "" when the detect job's fields are usable (slot/buffer are checked by the caller).
std::string check_detect_job(const egogeo_gpu_detect_job& j, int width, int height);

/// Strongest first, ties in raster order (deterministic; OpenCV's order of ties is unspecified),
/// then Tracker::detect's bucketing into the job's outputs.
void finish_detect(std::vector<Corner>& corners, int width, int height, const egogeo_gpu_detect_job& j);

/// Copies msg into buf (NUL-terminated, truncated) when buf is not NULL.
void put_message(char* buf, size_t len, const std::string& msg);

}  // namespace egogeo::gpu
