// The tracker's photometric stage (Options::photometric, Options::denoise_sigma): OpenCV's KLT
// assumes constant brightness, while cameras change exposure and restyled video changes gain,
// tone, blur and noise from frame to frame. Per frame, `apply` gives the image detection and KLT
// see; for 'pair' (the default of egogeo run), `pair_mapped` maps each new frame onto the previous
// frame's mean and contrast for KLT only. One instance per clip (it keeps the reference statistics).
#pragma once

#include "../types.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <vector>

namespace egogeo::vo {

class PhotometricStage {
 public:
  explicit PhotometricStage(const Options& opt);

  /// `raw` after the pre-blur and the per-frame mode ('global', 'gain', 'match', 'equalize',
  /// 'clahe'; 'none' and 'pair' leave it as it is).
  cv::Mat apply(const cv::Mat& raw);
  /// 'pair': the clip's first frame (as `apply` gave it) becomes the previous frame.
  void first(const cv::Mat& img);
  /// 'pair': `img` mapped to the previous frame's mean and contrast for KLT, or an empty Mat when
  /// the mapping would change nothing (or the mode is another); `img` becomes the previous frame.
  /// The mapped image lives in a buffer the next call overwrites.
  cv::Mat pair_mapped(const cv::Mat& img);

 private:
  const Options& opt_;
  cv::Ptr<cv::CLAHE> clahe_;        // per clip (CLAHE objects keep scratch state)
  bool have_ref_ = false;           // 'gain' / 'match': the first frame's statistics are known
  double ref_mean_ = 0, ref_sd_ = 0;
  std::vector<double> ref_cdf_;     // 256 mid-bin CDF values of the first frame
  cv::Scalar prev_mean_, prev_sd_;  // 'pair': the previous frame's statistics
  cv::Mat mapped_;                  // 'pair': the last mapped image (pair_mapped's buffer)
};

}  // namespace egogeo::vo
