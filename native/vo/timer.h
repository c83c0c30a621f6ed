// Adds the lifetime of a scope, in milliseconds, to a stage's counter.
#pragma once

#include <chrono>

namespace egogeo::vo {

class Timer {
 public:
  explicit Timer(double& acc) : acc_(acc), t0_(std::chrono::steady_clock::now()) {}
  ~Timer() { acc_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count(); }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

 private:
  double& acc_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace egogeo::vo
