#include "gpu_backend.h"

#include "../../gpu/egogeo_gpu.h"
#include "../../gpu/options_env.h"
#include "../types.h"

#include <dlfcn.h>

#include <opencv2/video/tracking.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>

namespace egogeo::vo {
namespace {

/// EGOGEO_GPU_LIB, else libegogeo_gpu.so beside the addon's own .node file (both builds put it there).
std::string library_path() {
  if (const char* env = std::getenv("EGOGEO_GPU_LIB"); env && *env) return env;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&gpu_probe), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    const size_t slash = self.rfind('/');
    return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/libegogeo_gpu.so";
  }
  return "libegogeo_gpu.so";
}

/// The loaded library and its entry points (RAII: dlclose on destruction).
class Library {
 public:
  Library() : path_(library_path()) {
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* e = dlerror();
      error_ = e ? e : ("cannot load " + path_);
      return;
    }
    if (!sym(abi, "egogeo_gpu_abi_version") || !sym(device_count, "egogeo_gpu_device_count") || !sym(device_name, "egogeo_gpu_device_name") ||
        !sym(default_params, "egogeo_gpu_default_params") || !sym(create, "egogeo_gpu_create") || !sym(destroy, "egogeo_gpu_destroy") ||
        !sym(last_error, "egogeo_gpu_last_error") || !sym(push_frames, "egogeo_gpu_push_frames") || !sym(track, "egogeo_gpu_track") ||
        !sym(detect, "egogeo_gpu_detect"))
      return;
    if (abi() != EGOGEO_GPU_ABI) error_ = path_ + " has interface version " + std::to_string(abi()) + ", the addon needs " + std::to_string(EGOGEO_GPU_ABI) + " (rebuild both)";
  }
  ~Library() {
    if (handle_) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  bool ok() const { return handle_ && error_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }
  /// The file the loader actually mapped (EGOGEO_GPU_LIB may name a link, or a bare name found
  /// on the search path): what a run record hashes.
  std::string file() const {
    Dl_info info{};
    if (ok() && dladdr(reinterpret_cast<void*>(abi), &info) && info.dli_fname) return info.dli_fname;
    return "";
  }

  decltype(&egogeo_gpu_abi_version) abi = nullptr;
  decltype(&egogeo_gpu_device_count) device_count = nullptr;
  decltype(&egogeo_gpu_device_name) device_name = nullptr;
  decltype(&egogeo_gpu_default_params) default_params = nullptr;
  decltype(&egogeo_gpu_create) create = nullptr;
  decltype(&egogeo_gpu_destroy) destroy = nullptr;
  decltype(&egogeo_gpu_last_error) last_error = nullptr;
  decltype(&egogeo_gpu_push_frames) push_frames = nullptr;
  decltype(&egogeo_gpu_track) track = nullptr;
  decltype(&egogeo_gpu_detect) detect = nullptr;

 private:
  template <class F>
  bool sym(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(handle_, name));
    if (!f) error_ = path_ + " lacks " + name;
    return f != nullptr;
  }
  std::string path_;
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace

/// What the shared contexts (GpuHub below) of this process did: counters only, reported by gpu_probe.
struct HubStats {
  std::atomic<long long> contexts{0}, calls{0}, jobs{0};
};
static HubStats hub_stats;

GpuInfo gpu_probe() {
  GpuInfo g;
  g.shared_contexts = hub_stats.contexts;
  g.shared_calls = hub_stats.calls;
  g.shared_jobs = hub_stats.jobs;
  const Library lib;
  g.path = lib.path();
  if (!lib.ok()) {
    g.reason = lib.error();
    return g;
  }
  g.loaded = true;
  g.file = lib.file();
  g.devices = lib.device_count();
  char name[256] = "";
  if (g.devices > 0 && lib.device_name(0, name, sizeof name) == EGOGEO_GPU_OK) g.device = name;
  if (g.devices == 0) {
    g.reason = "the library loads but sees no device or driver";
    return g;
  }
  // create runs the device self-test; the smallest context that holds its test image.
  egogeo_gpu_params p{};
  lib.default_params(&p);
  p.options = egogeo::gpu::options_from_env();
  p.max_width = 160;
  p.max_height = 120;
  p.max_points = 64;
  p.batch = 1;
  egogeo_gpu_context* ctx = nullptr;
  const int rc = lib.create(&p, &ctx);
  g.selftest = rc == EGOGEO_GPU_OK ? "ok" : ctx ? lib.last_error(ctx) : "out of host memory";
  if (g.selftest.empty()) g.selftest = "egogeo_gpu_create failed (code " + std::to_string(rc) + ")";
  if (ctx) lib.destroy(ctx);
  return g;
}

