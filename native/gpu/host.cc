// Host code of libegogeo_gpu that needs no device: argument checks, pyramid geometry, Tracker::detect's
// bucketing, and the host reference of the kernels' numerics (klt_core.h compiled for the CPU).
#include "internal.h"
#include "klt_core.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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

void host_fast(const uint8_t* img, int w, int h, int pitch, int threshold, std::vector<uint16_t>& score, std::vector<Corner>& corners) {
  score.assign(static_cast<size_t>(w) * h, 0);
  for (int y = 3; y < h - 3; ++y)
    for (int x = 3; x < w - 3; ++x) score[static_cast<size_t>(y) * w + x] = static_cast<uint16_t>(fast_score(img, pitch, x, y, threshold));
  corners.clear();
  for (int y = 3; y < h - 3; ++y)
    for (int x = 3; x < w - 3; ++x) {
      const uint16_t s = score[static_cast<size_t>(y) * w + x];
      if (s == 0) continue;
      bool max = true;
      for (int dy = -1; dy <= 1 && max; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          if ((dx || dy) && score[static_cast<size_t>(y + dy) * w + x + dx] >= s) {
            max = false;
            break;
          }
      if (max) corners.push_back(Corner{static_cast<uint16_t>(x), static_cast<uint16_t>(y), s, 0});
    }
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "1") == 0;
}

