#include "ffmpeg.h"

#include <dlfcn.h>

namespace egogeo {
namespace {

struct Loaded {
  Ffmpeg api;
  std::string error;
};

Loaded load() {
  Loaded out;
  // The major versions the headers describe: the ABI the table's types assume.
  const std::string libs[4][2] = {{"avutil", "libavutil.so." + std::to_string(LIBAVUTIL_VERSION_MAJOR)},
                                  {"avcodec", "libavcodec.so." + std::to_string(LIBAVCODEC_VERSION_MAJOR)},
                                  {"avformat", "libavformat.so." + std::to_string(LIBAVFORMAT_VERSION_MAJOR)},
                                  {"swscale", "libswscale.so." + std::to_string(LIBSWSCALE_VERSION_MAJOR)}};
  void* handles[4] = {nullptr, nullptr, nullptr, nullptr};
  for (int i = 0; i < 4; ++i) {
    // Never closed: the table points into them for the rest of the process.
    handles[i] = dlopen(libs[i][1].c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handles[i]) {
      const char* e = dlerror();
      out.error = "FFmpeg is not installed (" + (e ? std::string(e) : libs[i][1]) + ")";
      return out;
    }
  }
  auto handle = [&](const char* lib) {
    for (int i = 0; i < 4; ++i)
      if (libs[i][0] == lib) return handles[i];
    return static_cast<void*>(nullptr);
  };
#define EGOGEO_FFMPEG_RESOLVE(lib, name)                                                  \
  out.api.name = reinterpret_cast<decltype(out.api.name)>(dlsym(handle(#lib), #name));   \
  if (!out.api.name) {                                                                    \
    out.error = "FFmpeg's lib" #lib " lacks " #name;                                      \
    return out;                                                                           \
  }
  EGOGEO_FFMPEG_FUNCTIONS(EGOGEO_FFMPEG_RESOLVE)
#undef EGOGEO_FFMPEG_RESOLVE
  if (out.api.av_log_get_level() == AV_LOG_INFO) out.api.av_log_set_level(AV_LOG_QUIET);
  return out;
}

}  // namespace

const Ffmpeg* ffmpeg(std::string& why) {
  static const Loaded loaded = load();  // C++11: initialised once, thread-safe
  if (!loaded.error.empty()) {
    why = loaded.error;
    return nullptr;
  }
  return &loaded.api;
}

}  // namespace egogeo
