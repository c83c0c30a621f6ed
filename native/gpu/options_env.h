// How egogeo's programs (the addon, the library's tests, bench/gpu) turn their environment into
// egogeo_gpu_params.options: EGOGEO_GPU_PROFILE=1, EGOGEO_GPU_THREAD_KLT=1, EGOGEO_GPU_HOST_SELECT=1,
// EGOGEO_GPU_SELFTEST_INJECT=1 (the library itself reads only EGOGEO_GPU_REFERENCE).
#pragma once

#include "egogeo_gpu.h"

#include <cstdlib>
#include <cstring>

namespace egogeo::gpu {

inline int options_from_env() {
  auto on = [](const char* name) {
    const char* v = std::getenv(name);
    return v && std::strcmp(v, "1") == 0;
  };
  return (on("EGOGEO_GPU_PROFILE") ? EGOGEO_GPU_OPT_PROFILE : 0) | (on("EGOGEO_GPU_THREAD_KLT") ? EGOGEO_GPU_OPT_THREAD_KLT : 0) |
         (on("EGOGEO_GPU_HOST_SELECT") ? EGOGEO_GPU_OPT_HOST_SELECT : 0) | (on("EGOGEO_GPU_SELFTEST_INJECT") ? EGOGEO_GPU_OPT_SELFTEST_INJECT : 0);
}

}  // namespace egogeo::gpu
