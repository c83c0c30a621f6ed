// push_frames stages frames into pinned memory on a few host threads while the calling thread
// queues each frame's upload as soon as it is staged, in frame order (internal.h's
// staged_in_order). Checked here, no device needed: every frame is consumed once, in order, and
// only after its stage finished; a failing consume stops the uploads and returns its code once
// every started stage is done; one thread (or none to spare) alternates stage and consume.
#include "internal.h"
#include "test/check.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using egogeo::gpu::staged_in_order;
using egogeo::gpu::test::check;

int main() {
  for (const int n : {0, 1, 5, 64})
    for (const int threads : {1, 2, 3, 8}) {
      std::vector<int> staged(static_cast<size_t>(n), 0), stage_calls(static_cast<size_t>(n), 0);
      std::vector<int> order;
      bool seen_before_staged = false;
      const int rc = staged_in_order(
          n, threads,
          [&](int i) {
            if (i % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // out of step with the consumer
            stage_calls[static_cast<size_t>(i)]++;
            staged[static_cast<size_t>(i)] = 7 * i + 1;
          },
          [&](int i) {
            if (staged[static_cast<size_t>(i)] != 7 * i + 1) seen_before_staged = true;
            order.push_back(i);
            return 0;
          });
      bool in_order = static_cast<int>(order.size()) == n, once = true;
      for (int i = 0; i < static_cast<int>(order.size()); ++i) in_order = in_order && order[static_cast<size_t>(i)] == i;
      for (int c : stage_calls) once = once && c == 1;
      check(rc == 0 && in_order && once && !seen_before_staged,
            std::to_string(n) + " frames, " + std::to_string(threads) + " threads: each staged once, consumed in order after its stage");
    }
  // A failing upload at frame 10 of 64: no frame after it is consumed, the code comes back, and
  // the helpers' stages all finish (nothing runs after the call returns).
  for (const int threads : {1, 8}) {
    std::atomic<int> stages{0};
    int consumed = 0;
    const int rc = staged_in_order(
        64, threads, [&](int) { stages.fetch_add(1); },
        [&](int i) {
          ++consumed;
          return i == 10 ? 3 : 0;
        });
    const int after = stages.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    check(rc == 3 && consumed == 11 && stages.load() == after && (threads == 1 ? after == 11 : after == 64),
          std::to_string(threads) + " thread(s): a failing consume at frame 10 returns its code, consumed 11, stages " + std::to_string(after));
  }
  return egogeo::gpu::test::report();
}
