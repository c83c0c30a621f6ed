// The addon's side of the CUDA path: libegogeo_gpu.so (native/gpu, built only where nvcc exists)
// is dlopened at run time, so the addon never links CUDA and loads where there is no GPU.
// GpuKlt does one clip's pyramids, FAST and forward-backward KLT on the device with the same
// inputs and outputs as the CPU calls in Tracker (tracker.cc keeps only a branch per call), on a
// slot of a device context the process's clips share (gpu_backend.cc GpuHub: calls that arrive
// together are batched).
#pragma once

#include <opencv2/core.hpp>
#include <opencv2/features2d.hpp>

#include <memory>
#include <string>
#include <vector>

namespace egogeo::vo {

struct Options;

/// What the GPU library offers here: whether it loaded (from where), its devices, or why not.
struct GpuInfo {
  bool loaded = false;
  std::string path;    // the library tried (EGOGEO_GPU_LIB, else next to the addon)
  std::string file;    // the file the dynamic loader mapped for it ("" when it did not load)
  int devices = 0;
  std::string device;  // device 0's name, when there is one
  std::string reason;  // why it is unusable ("" when devices > 0)
  /// egogeo_gpu_create's device self-test on device 0 (when there is one): "ok", or the library's
  /// one-line failure ("device self-test failed (...): ..."); "" when it did not run.
  std::string selftest;
  /// This process's shared contexts so far (GpuKlt's clips share one per frame size and options):
  /// contexts created, library calls made, jobs those calls carried (jobs > calls: clips batched).
  long long shared_contexts = 0, shared_calls = 0, shared_jobs = 0;
};

/// Loads the library, asks it for devices, creates (and destroys) a small context on device 0 so
/// that its self-test runs, unloads it. Never throws.
GpuInfo gpu_probe();

class GpuKlt {
 public:
  /// Throws InputError("--device gpu: no CUDA device (...)") when the library or a device is
  /// missing, or the options are outside what the device path supports.
  explicit GpuKlt(const Options& opt);
  ~GpuKlt();
  GpuKlt(const GpuKlt&) = delete;
  GpuKlt& operator=(const GpuKlt&) = delete;

  /// cv::calcOpticalFlowPyrLK forward (prev -> next) and backward (next -> prev, starting at pts),
  /// as Tracker::step calls them: fwd, back and both statuses for every point. A frame's pyramid
  /// is built on the device the first time it is seen and kept while the frame (its cv::Mat
  /// buffer) is among the last few used.
  void track(const cv::Mat& prev, const cv::Mat& next, const std::vector<cv::Point2f>& pts, std::vector<cv::Point2f>& fwd,
             std::vector<cv::Point2f>& back, std::vector<uchar>& st1, std::vector<uchar>& st2);

  /// cv::FAST (9/16) with non-max suppression: keypoints in raster order, response = score,
  /// size 7. (ORB stays on the CPU.)
  void detect(const cv::Mat& img, int threshold, std::vector<cv::KeyPoint>& kps);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace egogeo::vo
