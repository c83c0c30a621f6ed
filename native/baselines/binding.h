// N-API surface of the published baselines: `baselineSignals(request)` (synchronous, for worker
// threads) and `baselineSignalsAsync` (a Promise on the load's own threads, work_pool.h). native/addon.cc registers it.
#pragma once

#include <napi.h>

namespace egogeo::baselines {

void register_exports(Napi::Env env, Napi::Object exports);

}  // namespace egogeo::baselines
