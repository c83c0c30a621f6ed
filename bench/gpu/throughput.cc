// Detection + tracking throughput of libegogeo_gpu as a C++ caller (the engine) sees it, without
// Python's ctypes in the loop: the loop of bench/gpu/harness.py's throughput step. `batch` clips at
// a time; per time step one push of their frames, one track call (the previous frame's corners
// forward and back) and one detect call (FAST, then the strongest `max-features` with the grid
// quota) for all of them. A warm-up pass, then the timed pass. Prints one JSON object.
//
//   egogeo_gpu_bench --frames F.u8 --width 1241 --height 376 --count 120 --clips 256 --length 10 --batch 64
//   egogeo_gpu_bench --synthetic --width 160 --height 120 --clips 3 --length 3 --batch 2
//
// F.u8: `count` grey frames of width x height bytes each, back to back (harness.py writes it);
// clip c's frame t is frame (3c + t) mod count, as in the harness. --synthetic makes moving
// texture instead. --contexts N: N contexts of `batch` clips, each on its own host thread (one's
// copies and host work overlap another's kernels). EGOGEO_GPU_PROFILE=1 adds the device time per
// stage (egogeo_gpu_profile, context 0).
#include "egogeo_gpu.h"
#include "options_env.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "egogeo_gpu_bench: %s\n", msg.c_str());
  std::exit(2);
}

struct Args {
  std::string frames;
  bool synthetic = false;
  int width = 0, height = 0, count = 0, clips = 64, length = 10, batch = 32, levels = 3, max_points = 500, threshold = 12, max_features = 500,
      grid_cols = 10, grid_rows = 4, min_distance = 8, contexts = 1;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--synthetic") {
      a.synthetic = true;
      continue;
    }
    if (i + 1 >= argc) die(k + " needs a value");
    const char* v = argv[++i];
    auto num = [&](int lo, int hi) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (!*v || *end || n < lo || n > hi) die(k + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + v + "'");
      return static_cast<int>(n);
    };
    if (k == "--frames") a.frames = v;
    else if (k == "--width") a.width = num(32, 32768);
    else if (k == "--height") a.height = num(32, 32768);
    else if (k == "--count") a.count = num(1, 1 << 20);
    else if (k == "--clips") a.clips = num(1, 1 << 20);
    else if (k == "--length") a.length = num(2, 10000);
    else if (k == "--batch") a.batch = num(1, 4096);
    else if (k == "--levels") a.levels = num(0, 8);
    else if (k == "--max-points") a.max_points = num(1, 1 << 20);
    else if (k == "--threshold") a.threshold = num(1, 255);
    else if (k == "--max-features") a.max_features = num(1, 1 << 20);
    else if (k == "--grid-cols") a.grid_cols = num(1, 64);
    else if (k == "--grid-rows") a.grid_rows = num(1, 64);
    else if (k == "--min-distance") a.min_distance = num(1, 100);
    else if (k == "--contexts") a.contexts = num(1, 16);
    else die("unknown option " + k);
  }
  if (!a.width || !a.height) die("--width and --height are required");
  if (a.synthetic == !a.frames.empty()) die("give --frames FILE (with --count) or --synthetic");
  if (!a.synthetic && !a.count) die("--frames needs --count");
  return a;
}

std::vector<unsigned char> load(const Args& a) {
  const size_t bytes = static_cast<size_t>(a.width) * a.height * a.count;
  std::vector<unsigned char> data(bytes);
  std::ifstream f(a.frames, std::ios::binary);
  if (!f) die(a.frames + ": cannot be read");
  f.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes));
  if (static_cast<size_t>(f.gcount()) != bytes || f.peek() != std::char_traits<char>::eof())
    die(a.frames + ": expected " + std::to_string(a.count) + " frames of " + std::to_string(a.width) + "x" + std::to_string(a.height) + " bytes, the size differs");
  return data;
}

