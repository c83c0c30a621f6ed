#include "frame_cache.h"

#include <cstring>

namespace egogeo::vo {
namespace {

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/// splitmix64's finaliser: every input bit reaches every output bit.
inline uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

FrameKey frame_key(const unsigned char* bytes, size_t n, int ds, int grey) {
  // Two independent lanes of multiply-rotate over 8-byte words (a few GB/s), each finalised.
  uint64_t a = 0x9e3779b97f4a7c15ULL ^ n, b = 0xc2b2ae3d27d4eb4fULL + n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes + i, 8);
    a = rotl(a ^ (w * 0x87c37b91114253d5ULL), 31) * 0x4cf5ad432745937fULL;
    b = rotl(b + (w ^ 0x52dce729da3ed5a1ULL) * 0x9fb21c651e98df25ULL, 29) * 0xff51afd7ed558ccdULL;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, bytes + i, n - i);
  return {n, mix(a ^ tail), mix(b + rotl(tail, 17)), ds, grey};
}

bool FrameCache::find(const FrameKey& k, Decoded& out) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (!(it->key == k)) continue;
    entries_.splice(entries_.begin(), entries_, it);
    out = entries_.front().frame;
    ++hits_;
    return true;
  }
  ++misses_;
  return false;
}

void FrameCache::keep(const FrameKey& k, const Decoded& d) {
  const size_t bytes = d.img.total() * d.img.elemSize();
  if (bytes > max_bytes_ || max_frames_ == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (!(it->key == k)) continue;
    bytes_ -= it->frame.img.total() * it->frame.img.elemSize();
    entries_.erase(it);
    break;
  }
  entries_.push_front({k, d});
  bytes_ += bytes;
  while (entries_.size() > max_frames_ || bytes_ > max_bytes_) {
    bytes_ -= entries_.back().frame.img.total() * entries_.back().frame.img.elemSize();
    entries_.pop_back();
  }
}

FrameCache::Stats FrameCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {hits_, misses_, entries_.size(), bytes_};
}

}  // namespace egogeo::vo
