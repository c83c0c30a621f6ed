// Host code of libegogeo_gpu that needs no device: argument checks, pyramid geometry, Tracker::detect's
// bucketing, and the host reference of the kernels' numerics (klt_core.h compiled for the CPU).
#include "internal.h"
#include "klt_core.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace egogeo::gpu {

std::string check_params(const egogeo_gpu_params& p) {
  auto range = [](const char* name, double v, double lo, double hi) -> std::string {
    if (!(v >= lo && v <= hi)) return std::string(name) + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(v);
    return "";
  };
  std::string e;
  if (!(e = range("device", p.device, 0, 1024)).empty()) return e;
  if (!(e = range("max_width", p.max_width, 32, kMaxSide)).empty()) return e;
  if (!(e = range("max_height", p.max_height, 32, kMaxSide)).empty()) return e;
  if (!(e = range("levels", p.levels, 0, kMaxLevels)).empty()) return e;
  if (!(e = range("window", p.window, 3, kMaxWindow)).empty()) return e;
  if (!(e = range("iterations", p.iterations, 1, 100)).empty()) return e;
  if (!(e = range("epsilon", p.epsilon, 0, 10)).empty()) return e;
  if (!(e = range("min_eig", p.min_eig, 0, 1)).empty()) return e;
  if (!(e = range("fb_threshold", p.fb_threshold, 1e-3, 1e4)).empty()) return e;
  if (!(e = range("max_points", p.max_points, 1, 1 << 20)).empty()) return e;
  if (!(e = range("batch", p.batch, 1, 4096)).empty()) return e;
  if (!(e = range("buffers", p.buffers, 2, 16)).empty()) return e;
  return "";
}

int pyramid_top(int w, int h, int levels, int window) {
  for (int level = 0; level <= levels; ++level) {
    w = (w + 1) / 2;
    h = (h + 1) / 2;
    if (w <= window || h <= window) return level;
  }
  return levels;
}

void level_sizes(int w, int h, int top, int* ws, int* hs) {
  for (int l = 0; l <= top; ++l) {
    ws[l] = w;
    hs[l] = h;
    w = (w + 1) / 2;
    h = (h + 1) / 2;
  }
}

std::string check_detect_job(const egogeo_gpu_detect_job& j, int width, int height) {
  if (j.threshold < 1 || j.threshold > 255) return "detect: threshold must be in [1, 255], got " + std::to_string(j.threshold);
  if (j.max_features < 0 || j.max_features > (1 << 20)) return "detect: max_features must be in [0, 1048576]";
  if (j.max_features > 0) {
    if (j.grid_cols < 1 || j.grid_cols > 64 || j.grid_rows < 1 || j.grid_rows > 64) return "detect: grid_cols and grid_rows must be in [1, 64]";
    if (j.min_distance < 1 || j.min_distance > 100) return "detect: min_distance must be in [1, 100]";
    if (j.n_existing < 0 || (j.n_existing > 0 && !j.existing)) return "detect: existing must hold n_existing >= 0 points";
    for (int i = 0; i < j.n_existing; ++i) {
      const float x = j.existing[2 * i], y = j.existing[2 * i + 1];
      if (!(x >= 0 && y >= 0 && x < width && y < height)) return "detect: existing point " + std::to_string(i) + " is outside the frame";
    }
  }
  if (j.capacity < 0 || (j.capacity > 0 && !j.out_xy)) return "detect: out_xy must have room for capacity >= 0 corners";
  if (!j.count) return "detect: count must not be NULL";
  return "";
}

