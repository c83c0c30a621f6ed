// libegogeo_gpu's device side: the context (stream, device pools, pinned staging), the self-test
// and the C entry points; the kernels are pyramid.cu, detect.cu and track.cu (kernels.cuh). The
// per-pixel and per-point arithmetic is klt_core.h, shared with the host reference; this file only
// moves data and launches.
#include "arena.h"
#include "internal.h"
#include "kernels.cuh"
#include "klt_core.h"
#include "select_core.h"
#include "klt_defaults.h"

#include <cuda_runtime.h>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

using namespace egogeo::gpu;

namespace {

/// A pyramid buffer in the device pool: level l of the largest frame fits at img[l] / der[l].
struct Buffer {
  uint8_t* img[kMaxLevels + 1] = {};
  int16_t* der[kMaxLevels + 1] = {};
  int w = 0, h = 0, top = -1;  // the frame it holds (top < 0: none yet)
};

}  // namespace

/// EGOGEO_GPU_OPT_PROFILE: the device time of each stage, from events around its copies and launches
/// (egogeo_gpu_profile). Spans are read at the next stream synchronisation (track and detect end
/// with one; push does not), so a call's own device time is counted whenever it ran.
enum Stage { kUpload, kPyramids, kFast, kNms, kSort, kSelect, kDetectDownload, kTrackUpload, kTrack, kTrackDownload, kStages };
constexpr const char* kStageNames[kStages] = {"upload",   "pyramids",     "fast",  "nms",           "sort",
                                              "select",   "detect_download", "track_upload", "track", "track_download"};

struct Profile {
  bool on = false;
  std::vector<cudaEvent_t> events;  // a pool: spans take two each, returned once read
  size_t used = 0;
  struct Span {
    int stage;
    cudaEvent_t a, b;
  };
  std::vector<Span> pending;
  int open_stage = -1;
  cudaEvent_t open_event = nullptr;
  double ms[kStages] = {};
  long spans[kStages] = {};

  cudaEvent_t next() {
    if (used == events.size()) {
      cudaEvent_t e = nullptr;
      if (cudaEventCreate(&e) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
      }
      events.push_back(e);
    }
    return events[used++];
  }
  void begin(int stage, cudaStream_t s) {
    if (!on) return;
    open_stage = stage;
    open_event = next();
    if (open_event) cudaEventRecord(open_event, s);
  }
  void end(cudaStream_t s) {
    if (!on || open_stage < 0) return;
    cudaEvent_t b = next();
    if (open_event && b && cudaEventRecord(b, s) == cudaSuccess) pending.push_back(Span{open_stage, open_event, b});
    open_stage = -1;
  }
  /// After a stream synchronisation: every pending span has run.
  void settle() {
    if (!on) return;
    for (const Span& sp : pending) {
      float t = 0;
      if (cudaEventElapsedTime(&t, sp.a, sp.b) == cudaSuccess) {
        ms[sp.stage] += t;
        spans[sp.stage]++;
      }
    }
    cudaGetLastError();
    pending.clear();
    used = 0;
  }
  ~Profile() {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
  }
};

struct egogeo_gpu_context {
  egogeo_gpu_params p{};
  std::string error;
  bool ready = false;                 // created and self-tested: calls are accepted
  std::unique_ptr<HostBackend> host;  // EGOGEO_GPU_REFERENCE=1: the host reference instead of CUDA
  cudaStream_t stream = nullptr;
  cudaEvent_t staged = nullptr;  // recorded after the last copy out of pinned staging
  bool started = false;          // `staged` has been recorded at least once
  int max_top = 0;
  int mw[kMaxLevels + 1] = {}, mh[kMaxLevels + 1] = {};
  uint8_t* dpool = nullptr;
  uint8_t* hpool = nullptr;  // pinned
  std::vector<Buffer> buffers;  // slot * p.buffers + buffer
  // Device areas.
  PlaneOp* d_ops = nullptr;
  TrackDesc* d_jobs = nullptr;
  float2 *d_pts = nullptr, *d_fwd = nullptr, *d_back = nullptr;
  uint8_t* d_status = nullptr;
  uint16_t* d_score = nullptr;  // per detect job: max_width * max_height scores
  unsigned long long* d_keys = nullptr;    // per detect job: corner_cap corner keys (NMS survivors)
  unsigned long long* d_sorted = nullptr;  // the same, sorted
  int* d_counts = nullptr;
  int *d_begin = nullptr, *d_end = nullptr;  // segments of the sort
  uint8_t* d_sort_tmp = nullptr;
  size_t sort_tmp_bytes = 0;
  DetectDesc* d_desc = nullptr;
  float2* d_existing = nullptr;  // batch * max_points
  uint8_t* d_occ = nullptr;      // per detect job: occupancy grid when shared memory is too small
  size_t occ_stride = 0;
  uint8_t* d_out = nullptr;      // detect output: header (2 ints per job), then the corners
  size_t out_header = 0;
  size_t corner_cap = 0;
  // Pinned host areas (staging for the copies above).
  uint8_t* h_frames = nullptr;
  PlaneOp* h_ops = nullptr;
  TrackDesc* h_jobs = nullptr;
  float2 *h_pts = nullptr, *h_fwd = nullptr, *h_back = nullptr;
  uint8_t* h_status = nullptr;
  int* h_counts = nullptr;
  DetectDesc* h_desc = nullptr;
  float2* h_existing = nullptr;
  uint8_t* h_out = nullptr;  // the one download of a detect call
  size_t ops_cap = 0;
  bool host_select = false;     // EGOGEO_GPU_OPT_HOST_SELECT: selection on the host (the former path)
  bool thread_klt = false;      // EGOGEO_GPU_OPT_THREAD_KLT: one thread per tracked point (the former kernel)
  std::vector<Corner> corners;  // host_select: pageable, a few thousand per frame
  Profile prof;                 // EGOGEO_GPU_OPT_PROFILE

