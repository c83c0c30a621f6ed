// What one load of the module keeps between its calls (node-addon-api instance data: each worker
// thread that loads the addon has its own, nothing is process-wide): its frame caches and the
// threads its async calls run on. Set in addon.cc's Init.
#pragma once

#include "vo/decode/frame_cache.h"
#include "work_pool.h"

#include <napi.h>

#include <memory>

namespace egogeo {

struct Instance {
  /// Decoded image files, for the clips that follow (benchmark windows overlap). Requests hold a
  /// reference, so an async call outlives nothing it uses.
  std::shared_ptr<vo::FrameCache> frames = std::make_shared<vo::FrameCache>();
  /// Their FAST corners (the CPU detector's whole-frame lists).
  std::shared_ptr<vo::CornerCache> corners = std::make_shared<vo::CornerCache>();
  /// The async calls' threads (work_pool.h). Last member: destroyed first, so its calls finish
  /// while the caches they hold references to are still this instance's.
  WorkPool pool;
};

/// This environment's instance (always set: Init sets it before any call can run).
inline Instance& instance(Napi::Env env) { return *env.GetInstanceData<Instance>(); }

}  // namespace egogeo