void finish_detect(std::vector<Corner>& corners, int width, int height, const egogeo_gpu_detect_job& j) {
  std::sort(corners.begin(), corners.end(), [](const Corner& a, const Corner& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.y != b.y ? a.y < b.y : a.x < b.x;
  });
  if (j.found) *j.found = static_cast<int>(corners.size());
  int n = 0;
  auto emit = [&](const Corner& c) {
    j.out_xy[2 * n] = c.x;
    j.out_xy[2 * n + 1] = c.y;
    if (j.out_score) j.out_score[n] = c.score;
    ++n;
  };
  if (j.max_features == 0) {
    for (const Corner& c : corners) {
      if (n >= j.capacity) break;
      emit(c);
    }
    *j.count = n;
    return;
  }
  // Tracker::detect: occupancy at min_distance resolution around live tracks and taken corners,
  // a per-cell quota on the grid, a 4 px border.
  const int want = j.max_features - j.n_existing;
  const int cols = j.grid_cols, rows = j.grid_rows;
  const float cw = static_cast<float>(width) / cols, ch = static_cast<float>(height) / rows;
  const int cell = std::max(1, j.min_distance);
  const int ow = width / cell + 1, oh = height / cell + 1;
  std::vector<uint8_t> occupied(static_cast<size_t>(ow) * oh, 0);
  std::vector<int> per_bucket(static_cast<size_t>(cols) * rows, 0);
  auto mark = [&](float px, float py) {
    const int cx = static_cast<int>(px) / cell, cy = static_cast<int>(py) / cell;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int x = cx + dx, y = cy + dy;
        if (x >= 0 && y >= 0 && x < ow && y < oh) occupied[static_cast<size_t>(y) * ow + x] = 1;
      }
  };
  auto bucket_of = [&](float px, float py) {
    const int bx = std::min(cols - 1, static_cast<int>(px / cw));
    const int by = std::min(rows - 1, static_cast<int>(py / ch));
    return by * cols + bx;
  };
  for (int i = 0; i < j.n_existing; ++i) {
    mark(j.existing[2 * i], j.existing[2 * i + 1]);
    per_bucket[static_cast<size_t>(bucket_of(j.existing[2 * i], j.existing[2 * i + 1]))]++;
  }
  const int quota = std::max(1, j.max_features / (cols * rows));
  const int border = 4;
  for (const Corner& c : corners) {
    if (n >= want || n >= j.capacity) break;
    const float px = c.x, py = c.y;
    if (px < border || py < border || px >= width - border || py >= height - border) continue;
    const size_t b = static_cast<size_t>(bucket_of(px, py));
    if (per_bucket[b] >= quota) continue;
    if (occupied[static_cast<size_t>(c.y / cell) * ow + c.x / cell]) continue;
    mark(px, py);
    per_bucket[b]++;
    emit(c);
  }
  *j.count = n;
}

void put_message(char* buf, size_t len, const std::string& msg) {
  if (!buf || len == 0) return;
  const size_t n = std::min(len - 1, msg.size());
  std::memcpy(buf, msg.data(), n);
  buf[n] = 0;
}

namespace {

/// A host pyramid: levels 0..top with their derivatives, as the device keeps them.
struct HostPyramid {
  std::vector<std::vector<uint8_t>> img;
  std::vector<std::vector<int16_t>> der;
  std::vector<Level> levels;
};

HostPyramid build(const unsigned char* data, int w, int h, int top) {
  HostPyramid P;
  int ws[kMaxLevels + 1], hs[kMaxLevels + 1];
  level_sizes(w, h, top, ws, hs);
  P.img.resize(static_cast<size_t>(top) + 1);
  P.der.resize(static_cast<size_t>(top) + 1);
  P.img[0].assign(data, data + static_cast<size_t>(w) * h);
  for (int l = 1; l <= top; ++l) {
    P.img[l].resize(static_cast<size_t>(ws[l]) * hs[l]);
    for (int y = 0; y < hs[l]; ++y)
      for (int x = 0; x < ws[l]; ++x) P.img[l][static_cast<size_t>(y) * ws[l] + x] = pyrdown_pixel(P.img[l - 1].data(), ws[l - 1], hs[l - 1], ws[l - 1], x, y);
  }
  for (int l = 0; l <= top; ++l) {
    P.der[l].resize(static_cast<size_t>(ws[l]) * hs[l] * 2);
    for (int y = 0; y < hs[l]; ++y)
      for (int x = 0; x < ws[l]; ++x) {
        const size_t i = (static_cast<size_t>(y) * ws[l] + x) * 2;
        scharr_pixel(P.img[l].data(), ws[l], hs[l], ws[l], x, y, &P.der[l][i], &P.der[l][i + 1]);
      }
    P.levels.push_back(Level{P.img[l].data(), P.der[l].data(), ws[l], hs[l], ws[l], ws[l]});
  }
  return P;
}

}  // namespace

}  // namespace egogeo::gpu

using namespace egogeo::gpu;