namespace {

/// A host pyramid: levels 0..top with their derivatives, as the device keeps them.
struct HostPyramid {
  std::vector<std::vector<uint8_t>> img;
  std::vector<std::vector<int16_t>> der;
  std::vector<Level> levels;
};

HostPyramid build(const unsigned char* data, int w, int h, int top, int pitch) {
  HostPyramid P;
  int ws[kMaxLevels + 1], hs[kMaxLevels + 1];
  level_sizes(w, h, top, ws, hs);
  P.img.resize(static_cast<size_t>(top) + 1);
  P.der.resize(static_cast<size_t>(top) + 1);
  P.img[0].resize(static_cast<size_t>(w) * h);
  for (int y = 0; y < h; ++y) std::memcpy(P.img[0].data() + static_cast<size_t>(y) * w, data + static_cast<size_t>(y) * pitch, static_cast<size_t>(w));
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

/// Forward KLT, backward KLT from the forward result, and the four checks, as k_track.
void track_points(const HostPyramid& A, const HostPyramid& B, int top, const egogeo_gpu_params& p, int width, int height, int n, const float* pts,
                  float* fwd, float* back, unsigned char* status) {
  std::vector<int16_t> scratch(3 * static_cast<size_t>(p.window) * p.window);
  const double eps2 = static_cast<double>(p.epsilon) * p.epsilon;
  const float fb2 = p.fb_threshold * p.fb_threshold;
  for (int i = 0; i < n; ++i) {
    const float x = pts[2 * i], y = pts[2 * i + 1];
    float fx, fy, bx, by;
    const bool s1 = lk_point(Solo{}, A.levels.data(), B.levels.data(), top, p.window, p.iterations, static_cast<float>(eps2), p.min_eig, x, y, 0, 0, false,
                             scratch.data(), &fx, &fy);
    const bool s2 = lk_point(Solo{}, B.levels.data(), A.levels.data(), top, p.window, p.iterations, static_cast<float>(eps2), p.min_eig, fx, fy, x, y, true,
                             scratch.data(), &bx, &by);
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
}

}  // namespace

struct HostBackend::Impl {
  egogeo_gpu_params p;
  std::vector<HostPyramid> pyr;  // slot * buffers + buffer
  std::vector<int> top;
  std::vector<std::vector<uint16_t>> scores;  // per detect job of the last call
};

HostBackend::HostBackend(const egogeo_gpu_params& p) : m(new Impl) {
  m->p = p;
  m->pyr.resize(static_cast<size_t>(p.batch) * p.buffers);
  m->top.assign(m->pyr.size(), -1);
}

HostBackend::~HostBackend() { delete m; }

void HostBackend::push(const egogeo_gpu_frame* frames, int n) {
  for (int i = 0; i < n; ++i) {
    const egogeo_gpu_frame& f = frames[i];
    const size_t k = static_cast<size_t>(f.slot) * m->p.buffers + f.buffer;
    m->top[k] = pyramid_top(f.width, f.height, m->p.levels, m->p.window);
    m->pyr[k] = build(f.data, f.width, f.height, m->top[k], f.stride);
  }
}

std::string HostBackend::track(const egogeo_gpu_track_job* jobs, int n) {
  for (int i = 0; i < n; ++i) {
    const egogeo_gpu_track_job& j = jobs[i];
    const size_t a = static_cast<size_t>(j.slot) * m->p.buffers + j.from, b = static_cast<size_t>(j.slot) * m->p.buffers + j.to;
    const Level& L = m->pyr[a].levels[0];
    track_points(m->pyr[a], m->pyr[b], m->top[a], m->p, L.w, L.h, j.n, j.pts, j.fwd, j.back, j.status);
  }
  return "";
}

void HostBackend::detect(const egogeo_gpu_detect_job* jobs, int n) {
  m->scores.resize(static_cast<size_t>(n));
  std::vector<Corner> corners;
  for (int i = 0; i < n; ++i) {
    const egogeo_gpu_detect_job& j = jobs[i];
    const Level& L = m->pyr[static_cast<size_t>(j.slot) * m->p.buffers + j.buffer].levels[0];
    host_fast(L.img, L.w, L.h, L.pitch, j.threshold, m->scores[static_cast<size_t>(i)], corners);
    finish_detect(corners, L.w, L.h, j);
  }
}

const std::vector<uint16_t>& HostBackend::scores(int job) const { return m->scores[static_cast<size_t>(job)]; }

// ---- the self-test --------------------------------------------------------------------------

namespace {

/// Smooth sinusoids (trackable) plus hashed 7 px blocks (FAST corners), sampled at (x + sx, y + sy).
std::vector<uint8_t> selftest_image(float sx, float sy) {
  const int w = kSelfTestW, h = kSelfTestH;
  std::vector<uint8_t> img(static_cast<size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double u = x + sx, v = y + sy;
      double s = 0;
      for (int k = 0; k < 12; ++k) s += std::sin((0.05 + 0.021 * k) * u + 0.7 * k) * std::cos((0.04 + 0.017 * (11 - k)) * v + 1.3 * k);
      const int bx = static_cast<int>(std::floor(u / 7)), by = static_cast<int>(std::floor(v / 7));
      const uint32_t hsh = (static_cast<uint32_t>(bx) * 73856093u) ^ (static_cast<uint32_t>(by) * 19349663u);
      const int blk = static_cast<int>((hsh >> 7) % 3) - 1;
      img[static_cast<size_t>(y) * w + x] = static_cast<uint8_t>(std::lround(std::fmin(255.0, std::fmax(0.0, 128 + 14 * s + 30 * blk))));
    }
  return img;
}

constexpr int kSelMaxFeatures = 60, kSelCols = 4, kSelRows = 3, kSelMinDistance = 8;

}  // namespace

void selftest_inputs(std::vector<uint8_t>& a, std::vector<uint8_t>& b, std::vector<float>& pts, std::vector<float>& existing) {
  a = selftest_image(0, 0);
  b = selftest_image(0.6f, -0.4f);
  pts.clear();
  for (int k = 0; k < kSelfTestPoints; ++k) {  // an 8 x 6 grid, sub-pixel offsets, a few near the border
    pts.push_back(2.5f + (k % 8) * 22.f + 0.25f * (k % 3));
    pts.push_back(1.75f + (k / 8) * 23.f + 0.5f * (k % 2));
  }
  existing = {20.f, 20.f, 81.5f, 40.25f, 150.f, 100.f, 41.f, 99.9f};
}

egogeo_gpu_params selftest_params(const egogeo_gpu_params& p) {
  egogeo_gpu_params q = p;
  q.max_width = kSelfTestW;
  q.max_height = kSelfTestH;
  q.batch = 2;
  q.buffers = 2;
  q.max_points = kSelfTestPoints;
  return q;
}

namespace {

void detect_jobs(SelfTestRun& r, const std::vector<float>& existing, egogeo_gpu_detect_job* jobs) {
  for (int k = 0; k < 2; ++k) {
    r.xy[k].assign(2 * kSelfTestCapacity, 0.f);
    r.score[k].assign(kSelfTestCapacity, 0.f);
  }
  jobs[0] = egogeo_gpu_detect_job{0, 0, kSelfTestThreshold, 0, 1, 1, 1, 0, nullptr, kSelfTestCapacity, r.xy[0].data(), r.score[0].data(), &r.count[0],
                                  &r.found[0]};
  jobs[1] = egogeo_gpu_detect_job{1, 0, kSelfTestThreshold, kSelMaxFeatures, kSelCols, kSelRows, kSelMinDistance, static_cast<int>(existing.size() / 2),
                                  existing.data(), kSelfTestCapacity, r.xy[1].data(), r.score[1].data(), &r.count[1], &r.found[1]};
}

void trim(SelfTestRun& r) {
  for (int k = 0; k < 2; ++k) {
    r.xy[k].resize(2 * static_cast<size_t>(r.count[k]));
    r.score[k].resize(static_cast<size_t>(r.count[k]));
  }
}

}  // namespace

std::string selftest_run(egogeo_gpu_context* ctx, SelfTestRun& r, bool (*scores)(egogeo_gpu_context*, std::vector<uint16_t>&)) {
  std::vector<uint8_t> a, b;
  std::vector<float> pts, existing;
  selftest_inputs(a, b, pts, existing);
  const int w = kSelfTestW, h = kSelfTestH;
  // Slot 0 holds (a, b), slot 1 (b, a): four frames in one call.
  const egogeo_gpu_frame fr[4] = {{0, 0, a.data(), w, h, w}, {0, 1, b.data(), w, h, w}, {1, 0, b.data(), w, h, w}, {1, 1, a.data(), w, h, w}};
  if (egogeo_gpu_push_frames(ctx, fr, 4) != EGOGEO_GPU_OK) return std::string("push_frames: ") + egogeo_gpu_last_error(ctx);
  egogeo_gpu_detect_job dj[2];
  detect_jobs(r, existing, dj);
  if (egogeo_gpu_detect(ctx, dj, 2) != EGOGEO_GPU_OK) return std::string("detect: ") + egogeo_gpu_last_error(ctx);
  trim(r);
  if (!scores(ctx, r.scores)) return std::string("reading the FAST scores back: ") + egogeo_gpu_last_error(ctx);
  egogeo_gpu_track_job tj[2];
  for (int k = 0; k < 2; ++k) {
    r.fwd[k].assign(pts.size(), 0.f);
    r.back[k].assign(pts.size(), 0.f);
    r.status[k].assign(pts.size() / 2, 0);
    tj[k] = egogeo_gpu_track_job{k, 0, 1, kSelfTestPoints, pts.data(), r.fwd[k].data(), r.back[k].data(), r.status[k].data()};
  }
  if (egogeo_gpu_track(ctx, tj, 2) != EGOGEO_GPU_OK) return std::string("track: ") + egogeo_gpu_last_error(ctx);
  return "";
}

SelfTestRun selftest_reference(const egogeo_gpu_params& p) {
  std::vector<uint8_t> a, b;
  std::vector<float> pts, existing;
  selftest_inputs(a, b, pts, existing);
  const int w = kSelfTestW, h = kSelfTestH;
  SelfTestRun r;
  std::vector<Corner> corners;
  host_fast(a.data(), w, h, w, kSelfTestThreshold, r.scores, corners);
  egogeo_gpu_detect_job dj[2];
  detect_jobs(r, existing, dj);
  egogeo_gpu_reference_detect(a.data(), w, h, &dj[0], nullptr, 0);
  egogeo_gpu_reference_detect(b.data(), w, h, &dj[1], nullptr, 0);
  trim(r);
  const int top = pyramid_top(w, h, p.levels, p.window);
  const HostPyramid A = build(a.data(), w, h, top, w), B = build(b.data(), w, h, top, w);
  for (int k = 0; k < 2; ++k) {
    r.fwd[k].assign(pts.size(), 0.f);
    r.back[k].assign(pts.size(), 0.f);
    r.status[k].assign(pts.size() / 2, 0);
    track_points(k == 0 ? A : B, k == 0 ? B : A, top, p, w, h, kSelfTestPoints, pts.data(), r.fwd[k].data(), r.back[k].data(), r.status[k].data());
  }
  return r;
}

std::string selftest_compare(const SelfTestRun& want, const SelfTestRun& got) {
  const std::string head = "device self-test failed (" + std::to_string(kSelfTestW) + "x" + std::to_string(kSelfTestH) + " built-in image): ";
  if (got.scores.size() != want.scores.size()) return head + "FAST score plane has " + std::to_string(got.scores.size()) + " pixels, expected " + std::to_string(want.scores.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.scores.size(); ++i)
    if (got.scores[i] != want.scores[i] && bad++ == 0) first = i;
  if (bad)
    return head + "FAST score at (" + std::to_string(first % kSelfTestW) + ", " + std::to_string(first / kSelfTestW) + ") is " +
           std::to_string(got.scores[first]) + " on the device, " + std::to_string(want.scores[first]) + " on the host (" + std::to_string(bad) + " of " +
           std::to_string(want.scores.size()) + " pixels differ)";
  const char* what[2] = {"FAST corners", "corners after selection"};
  for (int k = 0; k < 2; ++k) {
    if (got.found[k] != want.found[k] || got.count[k] != want.count[k])
      return head + what[k] + ": " + std::to_string(got.count[k]) + " of " + std::to_string(got.found[k]) + " found on the device, " +
             std::to_string(want.count[k]) + " of " + std::to_string(want.found[k]) + " on the host";
    for (int i = 0; i < want.count[k]; ++i)
      if (got.xy[k][2 * i] != want.xy[k][2 * i] || got.xy[k][2 * i + 1] != want.xy[k][2 * i + 1] || got.score[k][i] != want.score[k][i]) {
        auto at = [&](const SelfTestRun& r) {
          return "(" + std::to_string(static_cast<int>(r.xy[k][2 * i])) + ", " + std::to_string(static_cast<int>(r.xy[k][2 * i + 1])) + ") score " +
                 std::to_string(static_cast<int>(r.score[k][i]));
        };
        return head + what[k] + ": #" + std::to_string(i) + " is " + at(got) + " on the device, " + at(want) + " on the host";
      }
  }
  for (int k = 0; k < 2; ++k) {
    int bad_status = 0, worst = -1;
    double d = 0;
    for (int i = 0; i < kSelfTestPoints; ++i) {
      if (got.status[k][i] != want.status[k][i]) ++bad_status;
      const double e = std::max(std::hypot(got.fwd[k][2 * i] - want.fwd[k][2 * i], got.fwd[k][2 * i + 1] - want.fwd[k][2 * i + 1]),
                                std::hypot(got.back[k][2 * i] - want.back[k][2 * i], got.back[k][2 * i + 1] - want.back[k][2 * i + 1]));
      if (!(e <= d)) {  // NaN counts as worst
        d = e;
        worst = i;
      }
    }
    if (bad_status) return head + "KLT job " + std::to_string(k) + ": status differs on " + std::to_string(bad_status) + " of " + std::to_string(kSelfTestPoints) + " points";
    if (!(d <= 1e-3))
      return head + "KLT job " + std::to_string(k) + ": point " + std::to_string(worst) + " differs by " + std::to_string(d) + " px from the host (limit 0.001)";
  }
  return "";
}

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
  const HostPyramid A = build(prev, width, height, top, width), B = build(next, width, height, top, width);
  track_points(A, B, top, *p, width, height, n, pts, fwd, back, status);
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
  std::vector<uint16_t> score;
  std::vector<Corner> corners;
  host_fast(img, width, height, width, job->threshold, score, corners);
  finish_detect(corners, width, height, *job);
  return EGOGEO_GPU_OK;
}
