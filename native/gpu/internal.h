// Host-side pieces shared by the CUDA context (context.cu) and the host reference (host.cc):
// argument checks, pyramid geometry, and the corner ranking and bucketing of Tracker::detect.
#pragma once

#include "egogeo_gpu.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace egogeo::gpu {

constexpr int kMaxLevels = 8;   // OpenCV maxLevel accepted here (the addon allows 0..8)
constexpr int kMaxWindow = 31;  // the per-thread KLT patch lives in local memory: 3 * 31 * 31 shorts
constexpr int kMaxSide = 1 << 15;

/// One FAST corner as the detection kernels emit it.
struct Corner {
  uint16_t x, y;
  uint16_t score, pad;
};

/// "" when p is usable, else what is wrong with it.
std::string check_params(const egogeo_gpu_params& p);

/// The top level buildOpticalFlowPyramid builds for a w x h frame: it stops early once the next
/// level would be no larger than the window.
int pyramid_top(int w, int h, int levels, int window);

/// Width and height of each level 0..top (OpenCV: (w + 1) / 2 per level).
void level_sizes(int w, int h, int top, int* ws, int* hs);

/// "" when the detect job's fields are usable (slot/buffer are checked by the caller).
std::string check_detect_job(const egogeo_gpu_detect_job& j, int width, int height);

/// Strongest first, ties in raster order (deterministic; OpenCV's order of ties is unspecified),
/// then Tracker::detect's bucketing into the job's outputs.
void finish_detect(std::vector<Corner>& corners, int width, int height, const egogeo_gpu_detect_job& j);

/// Copies msg into buf (NUL-terminated, truncated) when buf is not NULL.
void put_message(char* buf, size_t len, const std::string& msg);

/// FAST scores of a w x h frame (pitch bytes per row) at threshold into score (w * h, rows and
/// columns 0..2 and n-3..n-1 zero), then the strict 3x3 maxima in raster order.
void host_fast(const uint8_t* img, int w, int h, int pitch, int threshold, std::vector<uint16_t>& score, std::vector<Corner>& corners);

/// The host reference behind the batched interface (EGOGEO_GPU_REFERENCE=1): one host pyramid per
/// (slot, buffer); the same arithmetic as the kernels (klt_core.h), run on the CPU.
class HostBackend {
 public:
  HostBackend(const egogeo_gpu_params& p);
  ~HostBackend();
  /// Frames already checked by the caller; (slot, buffer) index = slot * buffers + buffer.
  void push(const egogeo_gpu_frame* frames, int n);
  /// Jobs already checked (buffers hold frames of one size). Returns "" or the failure.
  std::string track(const egogeo_gpu_track_job* jobs, int n);
  void detect(const egogeo_gpu_detect_job* jobs, int n);
  /// The FAST score plane of job `job` of the last detect call (w x h, row-major).
  const std::vector<uint16_t>& scores(int job) const;

 private:
  struct Impl;
  Impl* m;
};

/// stage(i) for every i in [0, n) on up to `threads` host threads, and consume(i) on the calling
/// thread in order 0..n-1, each as soon as stage(i) is done, so consume's work (queuing a frame's
/// upload) overlaps the later stages. Returns the first non-zero consume(i) and consumes no more;
/// every stage started finishes before it returns. With threads <= 1, or when no thread can be had,
/// stage and consume alternate on the calling thread.
template <class Stage, class Consume>
int staged_in_order(int n, int threads, Stage stage, Consume consume) {
  std::unique_ptr<std::atomic<bool>[]> done(new std::atomic<bool>[static_cast<size_t>(n > 0 ? n : 1)]);
  for (int i = 0; i < n; ++i) done[i].store(false, std::memory_order_relaxed);
  std::vector<std::thread> pool;
  bool helpers = false;
  if (threads > 1 && n > 1) {
    try {
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          for (int i = t; i < n; i += threads) {
            stage(i);
            done[i].store(true, std::memory_order_release);
          }
        });
      helpers = true;
    } catch (...) {  // the threads started finish their frames; this thread stages them all again
      for (std::thread& th : pool) th.join();
      pool.clear();
    }
  }
  int rc = 0;
  for (int i = 0; i < n && rc == 0; ++i) {
    if (helpers)
      while (!done[i].load(std::memory_order_acquire)) std::this_thread::yield();
    else
      stage(i);
    rc = consume(i);
  }
  for (std::thread& th : pool) th.join();
  return rc;
}

/// "1" in the environment variable `name` (EGOGEO_GPU_REFERENCE, EGOGEO_GPU_SELFTEST_INJECT).
bool env_flag(const char* name);

/// The self-test that egogeo_gpu_create runs on every context: a built-in deterministic textured
/// pair (kSelfTestW x kSelfTestH), pushed as four frames into two slots of two buffers, detected
/// (raw FAST with scores, and the bucketed selection with existing tracks) and tracked both ways.
/// What a backend (the device or the host reference) answered:
struct SelfTestRun {
  std::vector<uint16_t> scores;        // FAST score plane of detect job 0
  std::vector<float> xy[2], score[2];  // corners of detect jobs 0 (raw) and 1 (selection)
  int count[2] = {0, 0}, found[2] = {0, 0};
  std::vector<float> fwd[2], back[2];  // track jobs 0 and 1
  std::vector<uint8_t> status[2];
};
constexpr int kSelfTestW = 160, kSelfTestH = 120, kSelfTestThreshold = 12, kSelfTestPoints = 48, kSelfTestCapacity = 4096;

/// The inputs: frame a, frame b (a shifted by a sub-pixel amount, w * h each), the track points
/// (2 * kSelfTestPoints) and the existing tracks of detect job 1.
void selftest_inputs(std::vector<uint8_t>& a, std::vector<uint8_t>& b, std::vector<float>& pts, std::vector<float>& existing);

/// Runs the self-test through a context's entry points (push 4 frames, detect 2 jobs, track 2
/// jobs): `ctx` must be a context of kSelfTestW x kSelfTestH, batch >= 2, buffers >= 2,
/// max_points >= kSelfTestPoints. scores reads job 0's score plane back. "" or the failure.
std::string selftest_run(egogeo_gpu_context* ctx, SelfTestRun& out, bool (*scores)(egogeo_gpu_context*, std::vector<uint16_t>&));

/// The host reference's answers for the same inputs and tracking parameters.
SelfTestRun selftest_reference(const egogeo_gpu_params& p);

/// "" when `got` equals `want` (scores and corners bit for bit, tracks within 1e-3 px with the same
/// status), else one line saying the first thing that differs and how much differs.
std::string selftest_compare(const SelfTestRun& want, const SelfTestRun& got);

/// Parameters of the inner self-test context of a context with parameters p.
egogeo_gpu_params selftest_params(const egogeo_gpu_params& p);

}  // namespace egogeo::gpu
