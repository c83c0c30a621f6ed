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

ContentHash content_hash(const unsigned char* bytes, size_t n) {
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
  return {n, mix(a ^ tail), mix(b + rotl(tail, 17))};
}

}  // namespace egogeo::vo
