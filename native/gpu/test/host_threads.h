// Host threads standing in for a device's threads in the tests (a warp's lanes in
// klt_group_test.cc, a block in select_block_test.cc): a reusable barrier, and n threads run to
// the end. A thread that skipped a barrier the others reach leaves them waiting: ctest's timeout
// fails the test.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace egogeo::gpu::test {

/// Every one of n threads waits until all n have arrived (__syncthreads, or a warp's shuffle).
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  int size() const { return n_; }
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    const long gen = gen_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen_ != gen; });
    }
  }

 private:
  int n_;
  std::mutex m_;
  std::condition_variable cv_;
  int waiting_ = 0;
  long gen_ = 0;
};

/// fn(0) .. fn(n - 1) on n threads at once; returns when all have.
inline void run_threads(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(fn, i);
  for (std::thread& t : threads) t.join();
}

}  // namespace egogeo::gpu::test
