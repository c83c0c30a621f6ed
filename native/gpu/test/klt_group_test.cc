// The device tracks a point with a warp: klt_core.h's lk_point deals the window's pixels out to 32
// lanes and adds their exact sums across them. Here a group of host threads plays the warp (each
// thread one lane, sum() a barrier exchange), so the dealing, the shared template scratch and the
// lock-step control flow (every lane must reach every sum) are checked on any machine: every lane's
// track must equal the one-thread form's (the host reference) bit for bit, status included. A lane
// that skipped a sum would leave the others waiting: ctest's timeout fails it.
#include "klt_core.h"
#include "test/host_threads.h"
#include "test/check.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace egogeo::gpu;

using egogeo::gpu::test::check;

namespace {

/// Lanes that are host threads: sum() posts this lane's value, waits for all, adds every slot.
class ThreadLanes {
 public:
  explicit ThreadLanes(int n) : barrier_(n), slot_(static_cast<size_t>(n), 0) {}
  int size() const { return barrier_.size(); }
  int64_t exchange(int lane, int64_t v) {
    slot_[static_cast<size_t>(lane)] = v;
    barrier_.wait();
    int64_t t = 0;
    for (int64_t s : slot_) t += s;
    barrier_.wait();  // nobody posts the next value before everyone has read this one
    return t;
  }

 private:
  test::Barrier barrier_;
  std::vector<int64_t> slot_;
};

struct HostLane {
  ThreadLanes* lanes;
  int l;
  int lane() const { return l; }
  int size() const { return lanes->size(); }
  int64_t sum(int64_t v) const { return lanes->exchange(l, v); }
};

/// Levels 0..top of an 8-bit frame with their Scharr derivatives, as the kernels build them.
struct Pyramid {
  std::vector<std::vector<uint8_t>> img;
  std::vector<std::vector<int16_t>> der;
  std::vector<Level> levels;
  Pyramid(const std::vector<uint8_t>& base, int w, int h, int top) : img(static_cast<size_t>(top) + 1), der(static_cast<size_t>(top) + 1) {
    std::vector<int> ws, hs;
    for (int l = 0; l <= top; ++l, w = (w + 1) / 2, h = (h + 1) / 2) {
      ws.push_back(w);
      hs.push_back(h);
    }
    img[0] = base;
    for (int l = 1; l <= top; ++l) {
      img[l].resize(static_cast<size_t>(ws[l]) * hs[l]);
      for (int y = 0; y < hs[l]; ++y)
        for (int x = 0; x < ws[l]; ++x) img[l][static_cast<size_t>(y) * ws[l] + x] = pyrdown_pixel(img[l - 1].data(), ws[l - 1], hs[l - 1], ws[l - 1], x, y);
    }
    for (int l = 0; l <= top; ++l) {
      der[l].resize(img[l].size() * 2);
      for (int y = 0; y < hs[l]; ++y)
        for (int x = 0; x < ws[l]; ++x) {
          const size_t i = (static_cast<size_t>(y) * ws[l] + x) * 2;
          scharr_pixel(img[l].data(), ws[l], hs[l], ws[l], x, y, &der[l][i], &der[l][i + 1]);
        }
      levels.push_back(Level{img[l].data(), der[l].data(), ws[l], hs[l], ws[l], ws[l]});
    }
  }
};

std::vector<uint8_t> texture(int w, int h, float sx, float sy) {
  std::vector<uint8_t> img(static_cast<size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double u = x + sx, v = y + sy;
      double s = 0;
      for (int k = 0; k < 10; ++k) s += std::sin((0.06 + 0.023 * k) * u + 0.9 * k) * std::cos((0.05 + 0.019 * (9 - k)) * v + 1.1 * k);
      img[static_cast<size_t>(y) * w + x] = static_cast<uint8_t>(std::lround(std::fmin(255.0, std::fmax(0.0, 128 + 30 * s))));
    }
  return img;
}

struct Track {
  float x = 0, y = 0;
  bool ok = false;
  bool operator==(const Track& o) const { return std::memcmp(&x, &o.x, sizeof x) == 0 && std::memcmp(&y, &o.y, sizeof y) == 0 && ok == o.ok; }
};

/// Tracks every point with `n` thread lanes; out[lane][point] is what each lane returned.
std::vector<std::vector<Track>> track_group(int n, const Pyramid& A, const Pyramid& B, int top, int win, const std::vector<float>& pts, bool guess) {
  ThreadLanes lanes(n);
  std::vector<int16_t> scratch(3 * static_cast<size_t>(win) * win, 0);
  std::vector<std::vector<Track>> out(static_cast<size_t>(n), std::vector<Track>(pts.size() / 2));
  test::run_threads(n, [&](int l) {
    const HostLane g{&lanes, l};
    for (size_t i = 0; i < pts.size() / 2; ++i) {
      Track& t = out[static_cast<size_t>(l)][i];
      const float x = pts[2 * i], y = pts[2 * i + 1];
      t.ok = lk_point(g, A.levels.data(), B.levels.data(), top, win, 10, 0.03f * 0.03f, 1e-4f, x, y, x + 1.5f, y - 0.5f, guess, scratch.data(), &t.x, &t.y);
    }
  });
  return out;
}

}  // namespace

