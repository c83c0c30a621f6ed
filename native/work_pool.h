// The threads a load of the module runs its async calls on (processClipAsync, renderClipAsync,
// baselineSignalsAsync), instead of libuv's pool. A call goes to the lowest-numbered idle thread,
// so a caller that awaits each call before making the next (the CLI, a run on one worker) runs
// every clip on the same thread. On libuv's pool consecutive clips land on whichever of its threads
// is free, and glibc gives each thread its own malloc arena: every thread faulted in its own copy
// of a clip's working set (pyramids, blurred bands, decoded frames), 31k page faults in a 5-window
// KITTI 01 process against 20k on one thread (~10% of its CPU time). Per load (instance.h): no
// process-wide state; threads start on first use, up to UV_THREADPOOL_SIZE (libuv's default 4),
// so concurrent callers get the same parallelism as before.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace egogeo {

class WorkPool {
 public:
  /// A call: `run` on a pool thread, then `settle` on the same thread once that thread is free
  /// for the next call (settle hands the result to the JS thread; see napi_util.h queue_call).
  struct Job {
    std::function<void()> run, settle;
  };

  /// max_threads <= 0: libuv's pool size (UV_THREADPOOL_SIZE, else 4).
  explicit WorkPool(int max_threads = 0);
  /// Waits for every submitted job, queued ones included (each settles; the environment may be
  /// closing, which its settle handles), then joins the threads.
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  void submit(Job job);

  /// Threads started so far (tests: sequential calls start one).
  int threads() const;

 private:
  struct Lane {
    std::thread thread;
    std::condition_variable wake;
    Job job;
    bool busy = false;
  };
  void loop(Lane& lane);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::deque<Job> queue_;  // jobs waiting while every thread is busy
  bool stop_ = false;
  int max_threads_;
};

}  // namespace egogeo
