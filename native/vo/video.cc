#include "video.h"

#include "types.h"

#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <cmath>
#include <filesystem>

namespace egogeo::vo {
namespace {

/// Opens `path` with FFmpeg directly (no fallback to other backends and their warnings).
cv::VideoCapture open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    const bool exists = std::filesystem::exists(path, ec);
    throw InputError("'" + path + "' " + (exists ? "is not a regular file" : "does not exist"));
  }
  cv::VideoCapture cap;
  try {
    cap.open(path, cv::CAP_FFMPEG);
  } catch (const cv::Exception&) {
  }
  if (!cap.isOpened()) throw InputError("'" + path + "' is not a readable video (FFmpeg cannot open it)");
  return cap;
}

double declared_fps(cv::VideoCapture& cap) {
  const double fps = cap.get(cv::CAP_PROP_FPS);
  return std::isfinite(fps) && fps > 0 ? fps : 0;
}

}  // namespace

VideoInfo probe_video(const std::string& path) {
  cv::VideoCapture cap = open(path);
  VideoInfo v;
  v.fps = declared_fps(cap);
  v.frames = std::max(0, static_cast<int>(std::lround(cap.get(cv::CAP_PROP_FRAME_COUNT))));
  v.width = static_cast<int>(cap.get(cv::CAP_PROP_FRAME_WIDTH));
  v.height = static_cast<int>(cap.get(cv::CAP_PROP_FRAME_HEIGHT));
  return v;
}

DecodedVideo decode_video(const std::string& path) {
  cv::VideoCapture cap = open(path);
  DecodedVideo out;
  out.fps = declared_fps(cap);
  const double hint = cap.get(cv::CAP_PROP_FRAME_COUNT);
  if (hint > 0 && hint < 100000) out.frames.reserve(static_cast<size_t>(hint));
  cv::Mat frame;
  try {
    while (cap.read(frame) && !frame.empty()) {
      cv::Mat grey;
      if (frame.channels() == 1) grey = frame.clone();
      else cv::cvtColor(frame, grey, frame.channels() == 4 ? cv::COLOR_BGRA2GRAY : cv::COLOR_BGR2GRAY);
      if (!out.frames.empty() && grey.size() != out.frames[0].size()) {
        throw InputError("'" + path + "': frame " + std::to_string(out.frames.size()) + " changes size");
      }
      out.frames.push_back(std::move(grey));
    }
  } catch (const cv::Exception& e) {
    throw InputError("'" + path + "' is not a readable video (" + e.err + ")");
  }
  if (out.frames.empty()) throw InputError("'" + path + "' is not a readable video (no frames decoded)");
  return out;
}

}  // namespace egogeo::vo
