// JPEG frames decoded straight to grey by libjpeg(-turbo), with its warnings kept: libjpeg works
// around corrupt data ("Corrupt JPEG data: N extraneous bytes", "Premature end of JPEG file") and
// only prints a warning, which OpenCV's imdecode lets pass — the frame then decodes with grey or
// garbage blocks and the clip is answered from it. Here any warning makes the frame unreadable.
#pragma once

#include <opencv2/core.hpp>

#include <string>
#include <vector>

namespace egogeo::vo {

/// True when `bytes` start with a JPEG's SOI marker (FF D8).
inline bool is_jpeg(const std::vector<uchar>& bytes) { return bytes.size() >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8; }

/// Decodes a JPEG to 8-bit grey into `out` (as OpenCV's IMREAD_GRAYSCALE does: libjpeg's own
/// colour conversion), `downsample` (1, 2, 4 or 8) times smaller by libjpeg's DCT scaling (an
/// area average: ceil(W / downsample) x ceil(H / downsample) pixels). `width` / `height`, when
/// given, receive the stored size. Returns "" on success, else libjpeg's first error or warning.
std::string decode_jpeg_grey(const std::vector<uchar>& bytes, cv::Mat& out, int downsample = 1, int* width = nullptr, int* height = nullptr);

/// Decodes a JPEG to 8-bit BGR at full size as OpenCV's imread (IMREAD_COLOR) does: libjpeg's
/// defaults (islow DCT, fancy upsampling) with output colour space JCS_EXT_BGR. Same errors.
std::string decode_jpeg_bgr(const std::vector<uchar>& bytes, cv::Mat& out);

/// The grey image `cv::cvtColor(cv::imread(path), COLOR_BGR2GRAY)` gives (the published baselines'
/// read), pixel for pixel: BGR then grey, or, for a greyscale JPEG, its grey read directly (the
/// same pixels without the colour round trip).
std::string decode_jpeg_as_opencv_grey(const std::vector<uchar>& bytes, cv::Mat& out);

}  // namespace egogeo::vo
