// Video clips (the benchmark's CARLA layout: one mp4 per clip) decoded inside the engine, so
// every worker thread decodes its own clip: FFmpeg (libavformat/libavcodec) directly, one decoder
// thread, frames converted straight to 8-bit grey by libswscale. No global state; safe in several
// threads at once.
#pragma once

#include "frame_decode.h"

#include <opencv2/core.hpp>

#include <string>
#include <vector>

namespace egogeo::vo {

/// What a container declares (no frames decoded): frame count, frame rate (0 when unknown), size.
struct VideoInfo {
  int frames = 0;
  double fps = 0;
  int width = 0, height = 0;
};

/// Every frame of a video, in file order, as 8-bit grey (sequential reads: exact for any codec).
struct DecodedVideo {
  std::vector<cv::Mat> frames;
  double fps = 0;  // the container's frame rate, 0 when it declares none
};

/// Throws InputError naming the path: "'P' does not exist", "'P' is not a regular file",
/// "'P' is not a readable video (why)" (also for a truncated or damaged file), "'P': frame N changes size".
VideoInfo probe_video(const std::string& path);
/// `grey`: swscale straight to grey (the engine), or to BGR24 as OpenCV's VideoCapture converts, then
/// cvtColor (frame_decode.h GreyPath: the published baselines' pixels).
/// `colour` (with GreyPath::OpenCvBgr): the BGR frames themselves, as VideoCapture reads them.
DecodedVideo decode_video(const std::string& path, GreyPath grey = GreyPath::Engine, bool colour = false);

}  // namespace egogeo::vo
