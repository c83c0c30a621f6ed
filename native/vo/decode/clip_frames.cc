#include "clip_frames.h"

#include "frame_decode.h"
#include "video.h"

#include <string>

namespace egogeo::vo {
namespace {

double ms_since(int64 t0) { return 1000.0 * static_cast<double>(cv::getTickCount() - t0) / cv::getTickFrequency(); }

/// A decoded Mat as the engine's in-memory frame.
FrameSource pixels_of(const cv::Mat& m) {
  FrameSource src;
  src.pixels = m.data;  // continuous: a fresh decode, cvtColor or clone
  src.width = m.cols;
  src.height = m.rows;
  return src;
}

}  // namespace

ClipFrames decoded_files(const ClipInput& given, FrameCache* cache) {
  ClipFrames out;
  out.input = given;
  const int64 t0 = cv::getTickCount();
  out.frames.reserve(out.input.frames.size());
  for (size_t k = 0; k < out.input.frames.size(); ++k) {
    FrameSource& src = out.input.frames[k];
    if (src.pixels) continue;
    out.frames.push_back(decode_frame(src, k, 1, GreyPath::Engine, cache).img);
    src = pixels_of(out.frames.back());
  }
  out.decode_ms = ms_since(t0);
  return out;
}

ClipFrames video_frames(const ClipInput& given, const VideoRequest& req) {
  ClipFrames out;
  const int64 t0 = cv::getTickCount();
  DecodedVideo v = decode_video(req.path);
  out.decode_ms = ms_since(t0);
  const int n = static_cast<int>(v.frames.size());
  out.video_frames = n;
  out.video_fps = v.fps;
  if (req.indices_given) {
    out.frame_indices = req.frame_indices;
    if (out.frame_indices.back() >= n) {
      throw InputError("clip.frameIndices names frame " + std::to_string(out.frame_indices.back()) + " but clip.video '" + req.path +
                       "' has " + std::to_string(n) + " frames");
    }
  } else {
    for (int i = 0; i < n; ++i) out.frame_indices.push_back(i);
  }
  const size_t used = out.frame_indices.size();
  if (used < 2) throw InputError("clip.video '" + req.path + "' has " + std::to_string(n) + " frame; VO needs at least 2");
  if (req.timestamps_given && given.timestamps.size() != used) {
    throw InputError("clip.video '" + req.path + "' has " + std::to_string(n) + " frames but clip.timestamps has " +
                     std::to_string(given.timestamps.size()) + " entries");
  }
  const double fps = req.fps > 0 ? req.fps : v.fps;
  if (!req.timestamps_given && !(fps > 0)) throw InputError("clip.video '" + req.path + "': no frame rate (give clip.fps or clip.timestamps)");
  out.input = given;  // intrinsics and the rest as given; frames and timestamps from the video
  out.input.frames.clear();
  out.input.timestamps.clear();
  out.frames.reserve(used);
  for (size_t k = 0; k < used; ++k) {
    const int i = out.frame_indices[k];
    out.frames.push_back(std::move(v.frames[i]));
    out.input.frames.push_back(pixels_of(out.frames.back()));
    out.input.timestamps.push_back(req.timestamps_given ? given.timestamps[k] : i / fps);
  }
  return out;
}

}  // namespace egogeo::vo
