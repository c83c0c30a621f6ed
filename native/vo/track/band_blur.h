// The direct road alignment's Gaussian blurs (road_direct.cc), done as OpenCV 4.6 does them on a
// CPU with AVX2, in fewer steps: cv::GaussianBlur of a float image runs a separable filter whose
// every output is one chain of fused multiply-adds -- the row pass sum_k kx[k] x[i + k] from k = 0,
// then the column pass ky[0] y[j] followed by ky[k] (y[j + k] + y[j - k]), k = 1..r (OpenCV's tail
// columns too: its scalar loops are contracted into the same FMAs). The same chains in the same
// order give the same floats; test/native/band-blur.test.ts compares every pixel with OpenCV's.
// The gain is OpenCV's filter engine (a ring of rows, per-row border copies, a float copy of the
// 8-bit frame first): the passes here read the 8-bit rows directly and run four accumulators.
#pragma once

#include <opencv2/core.hpp>

#include <vector>

namespace egogeo::vo {

/// The buffers one blur reuses (a clip's frames share one size).
struct BandBlurScratch {
  cv::Mat f;                      // OpenCV's path: the float copy of the frame
  std::vector<float> row, rows;   // the own path: one padded source row; the row-filtered rows
};

/// Whether band_blur computes the floats itself (AVX2 and FMA here, as OpenCV's own dispatch
/// picks its AVX2 filter) or calls OpenCV (elsewhere, or with `opencv`).
bool band_blur_own();

/// dst(rows top..) = cv::GaussianBlur(float(grey)(rows top..), Size(0, 0), sigma) with the band a
/// submatrix of the whole frame (the rows above it are read, not reflected). `grey`: 8-bit, one
/// channel; dst: float, grey's size (rows above `top` untouched). `opencv` forces OpenCV's call
/// (tests compare the two).
void band_blur(const cv::Mat& grey, int top, double sigma, cv::Mat& dst, BandBlurScratch& scratch, bool opencv = false);

}  // namespace egogeo::vo
