#include "huge_pages.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace egogeo {
namespace {

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

/// A 2 MiB-aligned anonymous mapping of `bytes` (a multiple of 2 MiB), advised for huge pages; null
/// when the system refuses it.
char* map_slab(std::size_t bytes) {
  const std::size_t huge = HugePageAllocator::kHugePage;
  void* raw = mmap(nullptr, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto lo = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = round_up(lo, huge), end = start + bytes;
  if (start > lo) munmap(raw, start - lo);
  if (lo + bytes + huge > end) munmap(reinterpret_cast<void*>(end), lo + bytes + huge - end);
  madvise(reinterpret_cast<void*>(start), bytes, MADV_HUGEPAGE);  // advice only: 4 KiB pages where THP is off
  return reinterpret_cast<char*>(start);
}

std::atomic<const HugePageAllocator*> g_installed{nullptr};

}  // namespace

cv::UMatData* HugePageAllocator::allocate(int dims, const int* sizes, int type, void* data0, std::size_t* step, cv::AccessFlag,
                                          cv::UMatUsageFlags) const {
  // OpenCV's StdMatAllocator, with the buffer from take().
  std::size_t total = CV_ELEM_SIZE(type);
  for (int i = dims - 1; i >= 0; i--) {
    if (step) {
      if (data0 && step[i] != cv::Mat::AUTO_STEP) {
        CV_Assert(total <= step[i]);
        total = step[i];
      } else {
        step[i] = total;
      }
    }
    total *= sizes[i];
  }
  uchar* data = data0 ? static_cast<uchar*>(data0) : static_cast<uchar*>(take(total));
  auto* u = new cv::UMatData(this);
  u->data = u->origdata = data;
  u->size = total;
  if (data0) u->flags |= cv::UMatData::USER_ALLOCATED;
  return u;
}

bool HugePageAllocator::allocate(cv::UMatData* u, cv::AccessFlag, cv::UMatUsageFlags) const { return u != nullptr; }

void HugePageAllocator::deallocate(cv::UMatData* u) const {
  if (!u) return;
  CV_Assert(u->urefcount == 0);
  CV_Assert(u->refcount == 0);
  if (!(u->flags & cv::UMatData::USER_ALLOCATED)) {
    give(u->origdata, u->size);
    u->origdata = nullptr;
  }
  delete u;
}

void* HugePageAllocator::take(std::size_t bytes) const {
  if (bytes < kMinBlock) return cv::fastMalloc(bytes);
  const std::size_t block = round_up(bytes, kGranule);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    SizeClass& c = classes_[block];
    void* p = nullptr;
    if (!c.free.empty()) {
      p = c.free.back();
      c.free.pop_back();
    } else {
      if (c.next == nullptr || c.next + block > c.end) {
        // A slab of about 8 blocks: address space only; pages are faulted as blocks are first used.
        const std::size_t bytes_slab = round_up(8 * block, kHugePage);
        char* s = stats_.slab_bytes + bytes_slab <= kMaxSlabBytes ? map_slab(bytes_slab) : nullptr;
        if (s != nullptr) {
          slabs_.emplace(reinterpret_cast<std::uintptr_t>(s), reinterpret_cast<std::uintptr_t>(s) + bytes_slab);
          stats_.slab_bytes += bytes_slab;
          c.next = s;
          c.end = s + bytes_slab;
        }
      }
      if (c.next != nullptr && c.next + block <= c.end) {
        p = c.next;
        c.next += block;
      }
    }
    if (p != nullptr) {
      ++stats_.blocks_in_use;
      ++stats_.blocks_served;
      return p;
    }
  }
  return cv::fastMalloc(bytes);  // over the cap, or no mapping
}

void HugePageAllocator::give(void* p, std::size_t bytes) const {
  if (p == nullptr) return;
  if (bytes >= kMinBlock) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    auto it = slabs_.upper_bound(a);
    if (it != slabs_.begin() && a < (--it)->second) {
      classes_[round_up(bytes, kGranule)].free.push_back(p);
      --stats_.blocks_in_use;
      return;
    }
  }
  cv::fastFree(p);
}

HugePageAllocator::Stats HugePageAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

bool install_huge_page_allocator() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#else
  const char* env = std::getenv("EGOGEO_HUGE_PAGES");
  if (env && std::strcmp(env, "0") == 0) return false;
  static const HugePageAllocator* const allocator = new HugePageAllocator();  // process lifetime, never freed
  cv::Mat::setDefaultAllocator(const_cast<HugePageAllocator*>(allocator));
  g_installed.store(allocator);
  return true;
#endif
}

const HugePageAllocator* huge_page_allocator() { return g_installed.load(); }

}  // namespace egogeo
