// Binary Netpbm frames (PGM 'P5' grey, PPM 'P6' colour; 8 or 16 bits), a lossless format tools and
// test fixtures write without a codec library. Colour becomes grey with OpenCV's weights
// (0.299 R + 0.587 G + 0.114 B); 16-bit samples and maxval < 255 are scaled to 0..255.
#pragma once

#include <opencv2/core.hpp>

#include <string>
#include <vector>

namespace egogeo::vo {

/// True when `bytes` start with 'P5' or 'P6'.
bool is_pnm(const std::vector<uchar>& bytes);

/// Decodes into `out` (8-bit grey). Returns "" on success, else what is wrong with the file.
std::string decode_pnm_grey(const std::vector<uchar>& bytes, cv::Mat& out);

}  // namespace egogeo::vo