/// One device context shared by the clips that track frames of one size with one set of KLT
/// parameters at the same time (every worker of a run): each clip leases one of its slots, and
/// calls that arrive together (pushes, tracks, detections of several clips) go to the library as
/// one batched call -- the first caller to find the context idle makes the call for every job
/// queued (flat combining), the others wait for their results. The device, like CUDA's own
/// context, is a process-wide resource: this registry is the addon's one piece of shared state,
/// behind a mutex, and a context lives while a clip uses it.
class GpuHub {
 public:
  static constexpr int kSlots = 16;  // clips in flight on one context (a run's workers)

  /// The hub for these parameters and frame size, created (with its device self-test) when no
  /// clip holds one. Throws InputError with the library's line when the context cannot be made.
  static std::shared_ptr<GpuHub> get(const egogeo_gpu_params& p) {
    static std::mutex* registry_mu = new std::mutex;  // never destroyed: no teardown order at exit
    static auto* registry = new std::map<std::string, std::weak_ptr<GpuHub>>;
    auto hub = std::make_shared<GpuHub>();
    if (!hub->lib_.ok()) throw InputError("--device gpu: no CUDA device (" + hub->lib_.error() + ")");
    const std::string key = hub->lib_.file() + '\n' + std::string(reinterpret_cast<const char*>(&p), sizeof p);
    std::lock_guard<std::mutex> lk(*registry_mu);
    if (auto live = (*registry)[key].lock()) return live;
    hub->params_ = p;
    hub->params_.batch = kSlots;
    if (hub->lib_.create(&hub->params_, &hub->ctx_) != EGOGEO_GPU_OK) {
      const std::string msg = hub->ctx_ ? hub->lib_.last_error(hub->ctx_) : "out of host memory";
      throw InputError("--device gpu: " + msg);  // ~GpuHub destroys the failed context
    }
    (*registry)[key] = hub;
    ++hub_stats.contexts;
    return hub;
  }

  ~GpuHub() {
    if (ctx_) lib_.destroy(ctx_);
  }

