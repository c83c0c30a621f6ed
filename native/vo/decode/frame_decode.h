// One input frame to a grey image at the working resolution (frame_decode.cc): in-memory pixels,
// or a JPEG (libjpeg, DCT-scaled), PNG (libpng) or PGM/PPM file, sniffed by content; a file cut
// short or corrupt is an InputError naming it.
#pragma once

#include "../types.h"

#include <opencv2/core.hpp>

#include <cstddef>

namespace egogeo::vo {

/// A decoded frame at the working resolution (Options::downsample) and its size as stored.
struct Decoded {
  cv::Mat img;
  int width = 0, height = 0;  // input pixels
};

/// How colour frames become grey: libjpeg's own conversion (the engine: cheaper, DCT scaling), or
/// as OpenCV's imread + cvtColor(COLOR_BGR2GRAY) does it (the published baselines' pixels:
/// JPEGs decoded to BGR first; other formats decode as the engine decodes them).
enum class GreyPath { Engine, OpenCvBgr };

class FrameCache;

/// Frame `index` of a clip at the working resolution `ds` (Options::downsample: 1, 2 or 4). With
/// `cache`, an image file decoded before (and unchanged since) is taken from it, and a new decode
/// is kept there (frame_cache.h); the pixels are the same either way.
Decoded decode_frame(const FrameSource& src, size_t index, int ds, GreyPath path = GreyPath::Engine, FrameCache* cache = nullptr);

}  // namespace egogeo::vo
