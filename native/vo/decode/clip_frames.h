// A clip's frames decoded before the engine runs, where the boundary must hold them itself: a
// video (the engine reads frames, not containers) or image files whose pixels are wanted (the
// half-size run's area average, frames returned to the caller). The engine then sees them as
// in-memory frames (FrameSource::pixels).
#pragma once

#include "../types.h"

#include <opencv2/core.hpp>

#include <string>
#include <vector>

namespace egogeo::vo {

/// Which of a video's frames a clip uses and how they are timed: the frames `frame_indices` names
/// (default all), timestamps from the clip's (one per frame used) or frame index / fps (`fps`,
/// else the container's).
struct VideoRequest {
  std::string path;  // empty: the clip is image files or pixels
  std::vector<int> frame_indices;
  bool indices_given = false;
  double fps = 0;
  bool timestamps_given = false;
};

/// The decoded clip: `input` as the engine takes it (its frames point into `frames`, which keeps
/// the pixels alive), the decoding time, and for a video what it held.
struct ClipFrames {
  ClipInput input;
  std::vector<cv::Mat> frames;
  double decode_ms = 0;
  int video_frames = 0;  // a video's frame count
  double video_fps = 0;  // its container's frame rate
  std::vector<int> frame_indices;  // the video frames used
};

class FrameCache;

/// `given`'s image files decoded at their stored size (frames given as pixels stay as they are),
/// through `cache` where one is given.
ClipFrames decoded_files(const ClipInput& given, FrameCache* cache = nullptr);

/// The video's frames `v` selects, timed as it says; `given` supplies the intrinsics, timestamps
/// and the rest. Throws InputError naming the video for a selection it cannot give.
ClipFrames video_frames(const ClipInput& given, const VideoRequest& v);

}  // namespace egogeo::vo