  /// A free slot, waiting while every slot is leased.
  int lease() {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return std::find(leased_, leased_ + kSlots, false) != leased_ + kSlots; });
    const int s = static_cast<int>(std::find(leased_, leased_ + kSlots, false) - leased_);
    leased_[s] = true;
    return s;
  }
  void release(int slot) {
    std::lock_guard<std::mutex> lk(mu_);
    leased_[slot] = false;
    cv_.notify_all();
  }

  void push(const egogeo_gpu_frame& f, const char* what) { combine(pushes_, f, lib_.push_frames, kSlots * params_.buffers, what); }
  void track(const egogeo_gpu_track_job& j, const char* what) { combine(tracks_, j, lib_.track, kSlots, what); }
  void detect(const egogeo_gpu_detect_job& j, const char* what) { combine(detects_, j, lib_.detect, kSlots, what); }

 private:
  template <class Job>
  struct Pending {
    const Job* job;
    bool done = false;
    int rc = EGOGEO_GPU_OK;
    std::string error;
  };

  /// Queues `job` and waits until a call made it, making that call when the context is idle.
  template <class Job, class Call>
  void combine(std::deque<Pending<Job>*>& queue, const Job& job, Call call, int cap, const char* what) {
    Pending<Job> me{&job, false, EGOGEO_GPU_OK, {}};
    std::unique_lock<std::mutex> lk(mu_);
    queue.push_back(&me);
    while (!me.done) {
      if (busy_) {
        cv_.wait(lk);
        continue;
      }
      busy_ = true;
      std::vector<Pending<Job>*> taken;
      std::vector<Job> jobs;
      while (!queue.empty() && static_cast<int>(taken.size()) < cap) {
        taken.push_back(queue.front());
        jobs.push_back(*queue.front()->job);
        queue.pop_front();
      }
      lk.unlock();
      const int rc = call(ctx_, jobs.data(), static_cast<int>(jobs.size()));
      ++hub_stats.calls;
      hub_stats.jobs += static_cast<long long>(jobs.size());
      const std::string error = rc == EGOGEO_GPU_OK ? std::string() : std::string(lib_.last_error(ctx_));
      lk.lock();
      for (Pending<Job>* t : taken) t->rc = rc, t->error = error, t->done = true;
      busy_ = false;
      cv_.notify_all();
    }
    if (me.rc != EGOGEO_GPU_OK) throw std::runtime_error(std::string("GPU ") + what + ": " + me.error);
  }

  Library lib_;
  egogeo_gpu_context* ctx_ = nullptr;
  egogeo_gpu_params params_{};
  std::mutex mu_;
  std::condition_variable cv_;
  bool busy_ = false;  // a call on the context is in flight (a context is not thread-safe)
  bool leased_[kSlots] = {};
  std::deque<Pending<egogeo_gpu_frame>*> pushes_;
  std::deque<Pending<egogeo_gpu_track_job>*> tracks_;
  std::deque<Pending<egogeo_gpu_detect_job>*> detects_;
};

struct GpuKlt::Impl {
  Library lib;
  std::shared_ptr<GpuHub> hub;  // the context this clip shares (while it tracks)
  int slot = -1;                // its slot there
  egogeo_gpu_params params{};
  int w = 0, h = 0;
  /// What each device buffer holds: a copy of the frame (compared by content, so a caller that
  /// reuses a cv::Mat buffer for another frame can never be served a stale pyramid).
  struct Entry {
    cv::Mat img;
    unsigned long long used = 0;
  };
  Entry entries[3];
  unsigned long long clock = 0;
  std::vector<float> pts, fwd, back, corners, scores;
  std::vector<unsigned char> status;

  ~Impl() {
    if (hub && slot >= 0) hub->release(slot);
  }

  void ensure_context(const cv::Mat& img) {
    if (hub) {
      if (img.cols != w || img.rows != h)
        throw InputError("--device gpu: frames change size within a clip (" + std::to_string(w) + "x" + std::to_string(h) + ", then " +
                         std::to_string(img.cols) + "x" + std::to_string(img.rows) + ")");
      return;
    }
    w = img.cols;
    h = img.rows;
    params.max_width = w;
    params.max_height = h;
    params.buffers = 3;
    params.batch = GpuHub::kSlots;
    hub = GpuHub::get(params);
    slot = hub->lease();
  }

  /// The device buffer holding `img` (uploading it and building its pyramid when none does),
  /// never evicting buffer `keep`.
  int buffer_for(const cv::Mat& img, int keep) {
    CV_Assert(img.type() == CV_8UC1);
    ensure_context(img);
    const size_t bytes = static_cast<size_t>(w) * h;
    const cv::Mat c = img.isContinuous() ? img : img.clone();
    for (int b = 0; b < 3; ++b) {
      const Entry& e = entries[b];
      if (!e.img.empty() && std::memcmp(e.img.data, c.data, bytes) == 0) {
        entries[b].used = ++clock;
        return b;
      }
    }
    int victim = -1;
    for (int b = 0; b < 3; ++b)
      if (b != keep && (victim < 0 || entries[b].used < entries[victim].used)) victim = b;
    entries[victim].img.release();  // a failed upload must not leave a stale entry
    hub->push(egogeo_gpu_frame{slot, victim, c.data, w, h, w}, "upload");
    entries[victim].img = c.clone();
    entries[victim].used = ++clock;
    return victim;
  }
};

