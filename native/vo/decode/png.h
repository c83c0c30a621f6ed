// PNG frames decoded straight to grey by libpng, with the transforms OpenCV's IMREAD_GRAYSCALE
// applies (16-bit stripped to 8, palette and low bit depths expanded, alpha dropped, colour to
// grey with weights 0.299 / 0.587 / 0.114), so results match the earlier cv::imdecode path without
// loading OpenCV's imgcodecs (GDAL and friends: ~0.2 s at every process and worker start).
#pragma once

#include <opencv2/core.hpp>

#include <string>
#include <vector>

namespace egogeo::vo {

/// True when `bytes` start with the PNG signature.
bool is_png(const std::vector<uchar>& bytes);

/// Decodes a PNG to 8-bit grey into `out`. Returns "" on success, else libpng's message.
std::string decode_png_grey(const std::vector<uchar>& bytes, cv::Mat& out);

}  // namespace egogeo::vo
