// The engine's N-API module: registers the VO (vo/binding.cc) and renderer (render/binding.cc)
// calls. Module-wide: nothing but OpenCV's own thread-pool size, set on request.
#include "render/binding.h"
#include "vo/binding.h"

#include <napi.h>
#include <opencv2/core.hpp>

namespace {

Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(info.Env(), "setThreads: expected a number");
  // OpenCV's thread pool is per process; workers call this once with 1 so they don't oversubscribe.
  cv::setNumThreads(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  egogeo::vo::register_exports(env, exports);
  egogeo::render::register_exports(env, exports);
  exports.Set("setThreads", Napi::Function::New(env, SetThreads, "setThreads"));
  exports.Set("opencvVersion", Napi::String::New(env, CV_VERSION));
  // How this binary was compiled (egogeo doctor shows it): optimised or not, with sanitizers or not.
#if defined(__SANITIZE_ADDRESS__)
  exports.Set("buildType", Napi::String::New(env, "asan"));
#elif defined(__OPTIMIZE__)
  exports.Set("buildType", Napi::String::New(env, "release"));
#else
  exports.Set("buildType", Napi::String::New(env, "debug"));
#endif
  return exports;
}

}  // namespace

NODE_API_MODULE(egogeo_native, Init)
