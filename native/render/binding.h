// N-API surface of the renderer: `renderClip(request)` (synchronous, for worker threads) and
// `renderClipAsync(request)` (a Promise, rendering on the load's own threads, work_pool.h). native/addon.cc calls
// `register_exports` from its Init.
#pragma once

#include <napi.h>

namespace egogeo::render {

void register_exports(Napi::Env env, Napi::Object exports);

}  // namespace egogeo::render
