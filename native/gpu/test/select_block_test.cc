// The device selects a detect job's corners with a block of 256 threads (select_core.h's
// select_job, run by k_select): the block rules corners out in parallel, compacts the rest with a
// block scan, and one thread scans them in order. Here 256 host threads play the block (sync() a
// barrier, the scan a barrier exchange), so the parallel ruling-out, the compaction across chunks
// of 1,024 keys and the lock-step control flow are checked on any machine: the corners must equal
// the host reference's sequential rule (finish_detect, via egogeo_gpu_reference_detect) one for
// one, over images with thousands of corners, ties in score, existing tracks, tight quotas and a
// full job. A thread that skipped a sync would leave the others waiting: ctest's timeout fails it.
#include "egogeo_gpu.h"
#include "select_core.h"
#include "test/host_threads.h"
#include "test/check.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace egogeo::gpu;

using egogeo::gpu::test::check;

namespace {

/// The threads of a block: select_core.h's Block.
struct HostBlock {
  test::Barrier* barrier;
  std::vector<int>* slots;
  int t;
  int tid() const { return t; }
  int size() const { return barrier->size(); }
  void sync() const { barrier->wait(); }
  int exclusive_sum(int v, int& total) const {
    (*slots)[static_cast<size_t>(t)] = v;
    barrier->wait();
    int before = 0;
    total = 0;
    for (int i = 0; i < size(); ++i) {
      if (i < t) before += (*slots)[static_cast<size_t>(i)];
      total += (*slots)[static_cast<size_t>(i)];
    }
    barrier->wait();  // nobody posts the next value before everyone has read this one
    return before;
  }
  void add(int* p, int v) const { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
  void set(uint8_t* p) const { __atomic_store_n(p, static_cast<uint8_t>(1), __ATOMIC_RELAXED); }
};

/// Grey noise over smooth shading (thousands of FAST corners); `levels` grey values only gives
/// many equal scores, so raster order decides among them.
std::vector<uint8_t> image(int w, int h, unsigned seed, int levels) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> img(static_cast<size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int q = static_cast<int>(rng() % static_cast<unsigned>(levels)) * (255 / (levels - 1));
      img[static_cast<size_t>(y) * w + x] = static_cast<uint8_t>((q * 3 + (x + 2 * y) % 256) / 4);
    }
  return img;
}

struct Selected {
  int count = 0, found = 0;
  std::vector<float> xy, score;
};

/// The host reference: FAST, then finish_detect's ranking and selection.
Selected reference(const std::vector<uint8_t>& img, int w, int h, egogeo_gpu_detect_job j, int capacity) {
  Selected s;
  s.xy.assign(2 * static_cast<size_t>(capacity), -1.f);
  s.score.assign(static_cast<size_t>(capacity), -1.f);
  j.capacity = capacity;
  j.out_xy = s.xy.data();
  j.out_score = s.score.data();
  j.count = &s.count;
  j.found = &s.found;
  char err[256] = "";
  if (egogeo_gpu_reference_detect(img.data(), w, h, &j, err, sizeof err) != EGOGEO_GPU_OK) std::printf("reference_detect: %s\n", err);
  s.xy.resize(2 * static_cast<size_t>(s.count));
  s.score.resize(static_cast<size_t>(s.count));
  return s;
}

/// The same job through select_job on 256 host threads, from the job's FAST corners as sort keys
/// (the geometry as egogeo_gpu_detect sets it up for the kernel).
Selected block_select(const std::vector<unsigned long long>& keys, int w, int h, const egogeo_gpu_detect_job& j) {
  DetectDesc D{};
  D.w = w;
  D.h = h;
  D.max_features = j.max_features;
  if (j.max_features == 0) {
    D.bound = j.capacity;
  } else {
    D.cols = j.grid_cols;
    D.rows = j.grid_rows;
    D.cw = static_cast<float>(w) / j.grid_cols;
    D.ch = static_cast<float>(h) / j.grid_rows;
    D.cell = std::max(1, j.min_distance);
    D.ow = w / D.cell + 1;
    D.oh = h / D.cell + 1;
    D.quota = std::max(1, j.max_features / (j.grid_cols * j.grid_rows));
    D.n_existing = j.n_existing;
    D.bound = std::max(0, std::min(j.max_features - j.n_existing, j.capacity));
  }
  std::vector<unsigned long long> chunk(kChunk);
  std::vector<int> live_bucket(kChunk), per_bucket(static_cast<size_t>(std::max(1, D.cols * D.rows)));
  std::vector<unsigned> live_cell(kChunk);
  std::vector<uint8_t> occ(static_cast<size_t>(std::max(1, D.ow * D.oh)), 7);  // select_job clears it
  int taken = -1, done = -1;
  const SelectShared S{chunk.data(), live_bucket.data(), live_cell.data(), per_bucket.data(), occ.data(), &taken, &done};
  std::vector<Corner> out(static_cast<size_t>(std::max(0, D.bound)) + 1, Corner{9999, 9999, 9999, 0});
  int header[2] = {-1, -1};
  test::Barrier barrier(kSelectThreads);
  std::vector<int> slots(kSelectThreads);
  test::run_threads(kSelectThreads, [&](int t) {
    select_job(HostBlock{&barrier, &slots, t}, D, keys.data(), static_cast<int>(keys.size()), j.existing, out.data(), S, header);
  });
  Selected s;
  s.count = header[0];
  s.found = header[1];
  for (int k = 0; k < std::max(0, s.count); ++k) {
    s.xy.push_back(out[static_cast<size_t>(k)].x);
    s.xy.push_back(out[static_cast<size_t>(k)].y);
    s.score.push_back(out[static_cast<size_t>(k)].score);
  }
  return s;
}

struct Case {
  const char* name;
  int w, h, levels, threshold, max_features, cols, rows, min_distance, n_existing, capacity;
  int min_count;  // what the case is for: at least this many taken (more than a chunk: the count carries over)
};

}  // namespace

