// What an addon instance keeps between its calls about the frames it saw (instance.h): their
// decodes, and their FAST corners. Benchmark windows overlap: KITTI's 31-frame windows every 5
// frames share 26 frames with the next window at all frames, and 7 of 10 with the window after
// next at the published 10 frames, so a run that answers windows in order decodes, and detects
// corners on, most frames once. Entries are keyed by content (length and two 64-bit hashes of the
// file's bytes or the image's pixels: hashing a KITTI frame costs a tenth of decoding it), so a
// file rewritten in between, however soon, misses. What is kept is shared read-only (the engine
// never writes into its input frames or a detection's corner list). Thread-safe: the async calls
// of one instance may run at once on the load's threads (work_pool.h).
#pragma once

#include "frame_decode.h"

#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

namespace egogeo::vo {

/// Length and two independent 64-bit hashes of some bytes.
struct ContentHash {
  uint64_t size = 0, h1 = 0, h2 = 0;
  bool operator==(const ContentHash& o) const { return size == o.size && h1 == o.h1 && h2 == o.h2; }
};
ContentHash content_hash(const unsigned char* bytes, size_t n);

/// Counts of a cache since its instance loaded.
struct CacheStats {
  uint64_t hits = 0, misses = 0;
  size_t entries = 0, bytes = 0;
};

/// At most `max_entries` values and `max_bytes` (as the caller counts them), least recently used dropped first.
template <class Key, class Value>
class LruCache {
 public:
  LruCache(size_t max_entries, size_t max_bytes) : max_entries_(max_entries), max_bytes_(max_bytes) {}

  /// The kept value for `k`, if any (counted as a hit or a miss).
  bool find(const Key& k, Value& out) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (!(it->key == k)) continue;
      entries_.splice(entries_.begin(), entries_, it);
      out = entries_.front().value;
      ++hits_;
      return true;
    }
    ++misses_;
    return false;
  }

  /// Keeps `v` (`bytes` of it) for `k`, as the newest entry.
  void keep(const Key& k, const Value& v, size_t bytes) {
    if (bytes > max_bytes_ || max_entries_ == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (!(it->key == k)) continue;
      bytes_ -= it->bytes;
      entries_.erase(it);
      break;
    }
    entries_.push_front({k, v, bytes});
    bytes_ += bytes;
    while (entries_.size() > max_entries_ || bytes_ > max_bytes_) {
      bytes_ -= entries_.back().bytes;
      entries_.pop_back();
    }
  }

  CacheStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return {hits_, misses_, entries_.size(), bytes_};
  }

 private:
  struct Entry {
    Key key;
    Value value;
    size_t bytes;
  };
  mutable std::mutex mu_;
  std::list<Entry> entries_;  // most recently used first
  size_t max_entries_, max_bytes_, bytes_ = 0;
  uint64_t hits_ = 0, misses_ = 0;
};

/// One decode of one file's contents.
struct FrameKey {
  ContentHash bytes;
  int ds = 1;    // working resolution (Options::downsample)
  int grey = 0;  // GreyPath
  bool operator==(const FrameKey& o) const { return bytes == o.bytes && ds == o.ds && grey == o.grey; }
};

/// Decoded frames: the last 64, at most 64 MiB of pixels.
class FrameCache : public LruCache<FrameKey, Decoded> {
 public:
  FrameCache() : LruCache(64, size_t{64} << 20) {}
};

/// One FAST detection: the image's pixels and size, the threshold.
struct CornerKey {
  ContentHash pixels;
  int width = 0, height = 0, threshold = 0;
  bool operator==(const CornerKey& o) const { return pixels == o.pixels && width == o.width && height == o.height && threshold == o.threshold; }
};
using Corners = std::shared_ptr<const std::vector<cv::KeyPoint>>;

/// Whole-frame FAST corners, strongest first: the last 64 detections, at most 32 MiB.
class CornerCache : public LruCache<CornerKey, Corners> {
 public:
  CornerCache() : LruCache(64, size_t{32} << 20) {}
};

/// The caches one engine call reads and fills (either may be null: not cached).
struct FrameCaches {
  FrameCache* frames = nullptr;
  CornerCache* corners = nullptr;
};

}  // namespace egogeo::vo