int main() {
  const int w = 200, h = 150;
  const std::vector<uint8_t> a = texture(w, h, 0, 0), b = texture(w, h, 1.3f, -0.7f);
  std::vector<float> pts;
  for (int k = 0; k < 24; ++k) {  // inside, near every border and outside it (failed tracks too)
    pts.push_back(-4.f + (k % 6) * 41.3f + 0.37f * (k % 5));
    pts.push_back(-2.f + (k / 6) * 50.1f + 0.61f * (k % 3));
  }
  for (float v : {-60.f, 20.f, w + 50.f, 30.f}) pts.push_back(v);  // two far outside: lost at every level
  // Lanes: the warp (32), more lanes than pixels (window 5 has 25), and a count that divides no window.
  const struct {
    int lanes, win, levels;
    bool guess;
  } cases[] = {{32, 13, 3, false}, {32, 5, 2, true}, {7, 21, 3, false}, {7, 31, 1, true}};
  for (const auto& c : cases) {
    int top = 0;
    for (int l = 0, ww = w, hh = h; l <= c.levels; ++l) {  // buildOpticalFlowPyramid's early stop
      ww = (ww + 1) / 2;
      hh = (hh + 1) / 2;
      top = l;
      if (ww <= c.win || hh <= c.win) break;
    }
    const Pyramid A(a, w, h, top), B(b, w, h, top);
    std::vector<Track> solo(pts.size() / 2);
    std::vector<int16_t> scratch(3 * static_cast<size_t>(c.win) * c.win);
    int kept = 0;
    for (size_t i = 0; i < solo.size(); ++i) {
      const float x = pts[2 * i], y = pts[2 * i + 1];
      solo[i].ok = lk_point(Solo{}, A.levels.data(), B.levels.data(), top, c.win, 10, 0.03f * 0.03f, 1e-4f, x, y, x + 1.5f, y - 0.5f, c.guess, scratch.data(),
                            &solo[i].x, &solo[i].y);
      kept += solo[i].ok;
    }
    const auto group = track_group(c.lanes, A, B, top, c.win, pts, c.guess);
    int same = 0;
    for (const auto& lane : group)
      for (size_t i = 0; i < solo.size(); ++i) same += lane[i] == solo[i];
    const std::string what = std::to_string(c.lanes) + " lanes, window " + std::to_string(c.win) + ", top level " + std::to_string(top) +
                             (c.guess ? ", with a guess" : "") + ": every lane's " + std::to_string(solo.size()) + " tracks equal one thread's (" +
                             std::to_string(kept) + " converged)";
    check(same == c.lanes * static_cast<int>(solo.size()) && kept > 0 && kept < static_cast<int>(solo.size()),
          what + (same == c.lanes * static_cast<int>(solo.size()) ? "" : ": " + std::to_string(same) + " lane tracks equal"));
  }
  return egogeo::gpu::test::report();
}