  int fail(int code, const std::string& msg) {
    error = msg;
    return code;
  }
  int cuda(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return EGOGEO_GPU_OK;
    cudaGetLastError();  // clear a sticky launch error so later calls report their own
    return fail(e == cudaErrorMemoryAllocation ? EGOGEO_GPU_ENOMEM : EGOGEO_GPU_ECUDA, std::string(what) + ": " + cudaGetErrorString(e));
  }
  /// Pinned staging may be rewritten only once the copies queued from it have run.
  int wait_staging() {
    if (!started) return EGOGEO_GPU_OK;
    return cuda(cudaEventSynchronize(staged), "cudaEventSynchronize");
  }
  int mark_staging() {
    started = true;
    return cuda(cudaEventRecord(staged, stream), "cudaEventRecord");
  }
  Buffer* buffer(int slot, int b) {
    if (slot < 0 || slot >= p.batch || b < 0 || b >= p.buffers) return nullptr;
    return &buffers[static_cast<size_t>(slot) * p.buffers + b];
  }
};

#define EGG_TRY(expr)                       \
  do {                                      \
    const int egg_rc = (expr);              \
    if (egg_rc != EGOGEO_GPU_OK) return egg_rc; \
  } while (0)

extern "C" {

int egogeo_gpu_abi_version(void) { return EGOGEO_GPU_ABI; }

int egogeo_gpu_device_count(void) {
  if (env_flag("EGOGEO_GPU_REFERENCE")) return 1;  // the host reference stands in for device 0
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

int egogeo_gpu_device_name(int device, char* buf, size_t len) {
  const int n = egogeo_gpu_device_count();
  if (env_flag("EGOGEO_GPU_REFERENCE") && device == 0) {
    put_message(buf, len, "host reference (EGOGEO_GPU_REFERENCE=1, no CUDA)");
    return EGOGEO_GPU_OK;
  }
  if (device < 0 || device >= n) {
    put_message(buf, len, n == 0 ? "no CUDA device" : "no CUDA device " + std::to_string(device) + " (" + std::to_string(n) + " present)");
    return EGOGEO_GPU_ENODEV;
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    put_message(buf, len, "cudaGetDeviceProperties failed");
    return EGOGEO_GPU_ECUDA;
  }
  const double gib = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
  put_message(buf, len, std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
                            std::to_string(static_cast<int>(gib + 0.5)) + " GiB)");
  return EGOGEO_GPU_OK;
}

void egogeo_gpu_default_params(egogeo_gpu_params* p) {
  if (!p) return;
  *p = egogeo_gpu_params{};
  p->device = 0;
  p->max_width = 1600;
  p->max_height = 900;
  p->levels = EGOGEO_KLT_LEVELS;
  p->window = EGOGEO_KLT_WINDOW;
  p->iterations = EGOGEO_KLT_ITERATIONS;
  p->epsilon = static_cast<float>(EGOGEO_KLT_EPSILON);
  p->min_eig = 1e-4f;
  p->fb_threshold = static_cast<float>(EGOGEO_KLT_FB_THRESHOLD);
  p->max_points = 2048;
  p->batch = 1;
  p->buffers = 3;
}

const char* egogeo_gpu_last_error(const egogeo_gpu_context* ctx) { return ctx ? ctx->error.c_str() : "no context"; }

void egogeo_gpu_destroy(egogeo_gpu_context* ctx) {
  if (!ctx) return;
  if (ctx->stream) {
    cudaSetDevice(ctx->p.device);
    cudaStreamSynchronize(ctx->stream);
    cudaStreamDestroy(ctx->stream);
  }
  if (ctx->staged) cudaEventDestroy(ctx->staged);
  if (ctx->dpool) cudaFree(ctx->dpool);
  if (ctx->hpool) cudaFreeHost(ctx->hpool);
  cudaGetLastError();
  delete ctx;
}

}  // extern "C"

namespace {

/// EGOGEO_GPU_OPT_HOST_SELECT (the former path, kept for comparison): once FAST and NMS are queued,
/// the corners of each job are downloaded and ranked and selected on the host (finish_detect).
int detect_host_select(egogeo_gpu_context* ctx, const egogeo_gpu_detect_job* jobs, int n) {
  EGG_TRY(ctx->cuda(cudaMemcpyAsync(ctx->h_counts, ctx->d_counts, sizeof(int) * n, cudaMemcpyDeviceToHost, ctx->stream), "download"));
  EGG_TRY(ctx->mark_staging());
  EGG_TRY(ctx->cuda(cudaStreamSynchronize(ctx->stream), "detect"));
  ctx->prof.settle();
  std::vector<unsigned long long> keys;
  for (int i = 0; i < n; ++i) {
    const Buffer& B = *ctx->buffer(jobs[i].slot, jobs[i].buffer);
    const size_t c = std::min(static_cast<size_t>(ctx->h_counts[i]), ctx->corner_cap);
    keys.resize(c);
    if (c > 0) {
      EGG_TRY(ctx->cuda(cudaMemcpyAsync(keys.data(), ctx->d_keys + ctx->corner_cap * i, sizeof(unsigned long long) * c, cudaMemcpyDeviceToHost, ctx->stream),
                        "download corners"));
      EGG_TRY(ctx->cuda(cudaStreamSynchronize(ctx->stream), "download corners"));
    }
    ctx->corners.resize(c);
    for (size_t k = 0; k < c; ++k)
      ctx->corners[k] = Corner{static_cast<uint16_t>(keys[k] & 0xFFFF), static_cast<uint16_t>((keys[k] >> 16) & 0xFFFF),
                               static_cast<uint16_t>(255 - static_cast<int>((keys[k] >> 32) & 0xFF)), 0};
    finish_detect(ctx->corners, B.w, B.h, jobs[i]);
  }
  return EGOGEO_GPU_OK;
}

/// Everything create does but the self-test: checks, then CUDA's stream, pools and staging (or
/// the host reference's buffers).
int create_context(const egogeo_gpu_params* params, egogeo_gpu_context* ctx) {
  if (!params) return ctx->fail(EGOGEO_GPU_EINVAL, "create: params is NULL");
  const std::string bad = check_params(*params);
  if (!bad.empty()) return ctx->fail(EGOGEO_GPU_EINVAL, "create: " + bad);
  ctx->p = *params;
  const egogeo_gpu_params& p = ctx->p;
  const size_t slots = static_cast<size_t>(p.batch) * p.buffers;
  if (env_flag("EGOGEO_GPU_REFERENCE")) {
    if (p.device != 0) return ctx->fail(EGOGEO_GPU_ENODEV, "no device " + std::to_string(p.device) + " (EGOGEO_GPU_REFERENCE=1 has device 0 only)");
    ctx->host.reset(new (std::nothrow) HostBackend(p));
    if (!ctx->host) return ctx->fail(EGOGEO_GPU_ENOMEM, "create: out of host memory");
    ctx->buffers.resize(slots);
    ctx->ready = true;
    return EGOGEO_GPU_OK;
  }
  int count = 0;
  const cudaError_t ce = cudaGetDeviceCount(&count);
  if (ce != cudaSuccess || count == 0) {
    cudaGetLastError();
    return ctx->fail(EGOGEO_GPU_ENODEV, std::string("no CUDA device (") + (ce != cudaSuccess ? cudaGetErrorString(ce) : "none found") + ")");
  }
  if (p.device >= count) return ctx->fail(EGOGEO_GPU_ENODEV, "no CUDA device " + std::to_string(p.device) + " (" + std::to_string(count) + " present)");
  EGG_TRY(ctx->cuda(cudaSetDevice(p.device), "cudaSetDevice"));
  EGG_TRY(ctx->cuda(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  EGG_TRY(ctx->cuda(cudaEventCreateWithFlags(&ctx->staged, cudaEventDisableTiming), "cudaEventCreate"));

  ctx->max_top = pyramid_top(p.max_width, p.max_height, p.levels, p.window);
  level_sizes(p.max_width, p.max_height, ctx->max_top, ctx->mw, ctx->mh);
  const size_t pts = static_cast<size_t>(p.batch) * p.max_points;
  const size_t pixels = static_cast<size_t>(p.max_width) * p.max_height;
  // Strict 3x3 maxima are never 8-adjacent: at most one per 2x2 block, so no corner is ever lost.
  ctx->corner_cap = static_cast<size_t>((p.max_width + 1) / 2) * ((p.max_height + 1) / 2);
  // push_frames takes up to batch x buffers frames: pyrDown and Scharr ops for every level of each.
  ctx->ops_cap = slots * (ctx->max_top + 1) * 2;

  const size_t keys = ctx->corner_cap * p.batch;
  if (keys > static_cast<size_t>(1) << 30) return ctx->fail(EGOGEO_GPU_EINVAL, "create: batch x max_width x max_height is too large for one context");
  {
    int* none = nullptr;
    EGG_TRY(ctx->cuda(cub::DeviceSegmentedRadixSort::SortKeys(nullptr, ctx->sort_tmp_bytes, static_cast<const unsigned long long*>(nullptr),
                                                                static_cast<unsigned long long*>(nullptr), static_cast<int>(keys), p.batch, none, none,
                                                                0, kKeyBits, ctx->stream),
                      "sort (temporary storage)"));
  }
  // min_distance >= 1: the occupancy grid has at most (w + 1) x (h + 1) cells.
  ctx->occ_stride = align_up(static_cast<size_t>(p.max_width + 1) * (p.max_height + 1));
  ctx->out_header = align_up(sizeof(int) * 2 * p.batch);
  const size_t out_bytes = ctx->out_header + sizeof(Corner) * keys;
  ctx->buffers.resize(slots);
  // The device pool and the pinned staging, each one allocation (arena.h).
  auto device_layout = [&](Arena& a) {
    for (Buffer& B : ctx->buffers)
      for (int l = 0; l <= ctx->max_top; ++l) {
        const size_t px = static_cast<size_t>(ctx->mw[l]) * ctx->mh[l];
        a.take(B.img[l], px);
        a.take(B.der[l], px * 2);  // dx, dy interleaved
      }
    a.take(ctx->d_ops, ctx->ops_cap);
    a.take(ctx->d_jobs, p.batch);
    a.take(ctx->d_pts, pts), a.take(ctx->d_fwd, pts), a.take(ctx->d_back, pts);
    a.take(ctx->d_status, pts);
    a.take(ctx->d_score, pixels * p.batch);
    a.take(ctx->d_keys, keys), a.take(ctx->d_sorted, keys);
    a.take(ctx->d_counts, p.batch);
    a.take(ctx->d_begin, p.batch), a.take(ctx->d_end, p.batch);
    a.take(ctx->d_sort_tmp, ctx->sort_tmp_bytes);
    a.take(ctx->d_desc, p.batch);
    a.take(ctx->d_existing, pts);
    a.take(ctx->d_occ, ctx->occ_stride * p.batch);
    a.take(ctx->d_out, out_bytes);
  };
  Arena dev;
  device_layout(dev);
  EGG_TRY(ctx->cuda(cudaMalloc(&ctx->dpool, dev.size()), "cudaMalloc (device pool)"));
  dev.bind(ctx->dpool);
  device_layout(dev);
  {
    std::vector<int> begin(static_cast<size_t>(p.batch));
    for (int i = 0; i < p.batch; ++i) begin[static_cast<size_t>(i)] = static_cast<int>(ctx->corner_cap) * i;
    EGG_TRY(ctx->cuda(cudaMemcpy(ctx->d_begin, begin.data(), sizeof(int) * begin.size(), cudaMemcpyHostToDevice), "upload segments"));
  }
  EGG_TRY(ctx->cuda(cudaFuncSetAttribute(k_select, cudaFuncAttributeMaxDynamicSharedMemorySize, kSelectSmem), "cudaFuncSetAttribute"));
  ctx->host_select = (p.options & EGOGEO_GPU_OPT_HOST_SELECT) != 0;
  ctx->thread_klt = (p.options & EGOGEO_GPU_OPT_THREAD_KLT) != 0;
  ctx->prof.on = (p.options & EGOGEO_GPU_OPT_PROFILE) != 0;

  auto host_layout = [&](Arena& a) {
    a.take(ctx->h_frames, pixels * slots);
    a.take(ctx->h_ops, ctx->ops_cap);
    a.take(ctx->h_jobs, p.batch);
    a.take(ctx->h_pts, pts), a.take(ctx->h_fwd, pts), a.take(ctx->h_back, pts);
    a.take(ctx->h_status, pts);
    a.take(ctx->h_counts, p.batch);
    a.take(ctx->h_desc, p.batch);
    a.take(ctx->h_existing, pts);
    a.take(ctx->h_out, out_bytes);
  };
  Arena host;
  host_layout(host);
  EGG_TRY(ctx->cuda(cudaHostAlloc(&ctx->hpool, host.size(), cudaHostAllocDefault), "cudaHostAlloc (pinned staging)"));
  host.bind(ctx->hpool);
  host_layout(host);
  ctx->ready = true;
  return EGOGEO_GPU_OK;
}

/// The FAST score plane of job 0 of the last detect call (the self-test reads it back).
bool read_scores(egogeo_gpu_context* ctx, std::vector<uint16_t>& out) {
  if (ctx->host) {
    out = ctx->host->scores(0);
    return true;
  }
  const int w = kSelfTestW, h = kSelfTestH;
  out.assign(static_cast<size_t>(w) * h, 0);
  if (ctx->cuda(cudaMemcpy2DAsync(out.data(), sizeof(uint16_t) * w, ctx->d_score, sizeof(uint16_t) * ctx->mw[0], sizeof(uint16_t) * w, h,
                                  cudaMemcpyDeviceToHost, ctx->stream),
                "download scores") != EGOGEO_GPU_OK)
    return false;
  return ctx->cuda(cudaStreamSynchronize(ctx->stream), "download scores") == EGOGEO_GPU_OK;
}

/// The self-test every context passes before it is used: "" or the one line saying what differed.
std::string selftest(const egogeo_gpu_params& p) {
  const egogeo_gpu_params q = selftest_params(p);
  std::unique_ptr<egogeo_gpu_context> inner(new (std::nothrow) egogeo_gpu_context());
  if (!inner) return "device self-test: out of host memory";
  struct Destroy {
    std::unique_ptr<egogeo_gpu_context>& c;
    ~Destroy() { egogeo_gpu_destroy(c.release()); }
  } destroy{inner};
  if (create_context(&q, inner.get()) != EGOGEO_GPU_OK) return "device self-test: " + inner->error;
  SelfTestRun got;
  const std::string e = selftest_run(inner.get(), got, read_scores);
  if (!e.empty()) return "device self-test: " + e;
  if (p.options & EGOGEO_GPU_OPT_SELFTEST_INJECT) {
    // The test hook: a failing device (one FAST score off by one).
    size_t i = 0;
    while (i + 1 < got.scores.size() && got.scores[i] == 0) ++i;
    got.scores[i] = static_cast<uint16_t>(got.scores[i] + 1);
  }
  return selftest_compare(selftest_reference(q), got);
}

}  // namespace

extern "C" {

int egogeo_gpu_create(const egogeo_gpu_params* params, egogeo_gpu_context** out) {
  if (!out) return EGOGEO_GPU_EINVAL;
  *out = nullptr;
  auto* ctx = new (std::nothrow) egogeo_gpu_context();
  if (!ctx) return EGOGEO_GPU_ENOMEM;
  *out = ctx;
  EGG_TRY(create_context(params, ctx));
  const std::string e = selftest(ctx->p);
  if (!e.empty()) {
    ctx->ready = false;
    return ctx->fail(EGOGEO_GPU_ESELFTEST, e);
  }
  return EGOGEO_GPU_OK;
}

int egogeo_gpu_push_frames(egogeo_gpu_context* ctx, const egogeo_gpu_frame* frames, int n) {
  if (!ctx) return EGOGEO_GPU_EINVAL;
  ctx->error.clear();
  if (!ctx->ready) return ctx->fail(EGOGEO_GPU_EINVAL, "push_frames: the context was not created successfully");
  const egogeo_gpu_params& p = ctx->p;
  const int most = p.batch * p.buffers;
  if (n < 0 || n > most || (n > 0 && !frames))
    return ctx->fail(EGOGEO_GPU_EINVAL, "push_frames: n must be in [0, batch x buffers = " + std::to_string(most) + "] with frames not NULL, got " + std::to_string(n));
  std::vector<int> seen(static_cast<size_t>(most), -1);
  for (int i = 0; i < n; ++i) {
    const egogeo_gpu_frame& f = frames[i];
    const std::string at = "push_frames: frame " + std::to_string(i) + ": ";
    if (!ctx->buffer(f.slot, f.buffer)) return ctx->fail(EGOGEO_GPU_EINVAL, at + "slot/buffer out of range");
    int& first = seen[static_cast<size_t>(f.slot) * p.buffers + f.buffer];
    if (first >= 0) return ctx->fail(EGOGEO_GPU_EINVAL, at + "same slot/buffer as frame " + std::to_string(first));
    first = i;
    if (!f.data) return ctx->fail(EGOGEO_GPU_EINVAL, at + "data is NULL");
    if (f.width < 32 || f.height < 32 || f.width > p.max_width || f.height > p.max_height)
      return ctx->fail(EGOGEO_GPU_EINVAL, at + std::to_string(f.width) + "x" + std::to_string(f.height) + " is not within 32x32 .. " +
                                              std::to_string(p.max_width) + "x" + std::to_string(p.max_height));
    if (f.stride < f.width) return ctx->fail(EGOGEO_GPU_EINVAL, at + "stride is below width");
  }
  if (ctx->host) {
    for (int i = 0; i < n; ++i) {
      Buffer& B = *ctx->buffer(frames[i].slot, frames[i].buffer);
      B.w = frames[i].width;
      B.h = frames[i].height;
      B.top = pyramid_top(B.w, B.h, p.levels, p.window);
    }
    ctx->host->push(frames, n);
    return EGOGEO_GPU_OK;
  }
  EGG_TRY(ctx->cuda(cudaSetDevice(p.device), "cudaSetDevice"));
  EGG_TRY(ctx->wait_staging());
  const size_t pixels = static_cast<size_t>(p.max_width) * p.max_height;
  size_t nops = 0;
  int max_top = 0;
  // Into pinned staging, then to the device: one copy per frame. Much to copy (one thread staged
  // 30 MB of a 64-frame call at about 4.5 GB/s, the largest step of a call) is staged by a few host
  // threads, and this thread queues each frame's upload as soon as it is staged, in frame order, so
  // the copy engine moves frame i while the next ones are staged.
  auto stage_one = [&](int i) {
    const egogeo_gpu_frame& f = frames[i];
    uint8_t* stage = ctx->h_frames + pixels * i;
    if (f.stride == f.width) std::memcpy(stage, f.data, static_cast<size_t>(f.width) * f.height);
    else
      for (int y = 0; y < f.height; ++y) std::memcpy(stage + static_cast<size_t>(y) * f.width, f.data + static_cast<size_t>(y) * f.stride, f.width);
  };
  size_t bytes = 0;
  for (int i = 0; i < n; ++i) bytes += static_cast<size_t>(frames[i].width) * frames[i].height;
  const int threads = std::min({n, 8, std::max(1, static_cast<int>(std::thread::hardware_concurrency())), static_cast<int>(bytes >> 21) + 1});
  ctx->prof.begin(kUpload, ctx->stream);
  const int rc = staged_in_order(n, threads, stage_one, [&](int i) {
    const egogeo_gpu_frame& f = frames[i];
    Buffer& B = *ctx->buffer(f.slot, f.buffer);
    B.w = f.width;
    B.h = f.height;
    B.top = pyramid_top(f.width, f.height, p.levels, p.window);
    max_top = std::max(max_top, B.top);
    return ctx->cuda(cudaMemcpy2DAsync(B.img[0], ctx->mw[0], ctx->h_frames + pixels * i, f.width, f.width, f.height, cudaMemcpyHostToDevice, ctx->stream),
                     "upload");
  });
  if (rc != EGOGEO_GPU_OK) return rc;
  // Ops: pyrDown per level (level-major, so each launch covers one level of every frame), then
  // Scharr for every level of every frame in one launch.
  std::vector<size_t> level_start(static_cast<size_t>(max_top) + 2, 0);
  for (int l = 1; l <= max_top; ++l) {
    level_start[l] = nops;
    for (int i = 0; i < n; ++i) {
      Buffer& B = *ctx->buffer(frames[i].slot, frames[i].buffer);
      if (l > B.top) continue;
      int ws[kMaxLevels + 1], hs[kMaxLevels + 1];
      level_sizes(B.w, B.h, B.top, ws, hs);
      ctx->h_ops[nops++] = PlaneOp{B.img[l - 1], B.img[l], ws[l - 1], hs[l - 1], ctx->mw[l - 1], ws[l], hs[l], ctx->mw[l], 0, nullptr, 0};
    }
  }
  level_start[static_cast<size_t>(max_top) + 1] = nops;
  const size_t scharr_start = nops;
  for (int i = 0; i < n; ++i) {
    Buffer& B = *ctx->buffer(frames[i].slot, frames[i].buffer);
    int ws[kMaxLevels + 1], hs[kMaxLevels + 1];
    level_sizes(B.w, B.h, B.top, ws, hs);
    for (int l = 0; l <= B.top; ++l) ctx->h_ops[nops++] = PlaneOp{B.img[l], B.der[l], ws[l], hs[l], ctx->mw[l], 0, 0, ctx->mw[l], 0, nullptr, 0};
  }
  if (nops > 0) EGG_TRY(ctx->cuda(cudaMemcpyAsync(ctx->d_ops, ctx->h_ops, sizeof(PlaneOp) * nops, cudaMemcpyHostToDevice, ctx->stream), "upload ops"));
  ctx->prof.end(ctx->stream);
  EGG_TRY(ctx->mark_staging());
  ctx->prof.begin(kPyramids, ctx->stream);
  const dim3 block(kBlock, kBlock);
  for (int l = 1; l <= max_top; ++l) {
    const unsigned cnt = static_cast<unsigned>(level_start[l + 1] - level_start[l]);
    if (cnt == 0) continue;
    const dim3 grid((ctx->mw[l] + kBlock - 1) / kBlock, (ctx->mh[l] + kBlock - 1) / kBlock, cnt);
    k_pyrdown<<<grid, block, 0, ctx->stream>>>(ctx->d_ops + level_start[l]);
  }
  if (nops > scharr_start) {
    const dim3 grid((ctx->mw[0] + kBlock - 1) / kBlock, (ctx->mh[0] + kBlock - 1) / kBlock, static_cast<unsigned>(nops - scharr_start));
    k_scharr<<<grid, block, 0, ctx->stream>>>(ctx->d_ops + scharr_start);
  }
  ctx->prof.end(ctx->stream);
  return ctx->cuda(cudaGetLastError(), "pyramid kernels");
}

int egogeo_gpu_track(egogeo_gpu_context* ctx, const egogeo_gpu_track_job* jobs, int n) {
  if (!ctx) return EGOGEO_GPU_EINVAL;
  ctx->error.clear();
  if (!ctx->ready) return ctx->fail(EGOGEO_GPU_EINVAL, "track: the context was not created successfully");
  const egogeo_gpu_params& p = ctx->p;
  if (n < 0 || n > p.batch || (n > 0 && !jobs)) return ctx->fail(EGOGEO_GPU_EINVAL, "track: n must be in [0, batch] with jobs not NULL");
  int max_n = 0;
  for (int i = 0; i < n; ++i) {
    const egogeo_gpu_track_job& j = jobs[i];
    const std::string at = "track: job " + std::to_string(i) + ": ";
    const Buffer* A = ctx->buffer(j.slot, j.from);
    const Buffer* B = ctx->buffer(j.slot, j.to);
    if (!A || !B) return ctx->fail(EGOGEO_GPU_EINVAL, at + "slot/buffer out of range");
    if (A->top < 0 || B->top < 0) return ctx->fail(EGOGEO_GPU_EINVAL, at + "a buffer holds no frame yet (push_frames first)");
    if (A->w != B->w || A->h != B->h) return ctx->fail(EGOGEO_GPU_EINVAL, at + "the two frames differ in size");
    if (j.n < 0 || j.n > p.max_points) return ctx->fail(EGOGEO_GPU_EINVAL, at + "n must be in [0, max_points]");
    if (j.n > 0 && (!j.pts || !j.fwd || !j.status)) return ctx->fail(EGOGEO_GPU_EINVAL, at + "pts, fwd and status must not be NULL");
    for (int k = 0; k < j.n; ++k) {
      const float x = j.pts[2 * k], y = j.pts[2 * k + 1];
      if (!(x > -1e6f && x < 1e6f && y > -1e6f && y < 1e6f)) return ctx->fail(EGOGEO_GPU_EINVAL, at + "point " + std::to_string(k) + " is not finite");
    }
    max_n = std::max(max_n, j.n);
  }
  if (ctx->host) {
    const std::string e = ctx->host->track(jobs, n);
    return e.empty() ? EGOGEO_GPU_OK : ctx->fail(EGOGEO_GPU_EINVAL, "track: " + e);
  }
  EGG_TRY(ctx->cuda(cudaSetDevice(p.device), "cudaSetDevice"));
  EGG_TRY(ctx->wait_staging());
  int total = 0;
  for (int i = 0; i < n; ++i) {
    const egogeo_gpu_track_job& j = jobs[i];
    const Buffer& A = *ctx->buffer(j.slot, j.from);
    const Buffer& B = *ctx->buffer(j.slot, j.to);
    TrackDesc& D = ctx->h_jobs[i];
    int ws[kMaxLevels + 1], hs[kMaxLevels + 1];
    level_sizes(A.w, A.h, A.top, ws, hs);
    for (int l = 0; l <= A.top; ++l) {
      D.from[l] = Level{A.img[l], A.der[l], ws[l], hs[l], ctx->mw[l], ctx->mw[l]};
      D.to[l] = Level{B.img[l], B.der[l], ws[l], hs[l], ctx->mw[l], ctx->mw[l]};
    }
    D.top = A.top;
    D.n = j.n;
    D.offset = total;
    D.w = A.w;
    D.h = A.h;
    for (int k = 0; k < j.n; ++k) ctx->h_pts[total + k] = make_float2(j.pts[2 * k], j.pts[2 * k + 1]);
    total += j.n;
  }
  if (total == 0) return EGOGEO_GPU_OK;
  ctx->prof.begin(kTrackUpload, ctx->stream);
  EGG_TRY(ctx->cuda(cudaMemcpyAsync(ctx->d_jobs, ctx->h_jobs, sizeof(TrackDesc) * n, cudaMemcpyHostToDevice, ctx->stream), "upload jobs"));
  EGG_TRY(ctx->cuda(cudaMemcpyAsync(ctx->d_pts, ctx->h_pts, sizeof(float2) * total, cudaMemcpyHostToDevice, ctx->stream), "upload points"));
  ctx->prof.end(ctx->stream);
  ctx->prof.begin(kTrack, ctx->stream);
  const float eps2 = p.epsilon * p.epsilon;
  const float fb2 = p.fb_threshold * p.fb_threshold;
  if (ctx->thread_klt) {
    const int threads = 64;
    k_track_thread<<<dim3((max_n + threads - 1) / threads, n), threads, 0, ctx->stream>>>(ctx->d_jobs, ctx->d_pts, ctx->d_fwd, ctx->d_back, ctx->d_status,
                                                                                         p.window, p.iterations, eps2, p.min_eig, fb2);
  } else {
    const size_t smem = sizeof(int16_t) * 3 * p.window * p.window * kTrackWarps;
    k_track<<<dim3((max_n + kTrackWarps - 1) / kTrackWarps, n), 32 * kTrackWarps, smem, ctx->stream>>>(
        ctx->d_jobs, ctx->d_pts, ctx->d_fwd, ctx->d_back, ctx->d_status, p.window, p.iterations, eps2, p.min_eig, fb2);
  }
  ctx->prof.end(ctx->stream);
  EGG_TRY(ctx->cuda(cudaGetLastError(), "track kernel"));
  ctx->prof.begin(kTrackDownload, ctx->stream);
  EGG_TRY(ctx->cuda(cudaMemcpyAsync(ctx->h_fwd, ctx->d_fwd, sizeof(float2) * total, cudaMemcpyDeviceToHost, ctx->stream), "download"));
  EGG_TRY(ctx->cuda(cudaMemcpyAsync(ctx->h_back, ctx->d_back, sizeof(float2) * total, cudaMemcpyDeviceToHost, ctx->stream), "download"));
  EGG_TRY(ctx->cuda(cudaMemcpyAsync(ctx->h_status, ctx->d_status, total, cudaMemcpyDeviceToHost, ctx->stream), "download"));
  ctx->prof.end(ctx->stream);
  EGG_TRY(ctx->mark_staging());
  EGG_TRY(ctx->cuda(cudaStreamSynchronize(ctx->stream), "track"));
  ctx->prof.settle();
  for (int i = 0; i < n; ++i) {
    const egogeo_gpu_track_job& j = jobs[i];
    const int o = ctx->h_jobs[i].offset;
    for (int k = 0; k < j.n; ++k) {
      j.fwd[2 * k] = ctx->h_fwd[o + k].x;
      j.fwd[2 * k + 1] = ctx->h_fwd[o + k].y;
      if (j.back) {
        j.back[2 * k] = ctx->h_back[o + k].x;
        j.back[2 * k + 1] = ctx->h_back[o + k].y;
      }
      j.status[k] = ctx->h_status[o + k];
    }
  }
  return EGOGEO_GPU_OK;
}

int egogeo_gpu_detect(egogeo_gpu_context* ctx, const egogeo_gpu_detect_job* jobs, int n) {
  if (!ctx) return EGOGEO_GPU_EINVAL;
  ctx->error.clear();
  if (!ctx->ready) return ctx->fail(EGOGEO_GPU_EINVAL, "detect: the context was not created successfully");
  const egogeo_gpu_params& p = ctx->p;
  if (n < 0 || n > p.batch || (n > 0 && !jobs)) return ctx->fail(EGOGEO_GPU_EINVAL, "detect: n must be in [0, batch] with jobs not NULL");
  for (int i = 0; i < n; ++i) {
    const Buffer* B = ctx->buffer(jobs[i].slot, jobs[i].buffer);
    if (!B) return ctx->fail(EGOGEO_GPU_EINVAL, "detect: job " + std::to_string(i) + ": slot/buffer out of range");
    if (B->top < 0) return ctx->fail(EGOGEO_GPU_EINVAL, "detect: job " + std::to_string(i) + ": the buffer holds no frame yet");
    if (jobs[i].max_features > 0 && jobs[i].n_existing > p.max_points)
      return ctx->fail(EGOGEO_GPU_EINVAL, "detect: job " + std::to_string(i) + ": n_existing must be at most max_points (" + std::to_string(p.max_points) + ")");
    const std::string e = check_detect_job(jobs[i], B->w, B->h);
    if (!e.empty()) return ctx->fail(EGOGEO_GPU_EINVAL, e + " (job " + std::to_string(i) + ")");
  }
  if (n == 0) return EGOGEO_GPU_OK;
  if (ctx->host) {
    ctx->host->detect(jobs, n);
    return EGOGEO_GPU_OK;
  }
  EGG_TRY(ctx->cuda(cudaSetDevice(p.device), "cudaSetDevice"));
  EGG_TRY(ctx->wait_staging());
  const size_t pixels = static_cast<size_t>(p.max_width) * p.max_height;
  const int cap = static_cast<int>(ctx->corner_cap);
  // Ops and descriptors, all in pinned staging: FAST and NMS per job, then its selection.
  int out_at = 0, existing_at = 0, max_cells = 1, max_occ = 0;
  for (int i = 0; i < n; ++i) {
    const egogeo_gpu_detect_job& j = jobs[i];
    const Buffer& B = *ctx->buffer(j.slot, j.buffer);
    uint16_t* score = ctx->d_score + pixels * i;
    ctx->h_ops[i] = PlaneOp{B.img[0], score, B.w, B.h, ctx->mw[0], B.w, B.h, ctx->mw[0], j.threshold, nullptr, 0};
    ctx->h_ops[n + i] = PlaneOp{reinterpret_cast<const uint8_t*>(score), ctx->d_keys + ctx->corner_cap * i, B.w, B.h, 0, B.w, B.h, ctx->mw[0], 0,
                                ctx->d_counts + i, cap};
    DetectDesc& D = ctx->h_desc[i];
    D = DetectDesc{};
    D.w = B.w;
    D.h = B.h;
    D.max_features = j.max_features;
    if (j.max_features == 0) {
      D.bound = std::min(j.capacity, cap);
    } else {
      D.cols = j.grid_cols;
      D.rows = j.grid_rows;
      D.cw = static_cast<float>(B.w) / j.grid_cols;
      D.ch = static_cast<float>(B.h) / j.grid_rows;
      D.cell = std::max(1, j.min_distance);
      D.ow = B.w / D.cell + 1;
      D.oh = B.h / D.cell + 1;
      D.quota = std::max(1, j.max_features / (j.grid_cols * j.grid_rows));
      D.n_existing = j.n_existing;
      D.existing_at = existing_at;
      for (int k = 0; k < j.n_existing; ++k) ctx->h_existing[existing_at + k] = make_float2(j.existing[2 * k], j.existing[2 * k + 1]);
      existing_at += j.n_existing;
      D.bound = std::max(0, std::min(j.max_features - j.n_existing, j.capacity));
      max_cells = std::max(max_cells, D.cols * D.rows);
      max_occ = std::max(max_occ, D.ow * D.oh);
    }
    D.out_at = out_at;
    out_at += D.bound;
  }
  const size_t smem_base = (sizeof(unsigned long long) + sizeof(int) + sizeof(unsigned)) * kChunk + sizeof(int) * static_cast<size_t>(max_cells);
  const bool occ_shared = smem_base + static_cast<size_t>(max_occ) <= static_cast<size_t>(kSelectSmem);
  for (int i = 0; i < n; ++i) ctx->h_desc[i].occ_shared = occ_shared ? 1 : 0;
  const size_t smem = smem_base + (occ_shared ? static_cast<size_t>(max_occ) : 0);
  EGG_TRY(ctx->cuda(cudaMemcpyAsync(ctx->d_ops, ctx->h_ops, sizeof(PlaneOp) * 2 * n, cudaMemcpyHostToDevice, ctx->stream), "upload ops"));
  EGG_TRY(ctx->cuda(cudaMemcpyAsync(ctx->d_desc, ctx->h_desc, sizeof(DetectDesc) * n, cudaMemcpyHostToDevice, ctx->stream), "upload jobs"));
  if (existing_at > 0)
    EGG_TRY(ctx->cuda(cudaMemcpyAsync(ctx->d_existing, ctx->h_existing, sizeof(float2) * existing_at, cudaMemcpyHostToDevice, ctx->stream), "upload tracks"));
  EGG_TRY(ctx->cuda(cudaMemsetAsync(ctx->d_counts, 0, sizeof(int) * n, ctx->stream), "memset"));
  const dim3 block(kBlock, kBlock), grid((ctx->mw[0] + kBlock - 1) / kBlock, (ctx->mh[0] + kBlock - 1) / kBlock, n);
  ctx->prof.begin(kFast, ctx->stream);
  k_fast<<<grid, block, 0, ctx->stream>>>(ctx->d_ops);
  ctx->prof.end(ctx->stream);
  ctx->prof.begin(kNms, ctx->stream);
  k_nms<<<grid, block, 0, ctx->stream>>>(ctx->d_ops + n);
  ctx->prof.end(ctx->stream);
  EGG_TRY(ctx->cuda(cudaGetLastError(), "FAST kernels"));
  if (ctx->host_select) return detect_host_select(ctx, jobs, n);
  ctx->prof.begin(kSort, ctx->stream);
  k_ends<<<(n + 127) / 128, 128, 0, ctx->stream>>>(ctx->d_counts, ctx->d_end, n, cap);
  size_t tmp = ctx->sort_tmp_bytes;
  EGG_TRY(ctx->cuda(cub::DeviceSegmentedRadixSort::SortKeys(ctx->d_sort_tmp, tmp, static_cast<const unsigned long long*>(ctx->d_keys), ctx->d_sorted,
                                                              static_cast<int>(ctx->corner_cap * n), n, ctx->d_begin, ctx->d_end, 0, kKeyBits, ctx->stream),
                    "sort corners"));
  ctx->prof.end(ctx->stream);
  ctx->prof.begin(kSelect, ctx->stream);
  int* header = reinterpret_cast<int*>(ctx->d_out);
  Corner* out = reinterpret_cast<Corner*>(ctx->d_out + ctx->out_header);
  k_select<<<n, kSelectThreads, smem, ctx->stream>>>(ctx->d_desc, ctx->d_sorted, ctx->d_counts, cap, header, out, ctx->d_existing, ctx->d_occ,
                                                     ctx->occ_stride);
  ctx->prof.end(ctx->stream);
  EGG_TRY(ctx->cuda(cudaGetLastError(), "selection kernel"));
  // One download for every job of the call: the header, then each job's corners at its offset.
  ctx->prof.begin(kDetectDownload, ctx->stream);
  EGG_TRY(ctx->cuda(cudaMemcpyAsync(ctx->h_out, ctx->d_out, ctx->out_header + sizeof(Corner) * static_cast<size_t>(out_at), cudaMemcpyDeviceToHost, ctx->stream),
                    "download corners"));
  ctx->prof.end(ctx->stream);
  EGG_TRY(ctx->mark_staging());
  EGG_TRY(ctx->cuda(cudaStreamSynchronize(ctx->stream), "detect"));
  ctx->prof.settle();
  const int* hh = reinterpret_cast<const int*>(ctx->h_out);
  const Corner* hc = reinterpret_cast<const Corner*>(ctx->h_out + ctx->out_header);
  for (int i = 0; i < n; ++i) {
    const egogeo_gpu_detect_job& j = jobs[i];
    const Corner* c = hc + ctx->h_desc[i].out_at;
    const int m = hh[2 * i];
    for (int k = 0; k < m; ++k) {
      j.out_xy[2 * k] = c[k].x;
      j.out_xy[2 * k + 1] = c[k].y;
      if (j.out_score) j.out_score[k] = c[k].score;
    }
    *j.count = m;
    if (j.found) *j.found = hh[2 * i + 1];
  }
  return EGOGEO_GPU_OK;
}

int egogeo_gpu_profile(const egogeo_gpu_context* ctx, char* buf, size_t len) {
  if (!ctx || !buf || len == 0) return EGOGEO_GPU_EINVAL;
  std::string j = std::string("{\"enabled\": ") + (ctx->prof.on ? "true" : "false");
  for (int k = 0; k < kStages && ctx->prof.on; ++k) {
    char item[128];
    std::snprintf(item, sizeof item, ", \"%s\": {\"ms\": %.4f, \"spans\": %ld}", kStageNames[k], ctx->prof.ms[k], ctx->prof.spans[k]);
    j += item;
  }
  j += "}";
  if (j.size() >= len) return EGOGEO_GPU_EINVAL;
  put_message(buf, len, j);
  return EGOGEO_GPU_OK;
}

}  // extern "C"
