// One allocation carved into aligned, typed areas (a context allocates nothing after creation).
// A layout runs twice over the same takes: on an unbound arena to sum the sizes, then bound to the
// allocation to hand out the pointers, so every area's offset is written once.
#pragma once

#include <cstddef>
#include <cstdint>

namespace egogeo::gpu {

/// Areas start on 256-byte boundaries (CUDA's allocation alignment; coalesced rows).
inline size_t align_up(size_t v) { return (v + 255) & ~size_t(255); }

class Arena {
 public:
  /// The next `count` Ts: `at` points there once bound (nullptr while sizing).
  template <class T>
  void take(T*& at, size_t count) {
    const size_t off = size_;
    size_ += align_up(sizeof(T) * count);
    at = base_ ? reinterpret_cast<T*>(base_ + off) : nullptr;
  }
  /// Bytes the takes so far need.
  size_t size() const { return size_; }
  /// Starts over on the allocation `base` (at least `size()` bytes).
  void bind(uint8_t* base) {
    base_ = base;
    size_ = 0;
  }

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
};

}  // namespace egogeo::gpu