/// Moving texture with sharp blocks: corners to find and motion to track.
std::vector<unsigned char> synthetic(Args& a) {
  a.count = 8;
  std::vector<unsigned char> data(static_cast<size_t>(a.width) * a.height * a.count);
  for (int f = 0; f < a.count; ++f)
    for (int y = 0; y < a.height; ++y)
      for (int x = 0; x < a.width; ++x) {
        const double u = x + 1.5 * f, v = y - 0.5 * f;
        const double s = std::sin(0.11 * u) * std::cos(0.07 * v) + 0.5 * std::sin(0.23 * u + 0.13 * v);
        const int blk = ((static_cast<int>(std::floor(u / 9)) * 7 + static_cast<int>(std::floor(v / 9)) * 13) % 5) * 20;
        data[(static_cast<size_t>(f) * a.height + y) * a.width + x] = static_cast<unsigned char>(std::lround(std::fmin(255.0, std::fmax(0.0, 90 + 30 * s + blk))));
      }
  return data;
}

/// One context and its caller's buffers: runs the groups of `batch` clips given to it.
struct Runner {
  const Args& a;
  const std::vector<unsigned char>& frames;
  egogeo_gpu_context* ctx = nullptr;
  std::vector<std::vector<float>> pts, fwd, back, corners;
  std::vector<std::vector<unsigned char>> status;
  std::vector<int> count, found;
  std::vector<egogeo_gpu_frame> fr;
  std::vector<egogeo_gpu_track_job> tj;
  std::vector<egogeo_gpu_detect_job> dj;
  double ms_push = 0, ms_track = 0, ms_detect = 0;
  long tracked = 0, kept = 0, calls = 0;
  std::string error;