int main() {
  const Case cases[] = {
      // The tracker's kind of job: a few hundred corners over a grid, existing tracks first.
      {"tracker-like, 120 existing tracks", 640, 480, 256, 20, 600, 8, 6, 10, 120, 2048, 400},
      // Quota and distance barely bind: the job runs through many chunks, and the scan's count
      // carries from one chunk to the next until the capacity stops it.
      {"min_distance 1, one cell, capacity 3000", 320, 240, 256, 15, 1 << 20, 1, 1, 1, 0, 3000, 3000},
      // A quota of one per cell on a 64 x 64 grid: most corners are ruled out by a full cell.
      {"quota 1 on 64 x 64 cells", 480, 360, 256, 20, 64 * 64, 64, 64, 3, 40, 8192, 2 * kChunk},
      // Four grey levels: scores tie by the thousand, raster order decides.
      {"ties in score, 4 grey levels", 400, 300, 4, 30, 900, 5, 4, 6, 0, 4096, 500},
      // More existing tracks than max_features: nothing is taken.
      {"full before it starts", 320, 240, 256, 20, 50, 4, 3, 8, 60, 512, 0},
      // Every corner, strongest first, cut by capacity and not.
      {"every corner, capacity 700", 320, 240, 256, 20, 0, 0, 0, 0, 0, 700, 700},
      {"every corner", 200, 150, 256, 25, 0, 0, 0, 0, 0, 1 << 16, 2 * kChunk},
  };
  unsigned seed = 11;
  for (const Case& c : cases) {
    const std::vector<uint8_t> img = image(c.w, c.h, seed++, c.levels);
    // Existing tracks anywhere in the frame, borders included.
    std::mt19937 rng(seed * 7);
    std::vector<float> existing;
    for (int i = 0; i < c.n_existing; ++i) {
      existing.push_back(static_cast<float>(rng() % static_cast<unsigned>(c.w * 8)) / 8.f);
      existing.push_back(static_cast<float>(rng() % static_cast<unsigned>(c.h * 8)) / 8.f);
    }
    egogeo_gpu_detect_job j{};
    j.threshold = c.threshold;
    j.max_features = c.max_features;
    j.grid_cols = c.cols;
    j.grid_rows = c.rows;
    j.min_distance = c.min_distance;
    j.n_existing = c.n_existing;
    j.existing = existing.empty() ? nullptr : existing.data();
    j.capacity = c.capacity;
    // FAST's corners, strongest first, as the device's sort leaves its keys.
    egogeo_gpu_detect_job all = j;
    all.max_features = 0;
    all.n_existing = 0;
    all.existing = nullptr;
    const Selected raw = reference(img, c.w, c.h, all, c.w * c.h);
    std::vector<unsigned long long> keys;
    for (int k = 0; k < raw.count; ++k)
      keys.push_back(corner_key(static_cast<int>(raw.xy[2 * static_cast<size_t>(k)]), static_cast<int>(raw.xy[2 * static_cast<size_t>(k) + 1]),
                                static_cast<int>(raw.score[static_cast<size_t>(k)])));
    const bool sorted = std::is_sorted(keys.begin(), keys.end()) && std::adjacent_find(keys.begin(), keys.end()) == keys.end();
    const Selected want = reference(img, c.w, c.h, j, c.capacity);
    const Selected got = block_select(keys, c.w, c.h, j);
    const bool same = got.count == want.count && got.found == want.found && got.xy == want.xy && got.score == want.score;
    size_t first = 0;
    while (first < std::min(got.xy.size(), want.xy.size()) && got.xy[first] == want.xy[first]) ++first;
    std::string what = std::string(c.name) + ": " + std::to_string(want.count) + " of " + std::to_string(want.found) + " corners (" +
                       std::to_string((want.found + kChunk - 1) / kChunk) + " chunks)";
    if (!sorted) what += ": the reference's order is not the sort keys' order";
    if (!same)
      what += ": the block took " + std::to_string(got.count) + " of " + std::to_string(got.found) + ", first difference at corner " + std::to_string(first / 2);
    if (want.count < c.min_count) what += ": the case takes fewer than the " + std::to_string(c.min_count) + " corners it is for";
    check(sorted && same && want.count >= c.min_count, what);
  }
  return egogeo::gpu::test::report();
}
