// Pyramidal Lucas-Kanade (Bouguet's, as OpenCV's calcOpticalFlowPyrLK computes it) with the
// window sums in exact integers: the tracker's KLT (klt.cc).
#pragma once

#include <opencv2/core.hpp>

#include <vector>

namespace egogeo::vo {

struct KltParams {
  int window = 13;         // window side (px)
  int max_level = 3;       // pyramid levels above the base
  int max_count = 10;      // iterations per level at most
  double epsilon = 0.03;   // stop when a step moves less than this (px)
  double min_eig = 1e-4;   // OpenCV's minEigThreshold: a window flatter than this loses the track
  // The widest instruction set the window sums may use (each where the CPU has it; all give the
  // same bits): 0 scalar, 1 SSE2, 2 AVX2, 3 AVX-512 (two window rows a vector; windows <= 16 px).
  int isa = 3;
};

/// Tracks `from` (level-0 pixels) from pyramid `prev` into pyramid `next`, both as
/// cv::buildOpticalFlowPyramid builds them with a border of at least `window` pixels; `prev` with
/// its derivatives (withDerivatives = true), `next` with or without. `to` is the answer (with
/// `use_initial`, also the starting guess, as OPTFLOW_USE_INITIAL_FLOW), `status` 1 where found.
///
/// The algorithm, its fixed-point interpolation, its stopping rules and its failures are OpenCV
/// 4.6's, point for point; the one difference is the sums over the window, exact integers here
/// where OpenCV adds float-converted products (rounding past 2^24). Integer sums do not depend on
/// the order they are added in, so the SIMD paths (SSE2, AVX2, AVX-512 on x86-64) and the scalar
/// one give the same bits, and both give OpenCV's tracks to within its float rounding (test/native/klt.test.ts).
/// Why not OpenCV's: its vector loop handles 8 pixels of a row at a time and the rest one by one
/// into a serial float sum, and a 13-pixel window is mostly rest (bench/RESULTS.md "Own KLT").
void klt_track(const std::vector<cv::Mat>& prev, const std::vector<cv::Mat>& next, const std::vector<cv::Point2f>& from,
               std::vector<cv::Point2f>& to, std::vector<uchar>& status, const KltParams& p, bool use_initial);

}  // namespace egogeo::vo
