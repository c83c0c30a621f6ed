// N-API surface of the VO engine: `processClip(clip, options)` (synchronous, for worker threads)
// and `processClipAsync` (a Promise, on the load's own threads, work_pool.h). native/addon.cc calls `register_exports`.
#pragma once

#include <napi.h>

namespace egogeo::vo {

void register_exports(Napi::Env env, Napi::Object exports);

}  // namespace egogeo::vo
