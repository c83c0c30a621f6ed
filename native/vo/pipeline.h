// The whole clip in one call: decode → track → pose → scale → camera poses.
#pragma once

#include "types.h"

namespace egogeo::vo {

class FrameCache;

/// Runs visual odometry over a clip. Throws InputError for bad input (the message names the
/// frame or field); never touches global state, so several workers may run it at once. Image
/// files are decoded through `cache` where one is given (decode/frame_cache.h).
ClipResult process_clip(const ClipInput& in, const Options& opt, FrameCache* cache = nullptr);

}  // namespace egogeo::vo
