// OpenCV's image buffers from transparent huge pages (bench/studies/48). On a virtualised host a
// 4 KiB page fault costs ~11 us; a process's first clips fault in the engine's ~32 MiB working set
// (pyramids, blurred bands, decoded frames) page by page, and glibc's arena trims and unmaps those
// blocks between clips, so the next clip faults them in again. Blocks of 256 KiB and more come
// instead from slabs of 2 MiB-aligned memory advised MADV_HUGEPAGE (one fault per 2 MiB where the
// kernel's THP mode is "madvise" or "always"), and a freed block is kept for the next of its size.
// Only where the buffers live changes, never what is computed.
//
// Process-wide by nature (cv::Mat::setDefaultAllocator): installed once, by the first load of the
// module, and never destroyed (Mats may outlive any one load). Thread-safe: one mutex, taken only
// for blocks of 256 KiB and more. Bounded: at most kMaxSlabBytes of slabs; beyond that, and for
// smaller blocks, OpenCV's own allocation. Not in sanitizer builds (ASan must see every buffer),
// nor with EGOGEO_HUGE_PAGES=0.
#pragma once

#include <opencv2/core.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace egogeo {

class HugePageAllocator final : public cv::MatAllocator {
 public:
  static constexpr std::size_t kMinBlock = std::size_t(256) << 10;  // smaller: OpenCV's allocation
  static constexpr std::size_t kGranule = std::size_t(64) << 10;    // blocks rounded up to this
  static constexpr std::size_t kHugePage = std::size_t(2) << 20;
  static constexpr std::size_t kMaxSlabBytes = std::size_t(1) << 30;

  cv::UMatData* allocate(int dims, const int* sizes, int type, void* data0, std::size_t* step, cv::AccessFlag flags,
                         cv::UMatUsageFlags usage) const override;
  bool allocate(cv::UMatData* u, cv::AccessFlag flags, cv::UMatUsageFlags usage) const override;
  void deallocate(cv::UMatData* u) const override;

  struct Stats {
    std::size_t slab_bytes = 0;  // reserved in slabs (virtual; pages are faulted as blocks are used)
    std::size_t blocks_in_use = 0;
    std::size_t blocks_served = 0;  // allocations served from slabs, ever
  };
  Stats stats() const;

 private:
  void* take(std::size_t bytes) const;
  void give(void* p, std::size_t bytes) const;

  struct SizeClass {
    std::vector<void*> free;  // blocks ready for reuse
    char* next = nullptr;     // the newest slab's first block never handed out
    char* end = nullptr;
  };
  mutable std::mutex mutex_;
  mutable std::map<std::size_t, SizeClass> classes_;       // by rounded block size
  mutable std::map<std::uintptr_t, std::uintptr_t> slabs_;  // slab start -> end, to tell our blocks from OpenCV's
  mutable Stats stats_;
};

/// Installs the allocator as OpenCV's default, once per process (addon.cc's Init). False where it
/// is not used: sanitizer builds, EGOGEO_HUGE_PAGES=0.
bool install_huge_page_allocator();

/// The installed allocator, or null.
const HugePageAllocator* huge_page_allocator();

}  // namespace egogeo
