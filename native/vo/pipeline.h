// The whole clip in one call: decode → track → pose → scale → camera poses.
#pragma once

#include "decode/frame_cache.h"
#include "types.h"

namespace egogeo::vo {

/// Runs visual odometry over a clip. Throws InputError for bad input (the message names the
/// frame or field); never touches global state, so several workers may run it at once. Image
/// files are decoded, and corners detected, through `caches` where given (decode/frame_cache.h).
ClipResult process_clip(const ClipInput& in, const Options& opt, const FrameCaches& caches = {});

}  // namespace egogeo::vo
