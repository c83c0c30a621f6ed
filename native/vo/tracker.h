// Feature tracking: bucketed FAST/ORB corners tracked by pyramidal KLT with a forward-backward check.
#pragma once

#include "types.h"

#include <opencv2/core.hpp>
#include <opencv2/features2d.hpp>

#include <vector>

namespace egogeo::vo {

/// Correspondences between the previous and the current frame, by track.
struct Matches {
  std::vector<cv::Point2f> prev, curr;
  std::vector<int> ids;
};

class Tracker {
 public:
  explicit Tracker(const Options& opt);

  /// Starts on the first frame (detects corners).
  void start(const cv::Mat& img, StageTimes& ms);
  /// Tracks live corners into `img`, returns the correspondences, then tops corners up.
  Matches step(const cv::Mat& img, StageTimes& ms);

  double mean_track_length() const;
  int tracks_created() const { return next_id_; }

 private:
  void detect(const cv::Mat& img);
  void build_pyramid(const cv::Mat& img, std::vector<cv::Mat>& pyr) const;

  const Options& opt_;
  cv::Ptr<cv::Feature2D> detector_;
  std::vector<cv::Mat> prev_pyr_;
  cv::Mat prev_img_;
  std::vector<cv::Point2f> pts_;
  std::vector<int> ids_, ages_;
  int next_id_ = 0;
  long long finished_age_sum_ = 0;
  int finished_ = 0;
};

}  // namespace egogeo::vo
