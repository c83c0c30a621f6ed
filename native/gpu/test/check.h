// The library's test programs: one line per check ("ok" or "FAIL" and what was checked), and the
// exit status ctest reads.
#pragma once

#include <cstdio>
#include <string>

namespace egogeo::gpu::test {

inline int& failures() {
  static int n = 0;
  return n;
}

inline void check(bool ok, const std::string& what) {
  std::printf("%s  %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures();
}

/// The summary line; main's exit status.
inline int report() {
  const int n = failures();
  std::printf(n ? "%d failed\n" : "all passed\n", n);
  return n ? 1 : 0;
}

}  // namespace egogeo::gpu::test
