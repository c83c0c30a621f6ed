// Decoded image files kept between an addon instance's calls. Benchmark windows overlap: KITTI's
// 31-frame windows every 5 frames share 26 frames with the next window at all frames, and 7 of 10
// with the window after next at the published 10 frames, so a run that answers windows in order
// decodes most frames once. An entry is keyed by the file's bytes (their length and two 64-bit
// hashes: reading and hashing a KITTI frame costs a tenth of decoding it) and how it was decoded,
// so a file rewritten in between, however soon, misses. The pixels are shared read-only (the engine
// never writes into its input frames). Thread-safe: the async calls of one instance may run at once
// on the libuv pool.
#pragma once

#include "frame_decode.h"

#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>

namespace egogeo::vo {

/// What identifies one decode of one file's contents.
struct FrameKey {
  uint64_t size = 0, h1 = 0, h2 = 0;  // the bytes
  int ds = 1;                          // working resolution (Options::downsample)
  int grey = 0;                        // GreyPath
  bool operator==(const FrameKey& o) const { return size == o.size && h1 == o.h1 && h2 == o.h2 && ds == o.ds && grey == o.grey; }
};

/// The key of `n` bytes decoded at `ds` along `grey`.
FrameKey frame_key(const unsigned char* bytes, size_t n, int ds, int grey);

class FrameCache {
 public:
  /// At most `max_frames` frames and `max_bytes` of pixels, least recently used dropped first.
  explicit FrameCache(size_t max_frames = 64, size_t max_bytes = size_t{64} << 20) : max_frames_(max_frames), max_bytes_(max_bytes) {}

  /// The kept decode for `k`, if any (counted as a hit or a miss).
  bool find(const FrameKey& k, Decoded& out);
  /// Keeps `d` for `k` (the newest entry).
  void keep(const FrameKey& k, const Decoded& d);

  struct Stats {
    uint64_t hits = 0, misses = 0;
    size_t frames = 0, bytes = 0;
  };
  Stats stats() const;

 private:
  struct Entry {
    FrameKey key;
    Decoded frame;
  };
  mutable std::mutex mu_;
  std::list<Entry> entries_;  // most recently used first
  size_t max_frames_, max_bytes_, bytes_ = 0;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace egogeo::vo