extern "C" int egogeo_gpu_reference_track(const egogeo_gpu_params* p, const unsigned char* prev, const unsigned char* next, int width,
                                          int height, int n, const float* pts, float* fwd, float* back, unsigned char* status, char* err,
                                          size_t err_len) {
  if (!p || !prev || !next || (n > 0 && (!pts || !fwd || !status)) || n < 0) {
    put_message(err, err_len, "reference_track: NULL argument");
    return EGOGEO_GPU_EINVAL;
  }
  const std::string e = check_params(*p);
  if (!e.empty()) {
    put_message(err, err_len, "reference_track: " + e);
    return EGOGEO_GPU_EINVAL;
  }
  if (width < 32 || height < 32 || width > kMaxSide || height > kMaxSide) {
    put_message(err, err_len, "reference_track: frame must be 32..32768 px on each side");
    return EGOGEO_GPU_EINVAL;
  }
  const int top = pyramid_top(width, height, p->levels, p->window);
  const HostPyramid A = build(prev, width, height, top), B = build(next, width, height, top);
  std::vector<int16_t> scratch(3 * static_cast<size_t>(p->window) * p->window);
  const double eps2 = static_cast<double>(p->epsilon) * p->epsilon;
  const float fb2 = p->fb_threshold * p->fb_threshold;
  for (int i = 0; i < n; ++i) {
    const float x = pts[2 * i], y = pts[2 * i + 1];
    float fx, fy, bx, by;
    const bool s1 = lk_point(A.levels.data(), B.levels.data(), top, p->window, p->iterations, static_cast<float>(eps2), p->min_eig, x, y, 0, 0,
                             false, scratch.data(), &fx, &fy);
    const bool s2 = lk_point(B.levels.data(), A.levels.data(), top, p->window, p->iterations, static_cast<float>(eps2), p->min_eig, fx, fy, x,
                             y, true, scratch.data(), &bx, &by);
    fwd[2 * i] = fx;
    fwd[2 * i + 1] = fy;
    if (back) {
      back[2 * i] = bx;
      back[2 * i + 1] = by;
    }
    const float dx = bx - x, dy = by - y;
    status[i] = static_cast<unsigned char>((s1 ? EGOGEO_GPU_FWD : 0) | (s2 ? EGOGEO_GPU_BACK : 0) |
                                           (fx >= 0 && fy >= 0 && fx < width - 1 && fy < height - 1 ? EGOGEO_GPU_INSIDE : 0) |
                                           (dx * dx + dy * dy < fb2 ? EGOGEO_GPU_FB : 0));
  }
  return EGOGEO_GPU_OK;
}

extern "C" int egogeo_gpu_reference_detect(const unsigned char* img, int width, int height, const egogeo_gpu_detect_job* job, char* err,
                                           size_t err_len) {
  if (!img || !job) {
    put_message(err, err_len, "reference_detect: NULL argument");
    return EGOGEO_GPU_EINVAL;
  }
  if (width < 32 || height < 32 || width > kMaxSide || height > kMaxSide) {
    put_message(err, err_len, "reference_detect: frame must be 32..32768 px on each side");
    return EGOGEO_GPU_EINVAL;
  }
  const std::string e = check_detect_job(*job, width, height);
  if (!e.empty()) {
    put_message(err, err_len, "reference_" + e);
    return EGOGEO_GPU_EINVAL;
  }
  std::vector<uint16_t> score(static_cast<size_t>(width) * height, 0);
  for (int y = 3; y < height - 3; ++y)
    for (int x = 3; x < width - 3; ++x) score[static_cast<size_t>(y) * width + x] = static_cast<uint16_t>(fast_score(img, width, x, y, job->threshold));
  std::vector<Corner> corners;
  for (int y = 3; y < height - 3; ++y)
    for (int x = 3; x < width - 3; ++x) {
      const uint16_t s = score[static_cast<size_t>(y) * width + x];
      if (s == 0) continue;
      bool max = true;
      for (int dy = -1; dy <= 1 && max; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          if ((dx || dy) && score[static_cast<size_t>(y + dy) * width + x + dx] >= s) {
            max = false;
            break;
          }
      if (max) corners.push_back(Corner{static_cast<uint16_t>(x), static_cast<uint16_t>(y), s, 0});
    }
  finish_detect(corners, width, height, *job);
  return EGOGEO_GPU_OK;
}
