// The device's selection of one detect job (k_select in context.cu), written over a block of
// threads so that the same code runs on the device (a CUDA block) and in a test on host threads
// (test/select_block_test.cc), where it must equal the host reference's sequential rule
// (finish_detect in host.cc, Tracker::detect's) corner for corner.
#pragma once

#include "internal.h"
#include "klt_core.h"  // EGG_HD

namespace egogeo::gpu {

/// One detect job as the selection sees it (Tracker::detect's rule; geometry set on the host).
struct DetectDesc {
  int w, h;
  int max_features;  // 0: every corner, strongest first
  int cols, rows, cell, quota, ow, oh;
  float cw, ch;      // cell size of the grid: float(w) / cols, float(h) / rows (rounded on the host)
  int n_existing, existing_at;
  int out_at, bound;  // where its corners go in the output area, and at most how many
  int occ_shared;     // the occupancy grid fits in shared memory (for every job of the launch)
};

constexpr int kSelectThreads = 256;
constexpr int kChunk = 1024;  // sorted keys staged in shared memory at a time
constexpr int kPerThread = kChunk / kSelectThreads;
/// Sort key of a corner: strongest first (score <= 254 in bits 32..39, inverted), then raster order.
constexpr int kKeyBits = 40;

EGG_HD unsigned long long corner_key(int x, int y, int score) {
  return (static_cast<unsigned long long>(255 - score) << 32) | (static_cast<unsigned long long>(y) << 16) | static_cast<unsigned long long>(x);
}
EGG_HD Corner key_corner(unsigned long long k) {
  return Corner{static_cast<uint16_t>(k & 0xFFFF), static_cast<uint16_t>((k >> 16) & 0xFFFF), static_cast<uint16_t>(255 - static_cast<int>((k >> 32) & 0xFF)), 0};
}

/// The block's shared state of one selection (shared memory on the device; the occupancy grid in
/// global memory when it does not fit).
struct SelectShared {
  unsigned long long* chunk;  // kChunk keys
  int* live_bucket;           // kChunk
  unsigned* live_cell;        // kChunk
  int* per_bucket;            // cols * rows
  uint8_t* occ;               // ow * oh
  int* taken;                 // corners written so far
  int* done;                  // the job is full
};

/// Selection of one job by the threads of `blk` (tid(), size() == kSelectThreads, sync(),
/// exclusive_sum(v, total), add(int*, v), set(uint8_t*): every thread calls this with the same
/// arguments, and reaches every sync). K: the job's `found` keys sorted ascending (strongest
/// first, raster order among equals); existing: x, y pairs. Writes O[0..count) and header[0] =
/// count, header[1] = found. The scan is sequential (its order decides), on thread 0, over the
/// corners of each chunk of keys that the block has not already ruled out in parallel.
template <class Block>
EGG_HD void select_job(const Block& blk, const DetectDesc& D, const unsigned long long* K, int found, const float* existing, Corner* O,
                       const SelectShared& S, int* header) {
  const int t = blk.tid(), nt = blk.size();
  if (D.max_features == 0) {
    const int m = found < D.bound ? found : D.bound;
    for (int k = t; k < m; k += nt) O[k] = key_corner(K[k]);
    if (t == 0) {
      header[0] = m;
      header[1] = found;
    }
    return;
  }
  const int nb = D.cols * D.rows, nocc = D.ow * D.oh;
  for (int i = t; i < nocc; i += nt) S.occ[i] = 0;
  for (int i = t; i < nb; i += nt) S.per_bucket[i] = 0;
  blk.sync();
  auto bucket_of = [&](float px, float py) {
    const int bx = static_cast<int>(px / D.cw), by = static_cast<int>(py / D.ch);
    return (by < D.rows - 1 ? by : D.rows - 1) * D.cols + (bx < D.cols - 1 ? bx : D.cols - 1);
  };
  // Existing tracks first: their occupancy (3x3 min_distance cells) and per-cell counts.
  for (int i = t; i < D.n_existing; i += nt) {
    const float px = existing[2 * i], py = existing[2 * i + 1];
    const int cx = static_cast<int>(px) / D.cell, cy = static_cast<int>(py) / D.cell;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int x = cx + dx, y = cy + dy;
        if (x >= 0 && y >= 0 && x < D.ow && y < D.oh) blk.set(&S.occ[y * D.ow + x]);
      }
    blk.add(&S.per_bucket[bucket_of(px, py)], 1);
  }
  if (t == 0) {
    *S.taken = 0;
    *S.done = D.bound <= 0;
  }
  blk.sync();
  const float border = 4.f, xmax = static_cast<float>(D.w - 4), ymax = static_cast<float>(D.h - 4);
  for (int at = 0; at < found && !*S.done; at += kChunk) {
    const int m = found - at < kChunk ? found - at : kChunk;
    for (int k = t; k < m; k += nt) S.chunk[k] = K[at + k];
    blk.sync();
    // In parallel, each thread over kPerThread consecutive corners: what the chunk's state already
    // rules out stays ruled out (a full cell only fills, occupancy only grows), so only the rest
    // -- kept in order by a block scan -- go to the scan below, which checks them again.
    unsigned long long key[kPerThread];
    int bucket[kPerThread];
    unsigned cell[kPerThread];
    int live = 0;
    for (int q = 0; q < kPerThread; ++q) {
      const int k = t * kPerThread + q;
      bucket[q] = -1;
      key[q] = 0;
      cell[q] = 0;
      if (k >= m) continue;
      key[q] = S.chunk[k];
      const Corner c = key_corner(key[q]);
      const float px = c.x, py = c.y;
      if (px < border || py < border || px >= xmax || py >= ymax) continue;
      const int b = bucket_of(px, py);
      const unsigned cx = c.x / D.cell, cy = c.y / D.cell;
      if (S.per_bucket[b] >= D.quota || S.occ[cy * D.ow + cx]) continue;
      bucket[q] = b;
      cell[q] = cx | (cy << 16);
      ++live;
    }
    int total = 0;
    int to = blk.exclusive_sum(live, total);
    blk.sync();  // every key of the chunk is read: the survivors may overwrite it in place
    for (int q = 0; q < kPerThread; ++q)
      if (bucket[q] >= 0) {
        S.chunk[to] = key[q];
        S.live_bucket[to] = bucket[q];
        S.live_cell[to] = cell[q];
        ++to;
      }
    blk.sync();
    if (t == 0) {
      int n = *S.taken;
      for (int k = 0; k < total && n < D.bound; ++k) {
        const int b = S.live_bucket[k];
        if (S.per_bucket[b] >= D.quota) continue;
        const int cx = static_cast<int>(S.live_cell[k] & 0xFFFFu), cy = static_cast<int>(S.live_cell[k] >> 16);
        if (S.occ[cy * D.ow + cx]) continue;
        for (int y = cy > 0 ? cy - 1 : 0; y <= (cy + 1 < D.oh ? cy + 1 : D.oh - 1); ++y)
          for (int x = cx > 0 ? cx - 1 : 0; x <= (cx + 1 < D.ow ? cx + 1 : D.ow - 1); ++x) S.occ[y * D.ow + x] = 1;
        S.per_bucket[b]++;
        O[n++] = key_corner(S.chunk[k]);
      }
      *S.taken = n;
      *S.done = n >= D.bound;
    }
    blk.sync();
  }
  if (t == 0) {
    header[0] = *S.taken;
    header[1] = found;
  }
}

}  // namespace egogeo::gpu
