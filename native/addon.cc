// The engine's N-API module: registers the VO (vo/binding.cc), renderer (render/binding.cc) and
// published-baseline (baselines/binding.cc) calls. Module-wide: nothing but OpenCV's own thread-pool size and OpenBLAS's (one thread from the
// first load on; OpenCV's changed only on request) and OpenCV's default Mat allocator (huge_pages.h:
// image buffers from huge pages, installed by the first load). Per load: instance.h (the frame caches, the
// async calls' threads).
#include "baselines/binding.h"
#include "huge_pages.h"
#include "instance.h"
#include "render/binding.h"
#include "vo/binding.h"

#include <napi.h>
#include <opencv2/core.hpp>

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <mutex>

namespace {

// The engine's parallelism is one clip per calling thread (egogeo's worker pool; the load's own threads, work_pool.h, for
// the async calls). OpenCV's own pool (TBB here) would add a thread per core inside every call, and
// its idle workers spin in sched_yield, so the first load of the module (main thread or worker) sets
// it to one thread. Once per process: later loads in other workers leave a setThreads(n) alone.
std::once_flag g_pin_opencv_threads;

// OpenCV's linear algebra calls LAPACK/BLAS, which on Debian is OpenBLAS's pthread build: it keeps
// a thread per core that spins in sched_yield between calls (at all frames the engine's larger
// solves reach it: a one-worker run kept 1.55 cores busy, a third of it in the kernel, and the
// spinning thread took CPU from the other workers). One thread, like OpenCV's own pool. OpenBLAS
// is loaded as a dependency of OpenCV, outside the global symbol scope, so it is found by path.
/// OpenBLAS's own functions, from the copy OpenCV loaded (none: null).
void* openblas_symbol(const char* name) {
  struct Find {
    const char* name;
    void* fn = nullptr;
  } find{name};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* f = static_cast<Find*>(data);
        if (!info->dlpi_name || !std::strstr(info->dlpi_name, "openblas")) return 0;
        void* lib = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
        if (!lib) return 0;
        f->fn = dlsym(lib, f->name);
        dlclose(lib);  // drops the reference RTLD_NOLOAD took; OpenCV's keeps the library loaded
        return f->fn ? 1 : 0;
      },
      &find);
  return find.fn;
}

void pin_openblas_threads() {
  if (auto set = reinterpret_cast<void (*)(int)>(openblas_symbol("openblas_set_num_threads"))) set(1);
}

// OpenBLAS's thread count, -1 where OpenCV does not use OpenBLAS (egogeo doctor, tests).
Napi::Value BlasThreads(const Napi::CallbackInfo& info) {
  auto get = reinterpret_cast<int (*)()>(openblas_symbol("openblas_get_num_threads"));
  return Napi::Number::New(info.Env(), get ? get() : -1);
}

Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(info.Env(), "setThreads: expected a number");
  // OpenCV's thread pool is per process (the module pins it to 1 at load; this overrides that).
  cv::setNumThreads(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

Napi::Value GetThreads(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), cv::getNumThreads()); }

// The threads this load's async calls have started (work_pool.h): 1 for a caller that awaits each call.
Napi::Value AsyncThreads(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), egogeo::instance(info.Env()).pool.threads()); }

// The huge-page allocator's counters (huge_pages.h), null where it is not installed.
Napi::Value HugePages(const Napi::CallbackInfo& info) {
  const auto* a = egogeo::huge_page_allocator();
  if (!a) return info.Env().Null();
  const auto s = a->stats();
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("slabBytes", static_cast<double>(s.slab_bytes));
  o.Set("blocksInUse", static_cast<double>(s.blocks_in_use));
  o.Set("blocksServed", static_cast<double>(s.blocks_served));
  return o;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  std::call_once(g_pin_opencv_threads, [] {
    cv::setNumThreads(1);
    pin_openblas_threads();
    egogeo::install_huge_page_allocator();
  });
  env.SetInstanceData(new egogeo::Instance());  // freed with the environment
  egogeo::vo::register_exports(env, exports);
  egogeo::render::register_exports(env, exports);
  egogeo::baselines::register_exports(env, exports);
  exports.Set("setThreads", Napi::Function::New(env, SetThreads, "setThreads"));
  exports.Set("threads", Napi::Function::New(env, GetThreads, "threads"));
  exports.Set("asyncThreads", Napi::Function::New(env, AsyncThreads, "asyncThreads"));
  exports.Set("blasThreads", Napi::Function::New(env, BlasThreads, "blasThreads"));
  exports.Set("hugePages", Napi::Function::New(env, HugePages, "hugePages"));
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
