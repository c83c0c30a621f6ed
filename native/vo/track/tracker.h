// Feature tracking: bucketed FAST/ORB corners tracked by pyramidal KLT with a forward-backward check.
#pragma once

#include "../decode/frame_cache.h"
#include "fast.h"
#include "gpu_backend.h"
#include "photometric.h"
#include "../types.h"

#include <opencv2/core.hpp>
#include <opencv2/features2d.hpp>
#include <opencv2/imgproc.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace egogeo::vo {

/// Robust per-frame noise sigma (grey levels) of an 8-bit image: the median absolute response of
/// Immerkaer's Laplacian-difference mask [1 -2 1; -2 4 -2; 1 -2 1] (zero on any locally linear
/// intensity), scaled for Gaussian noise. The median keeps edges and texture from inflating it.
double estimate_noise_sigma(const cv::Mat& img);

/// Correspondences between the previous and the current frame, by track.
struct Matches {
  std::vector<cv::Point2f> prev, curr;
  std::vector<int> ids;
};

class Tracker {
 public:
  /// `corners`: where whole-frame FAST detections are kept between clips (null: none; frame_cache.h).
  explicit Tracker(const Options& opt, CornerCache* corners = nullptr);

  /// The image detection and KLT see: `raw` after the photometric stage (Options::denoise_sigma,
  /// Options::photometric). Also sets the per-frame FAST threshold (Options::fast_noise_factor).
  cv::Mat prepare(const cv::Mat& raw);

  /// Starts on the first frame (detects corners). `raw` is the decoded grey frame.
  void start(const cv::Mat& raw, StageTimes& ms);
  /// Tracks live corners into `raw` (prepared first), returns the correspondences, then tops corners
  /// up -- except on the clip's `last` frame, where new corners would never be tracked.
  /// `predicted` (optional, one entry per points()): where a motion model expects each corner; a
  /// corner the plain search loses gets a second try started there (guided tracking). Only lost
  /// corners: a start at the prediction pulls KLT's answer towards it, so guiding every corner
  /// would bias each pair towards the previous pair's motion and hide accelerations.
  Matches step(const cv::Mat& raw, StageTimes& ms, bool last = false, const std::vector<cv::Point2f>* predicted = nullptr);

  /// The road region (metric scale rests on its corners): step() then also re-detects when fewer
  /// than `min_tracks` corners there survive a frame, as corners near the camera leave the frame
  /// fastest (at highway speed within one or two frames).
  void set_road_region(std::function<bool(const cv::Point2f&)> in_road, int min_tracks) {
    in_road_ = std::move(in_road);
    min_road_tracks_ = min_tracks;
  }

  /// The live corners of the previous frame (working pixels), in the order step() tracks them.
  const std::vector<cv::Point2f>& points() const { return pts_; }

  double mean_track_length() const;
  int tracks_created() const { return next_id_; }

 private:
  void detect(const cv::Mat& img);
  bool road_needs_corners() const;
  void build_pyramid(const cv::Mat& img, std::vector<cv::Mat>& pyr) const;

  const Options& opt_;
  cv::Ptr<cv::ORB> orb_;       // Detector::Orb only
  FastScratch fast_scratch_;   // fast_corners's score plane
  CornerCache* corners_ = nullptr;  // the instance's kept detections (CPU FAST only)
  PhotometricStage photometric_;
  int threshold_ = 0;            // FAST threshold for the current frame
  std::vector<cv::Mat> prev_pyr_;
  // Buffers reused from pair to pair: the next frame's pyramid, its gain-mapped pyramid and the
  // scale refinement's gradients (fresh full-frame buffers every pair cost page faults).
  std::vector<cv::Mat> spare_pyr_, mapped_pyr_;
  std::vector<cv::Mat> retry_prev_pyr_, retry_next_pyr_;  // [gpu] CPU pyramids for guided tracking's retry
  cv::Mat grad_x_, grad_y_;
  cv::Mat prev_img_;
  std::vector<cv::Point2f> pts_;
  std::vector<int> ids_, ages_;
  int next_id_ = 0;
  long long finished_age_sum_ = 0;
  int finished_ = 0;
  std::function<bool(const cv::Point2f&)> in_road_;
  int min_road_tracks_ = 0;
  std::unique_ptr<GpuKlt> gpu_;  // Options::Device::Gpu: pyramids, FAST and KLT on the device
};

}  // namespace egogeo::vo