GpuKlt::GpuKlt(const Options& opt) : impl_(std::make_unique<Impl>()) {
  Library& lib = impl_->lib;
  if (!lib.ok()) throw InputError("--device gpu: no CUDA device (" + lib.error() + ")");
  if (lib.device_count() == 0) throw InputError("--device gpu: no CUDA device (" + lib.path() + " loads but sees no device or driver)");
  if (opt.klt_window > 31) throw InputError("--device gpu: kltWindow must be at most 31 on the GPU, got " + std::to_string(opt.klt_window));
  lib.default_params(&impl_->params);
  egogeo_gpu_params& p = impl_->params;
  p.options = egogeo::gpu::options_from_env();
  p.levels = opt.klt_levels;
  p.window = opt.klt_window;
  p.iterations = opt.klt_iterations;
  p.epsilon = static_cast<float>(EGOGEO_KLT_EPSILON);  // Tracker::step's TermCriteria
  p.fb_threshold = static_cast<float>(opt.fb_threshold);
  p.max_points = std::max(16, opt.max_features);
}

GpuKlt::~GpuKlt() = default;

void GpuKlt::track(const cv::Mat& prev, const cv::Mat& next, const std::vector<cv::Point2f>& pts, std::vector<cv::Point2f>& fwd,
                   std::vector<cv::Point2f>& back, std::vector<uchar>& st1, std::vector<uchar>& st2) {
  Impl& m = *impl_;
  const int a = m.buffer_for(prev, -1);
  const int b = m.buffer_for(next, a);
  const size_t n = pts.size();
  fwd.resize(n);
  back.resize(n);
  st1.assign(n, 0);
  st2.assign(n, 0);
  const size_t chunk = static_cast<size_t>(m.params.max_points);
  for (size_t at = 0; at < n; at += chunk) {
    const int k = static_cast<int>(std::min(chunk, n - at));
    m.pts.resize(2 * static_cast<size_t>(k));
    m.fwd.resize(2 * static_cast<size_t>(k));
    m.back.resize(2 * static_cast<size_t>(k));
    m.status.resize(static_cast<size_t>(k));
    for (int i = 0; i < k; ++i) {
      m.pts[2 * i] = pts[at + i].x;
      m.pts[2 * i + 1] = pts[at + i].y;
    }
    m.hub->track(egogeo_gpu_track_job{m.slot, a, b, k, m.pts.data(), m.fwd.data(), m.back.data(), m.status.data()}, "KLT");
    for (int i = 0; i < k; ++i) {
      fwd[at + i] = cv::Point2f(m.fwd[2 * i], m.fwd[2 * i + 1]);
      back[at + i] = cv::Point2f(m.back[2 * i], m.back[2 * i + 1]);
      st1[at + i] = (m.status[i] & EGOGEO_GPU_FWD) ? 1 : 0;
      st2[at + i] = (m.status[i] & EGOGEO_GPU_BACK) ? 1 : 0;
    }
  }
}

void GpuKlt::detect(const cv::Mat& img, int threshold, std::vector<cv::KeyPoint>& kps) {
  Impl& m = *impl_;
  const int b = m.buffer_for(img, -1);
  // Strict 3x3 maxima: at most one per 2x2 block, so this never truncates.
  const int cap = ((m.w + 1) / 2) * ((m.h + 1) / 2);
  m.corners.resize(2 * static_cast<size_t>(cap));
  m.scores.resize(static_cast<size_t>(cap));
  int count = 0;
  m.hub->detect(egogeo_gpu_detect_job{m.slot, b, std::clamp(threshold, 1, 255), 0, 1, 1, 1, 0, nullptr, cap, m.corners.data(), m.scores.data(), &count, nullptr}, "FAST");
  kps.clear();
  kps.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) kps.emplace_back(m.corners[2 * i], m.corners[2 * i + 1], 7.f, -1.f, m.scores[i]);
  // cv::FAST's raster order, so Tracker::detect's sort by response orders ties as on the CPU.
  std::sort(kps.begin(), kps.end(), [](const cv::KeyPoint& p, const cv::KeyPoint& q) { return p.pt.y != q.pt.y ? p.pt.y < q.pt.y : p.pt.x < q.pt.x; });
}

}  // namespace egogeo::vo
