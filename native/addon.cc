// The engine's N-API module: registers the VO (vo/binding.cc), renderer (render/binding.cc) and
// published-baseline (baselines/binding.cc) calls. Module-wide: nothing but OpenCV's own thread-pool size (one thread from the first load on,
// changed only on request).
#include "baselines/binding.h"
#include "render/binding.h"
#include "vo/binding.h"

#include <napi.h>
#include <opencv2/core.hpp>

#include <mutex>

namespace {

// The engine's parallelism is one clip per calling thread (egogeo's worker pool; the libuv pool for
// the async calls). OpenCV's own pool (TBB here) would add a thread per core inside every call, and
// its idle workers spin in sched_yield, so the first load of the module (main thread or worker) sets
// it to one thread. Once per process: later loads in other workers leave a setThreads(n) alone.
std::once_flag g_pin_opencv_threads;

Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(info.Env(), "setThreads: expected a number");
  // OpenCV's thread pool is per process (the module pins it to 1 at load; this overrides that).
  cv::setNumThreads(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

Napi::Value GetThreads(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), cv::getNumThreads()); }

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  std::call_once(g_pin_opencv_threads, [] { cv::setNumThreads(1); });
  egogeo::vo::register_exports(env, exports);
  egogeo::render::register_exports(env, exports);
  egogeo::baselines::register_exports(env, exports);
  exports.Set("setThreads", Napi::Function::New(env, SetThreads, "setThreads"));
  exports.Set("threads", Napi::Function::New(env, GetThreads, "threads"));
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