  Runner(const Args& args, const std::vector<unsigned char>& f) : a(args), frames(f) {
    const size_t B = static_cast<size_t>(a.batch);
    pts.resize(B);
    fwd.resize(B);
    back.resize(B);
    status.resize(B);
    corners.assign(B, std::vector<float>(2 * static_cast<size_t>(a.max_features)));
    count.resize(B);
    found.resize(B);
    fr.resize(B);
    tj.resize(B);
    dj.resize(B);
  }
  bool ok(int rc, const char* what) {
    if (rc != EGOGEO_GPU_OK && error.empty()) error = std::string(what) + ": " + egogeo_gpu_last_error(ctx);
    return rc == EGOGEO_GPU_OK;
  }
  /// Groups first, first + step, ... of `batch` clips each.
  void pass(int first, int step) {
    using clock = std::chrono::steady_clock;
    auto ms_since = [](clock::time_point t0) { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); };
    ms_push = ms_track = ms_detect = 0;
    tracked = kept = calls = 0;
    const size_t plane = static_cast<size_t>(a.width) * a.height;
    const int B = a.batch, M = a.max_features;
    for (int at = first * B; at < a.clips; at += step * B) {
      const int n = std::min(B, a.clips - at);
      for (auto& v : pts) v.clear();
      for (int t = 0; t < a.length; ++t, ++calls) {
        auto t0 = clock::now();
        for (int i = 0; i < n; ++i) {
          const unsigned char* img = frames.data() + plane * static_cast<size_t>(((at + i) * 3 + t) % a.count);
          fr[static_cast<size_t>(i)] = egogeo_gpu_frame{i, t % 2, img, a.width, a.height, a.width};
        }
        if (!ok(egogeo_gpu_push_frames(ctx, fr.data(), n), "push_frames")) return;
        ms_push += ms_since(t0);
        t0 = clock::now();
        if (t > 0) {
          for (int i = 0; i < n; ++i) {
            const size_t k = static_cast<size_t>(i), m = pts[k].size() / 2;
            fwd[k].resize(2 * m);
            back[k].resize(2 * m);
            status[k].resize(m);
            tj[k] = egogeo_gpu_track_job{i, (t - 1) % 2, t % 2, static_cast<int>(m), pts[k].data(), fwd[k].data(), back[k].data(), status[k].data()};
          }
          if (!ok(egogeo_gpu_track(ctx, tj.data(), n), "track")) return;
          for (int i = 0; i < n; ++i) {
            tracked += static_cast<long>(status[static_cast<size_t>(i)].size());
            for (unsigned char s : status[static_cast<size_t>(i)]) kept += s == EGOGEO_GPU_KEEP;
          }
        }
        ms_track += ms_since(t0);
        t0 = clock::now();
        for (int i = 0; i < n; ++i) {
          const size_t k = static_cast<size_t>(i);
          dj[k] = egogeo_gpu_detect_job{i, t % 2, a.threshold, M, a.grid_cols, a.grid_rows, a.min_distance, 0, nullptr, M, corners[k].data(), nullptr,
                                        &count[k], &found[k]};
        }
        if (!ok(egogeo_gpu_detect(ctx, dj.data(), n), "detect")) return;
        for (int i = 0; i < n; ++i) {
          const size_t k = static_cast<size_t>(i);
          pts[k].assign(corners[k].begin(), corners[k].begin() + 2 * count[k]);
        }
        ms_detect += ms_since(t0);
      }
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  const std::vector<unsigned char> frames = a.synthetic ? synthetic(a) : load(a);
  egogeo_gpu_params p;
  egogeo_gpu_default_params(&p);
  p.options = egogeo::gpu::options_from_env();
  p.max_width = a.width;
  p.max_height = a.height;
  p.levels = a.levels;
  p.batch = a.batch;
  p.max_points = a.max_points;
  p.buffers = 3;
  std::vector<std::unique_ptr<Runner>> runners;
  for (int c = 0; c < a.contexts; ++c) {
    runners.emplace_back(new Runner(a, frames));
    Runner& r = *runners.back();
    if (egogeo_gpu_create(&p, &r.ctx) != EGOGEO_GPU_OK) die(std::string("create: ") + egogeo_gpu_last_error(r.ctx));
  }
  char device[256] = "";
  egogeo_gpu_device_name(p.device, device, sizeof device);
  // Each context on its own host thread, the groups of clips dealt out in turn.
  auto pass = [&] {
    std::vector<std::thread> threads;
    for (int c = 0; c < a.contexts; ++c) threads.emplace_back([&, c] { runners[static_cast<size_t>(c)]->pass(c, a.contexts); });
    for (std::thread& t : threads) t.join();
    for (const auto& r : runners)
      if (!r->error.empty()) die(r->error);
  };
  pass();  // warm-up: first launches, page-in
  const auto t0 = std::chrono::steady_clock::now();
  pass();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double ms_push = 0, ms_track = 0, ms_detect = 0;
  long calls = 0, tracked = 0, kept = 0;
  for (const auto& r : runners) {
    ms_push += r->ms_push;
    ms_track += r->ms_track;
    ms_detect += r->ms_detect;
    calls += r->calls;
    tracked += r->tracked;
    kept += r->kept;
  }
  calls = std::max(1L, calls);
  const double frames_n = static_cast<double>(a.clips) * a.length;
  char prof[2048] = "{}";
  egogeo_gpu_profile(runners[0]->ctx, prof, sizeof prof);
  const char* env_ref = std::getenv("EGOGEO_GPU_REFERENCE");
  const bool reference = env_ref && std::strcmp(env_ref, "1") == 0;
  const char* env_klt = std::getenv("EGOGEO_GPU_THREAD_KLT");
  const char* env_sel = std::getenv("EGOGEO_GPU_HOST_SELECT");
  std::printf(
      "{\"device\": \"%s\", \"width\": %d, \"height\": %d, \"clips\": %d, \"frames_per_clip\": %d, \"batch\": %d, \"contexts\": %d, \"max_features\": %d, "
      "\"klt\": \"%s\", \"selection\": \"%s\", \"frames\": %.0f, \"seconds\": %.6f, \"fps\": %.1f, "
      "\"ms_per_call\": {\"push\": %.4f, \"track\": %.4f, \"detect\": %.4f}, \"tracks\": %ld, \"kept\": %ld, "
      "\"profile_both_passes_context_0\": %s}\n",
      device, a.width, a.height, a.clips, a.length, a.batch, a.contexts, a.max_features,
      reference ? "host reference" : env_klt && std::strcmp(env_klt, "1") == 0 ? "thread per point" : "warp per point",
      reference || (env_sel && std::strcmp(env_sel, "1") == 0) ? "host" : "device", frames_n, seconds, frames_n / seconds, ms_push / calls, ms_track / calls,
      ms_detect / calls, tracked, kept, prof);
  for (const auto& r : runners) egogeo_gpu_destroy(r->ctx);
  return 0;
}
