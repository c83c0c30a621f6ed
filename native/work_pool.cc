#include "work_pool.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace egogeo {
namespace {

int pool_size(int requested) {
  if (requested > 0) return requested;
  // libuv's own rule for its pool (uv/threadpool.c): UV_THREADPOOL_SIZE, at least 1, at most 1024.
  const char* env = std::getenv("UV_THREADPOOL_SIZE");
  const int n = env ? std::atoi(env) : 4;
  return std::clamp(n, 1, 1024);
}

}  // namespace

WorkPool::WorkPool(int max_threads) : max_threads_(pool_size(max_threads)) {}

WorkPool::~WorkPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    for (auto& l : lanes_) l->wake.notify_one();
  }
  for (auto& l : lanes_) l->thread.join();
}

int WorkPool::threads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(lanes_.size());
}

void WorkPool::submit(Job job) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& l : lanes_)
    if (!l->busy) {
      l->busy = true;
      l->job = std::move(job);
      l->wake.notify_one();
      return;
    }
  if (static_cast<int>(lanes_.size()) < max_threads_) {
    lanes_.push_back(std::make_unique<Lane>());
    Lane& l = *lanes_.back();
    l.busy = true;
    l.job = std::move(job);
    l.thread = std::thread([this, &l] { loop(l); });
    return;
  }
  queue_.push_back(std::move(job));
}

void WorkPool::loop(Lane& lane) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    lane.wake.wait(lock, [&] { return lane.busy || stop_; });
    if (!lane.busy) return;  // stopping, nothing left for this thread
    Job job = std::move(lane.job);
    lock.unlock();
    job.run();
    lock.lock();
    // Free for the next call before this one settles: the caller that awaits it submits its next
    // call from the settled Promise, and finds this thread idle.
    if (!queue_.empty()) {
      lane.job = std::move(queue_.front());
      queue_.pop_front();
    } else {
      lane.busy = false;
    }
    lock.unlock();
    job.settle();
    lock.lock();
  }
}

}  // namespace egogeo
