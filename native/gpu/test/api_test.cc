// egogeo_gpu's C interface without Node or OpenCV: argument checks, the no-device path, the host
// reference on a synthetic pair with a known shift, and -- where a device exists -- the device
// against the host reference. Exit 0 when every check holds; prints each failure.
#include "egogeo_gpu.h"
#include "options_env.h"
#include "klt_defaults.h"
#include "test/check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using egogeo::gpu::test::check;

namespace {

/// A smooth random texture sampled at (x + sx, y + sy): a frame pair with a known sub-pixel shift.
std::vector<unsigned char> texture(int w, int h, float sx, float sy) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.f, 6.2831853f);
  float fx[24], fy[24], ph[24];
  for (int k = 0; k < 24; ++k) {
    fx[k] = 0.03f + 0.12f * (k % 6) / 6.f;
    fy[k] = 0.03f + 0.12f * (k / 6) / 4.f;
    ph[k] = u(rng);
  }
  std::vector<unsigned char> img(static_cast<size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float v = 0;
      for (int k = 0; k < 24; ++k) v += std::sin(fx[k] * (x + sx) + ph[k]) * std::cos(fy[k] * (y + sy) + 0.5f * ph[k]);
      // sd of v ~ 3.5: +-3.5 sd stays inside 0..255 (no clipping, which would bias the shift).
      img[static_cast<size_t>(y) * w + x] = static_cast<unsigned char>(std::lround(std::fmin(255.f, std::fmax(0.f, 128 + 9 * v))));
    }
  return img;
}

}  // namespace

int main() {
  const char* inject_env = std::getenv("EGOGEO_GPU_SELFTEST_INJECT");
  const char* ref_env = std::getenv("EGOGEO_GPU_REFERENCE");
  const bool inject = inject_env && std::strcmp(inject_env, "1") == 0;
  std::printf("EGOGEO_GPU_REFERENCE=%s EGOGEO_GPU_SELFTEST_INJECT=%s\n", ref_env ? ref_env : "", inject_env ? inject_env : "");
  check(egogeo_gpu_abi_version() == EGOGEO_GPU_ABI, "ABI version");
  egogeo_gpu_params p;
  egogeo_gpu_default_params(&p);
  check(p.options == 0, "no options by default");
  p.options = egogeo::gpu::options_from_env();
  check(p.window == EGOGEO_KLT_WINDOW && p.levels == EGOGEO_KLT_LEVELS && p.iterations == EGOGEO_KLT_ITERATIONS &&
            p.epsilon == static_cast<float>(EGOGEO_KLT_EPSILON) && p.fb_threshold == static_cast<float>(EGOGEO_KLT_FB_THRESHOLD),
        "defaults are native/klt_defaults.h (the CPU tracker's)");

  egogeo_gpu_context* ctx = nullptr;
  check(egogeo_gpu_create(&p, nullptr) == EGOGEO_GPU_EINVAL, "create without out pointer is EINVAL");
  check(egogeo_gpu_create(nullptr, &ctx) == EGOGEO_GPU_EINVAL && ctx && std::strstr(egogeo_gpu_last_error(ctx), "NULL"), "create(NULL params) names it");
  egogeo_gpu_destroy(ctx);
  egogeo_gpu_params bad = p;
  bad.window = 2;
  check(egogeo_gpu_create(&bad, &ctx) == EGOGEO_GPU_EINVAL && std::strstr(egogeo_gpu_last_error(ctx), "window"), "bad window is EINVAL naming window");
  egogeo_gpu_destroy(ctx);
  egogeo_gpu_destroy(nullptr);

  const int devices = egogeo_gpu_device_count();
  char name[256];
  std::printf("devices: %d\n", devices);
  if (devices == 0) {
    check(egogeo_gpu_device_name(0, name, sizeof name) == EGOGEO_GPU_ENODEV && std::strstr(name, "no CUDA device"), "device_name: ENODEV, 'no CUDA device'");
    const int rc = egogeo_gpu_create(&p, &ctx);
    const std::string msg = egogeo_gpu_last_error(ctx);
    check(rc == EGOGEO_GPU_ENODEV && msg.compare(0, 14, "no CUDA device") == 0, "create without a device: ENODEV, '" + msg + "'");
    unsigned char px[32 * 32] = {};
    egogeo_gpu_frame f{0, 0, px, 32, 32, 32};
    const int prc = egogeo_gpu_push_frames(ctx, &f, 1);
    check(prc == EGOGEO_GPU_EINVAL && std::strstr(egogeo_gpu_last_error(ctx), "not created"), "calls on a failed context are refused");
    egogeo_gpu_destroy(ctx);
  } else {
    const int rc = egogeo_gpu_device_name(0, name, sizeof name);
    check(rc == EGOGEO_GPU_OK, std::string("device 0: ") + (rc == EGOGEO_GPU_OK ? name : "(no name)"));
  }

  // Host reference: a smooth texture shifted by (1.3, -0.7) px; interior points must recover it.
  const int w = 320, h = 240;
  const float sx = 1.3f, sy = -0.7f;
  const std::vector<unsigned char> a = texture(w, h, 0, 0), b = texture(w, h, sx, sy);
  std::vector<float> pts;
  for (int y = 30; y < h - 30; y += 20)
    for (int x = 30; x < w - 30; x += 20) {
      pts.push_back(static_cast<float>(x) + 0.25f);
      pts.push_back(static_cast<float>(y) + 0.5f);
    }
  const int n = static_cast<int>(pts.size() / 2);
  std::vector<float> fwd(pts.size()), back(pts.size());
  std::vector<unsigned char> st(static_cast<size_t>(n));
  char err[256] = "";
  check(egogeo_gpu_reference_track(&p, a.data(), b.data(), w, h, n, pts.data(), fwd.data(), back.data(), st.data(), err, sizeof err) == EGOGEO_GPU_OK,
        "reference_track runs");
  std::vector<double> errs;
  for (int i = 0; i < n; ++i) {
    if (st[static_cast<size_t>(i)] != EGOGEO_GPU_KEEP) continue;
    // b(x) = a(x + s): a point at p in a appears at p - s in b.
    errs.push_back(std::hypot(fwd[2 * i] - (pts[2 * i] - sx), fwd[2 * i + 1] - (pts[2 * i + 1] - sy)));
  }
  std::sort(errs.begin(), errs.end());
  const double med = errs.empty() ? 1e9 : errs[errs.size() / 2];
  check(static_cast<int>(errs.size()) >= n * 3 / 4, "reference keeps >= 75% of tracks on a pure shift (" + std::to_string(errs.size()) + "/" + std::to_string(n) + ")");
  check(med < 0.05, "reference recovers the shift: median error " + std::to_string(med) + " px < 0.05");
  // Windows of every shape the device deals out to a warp's 32 lanes (klt_core.h): fewer pixels
  // than lanes (5), even sides (8, 16) and the largest (31) all track the shift (the small ones less
  // well on this smooth texture: 30 of 117 kept at 5 px, median 0.09 px).
  for (const int win : {5, 8, 16, 31}) {
    egogeo_gpu_params q = p;
    q.window = win;
    std::vector<float> f2(pts.size()), b2(pts.size());
    std::vector<unsigned char> s2(static_cast<size_t>(n));
    const int rc = egogeo_gpu_reference_track(&q, a.data(), b.data(), w, h, n, pts.data(), f2.data(), b2.data(), s2.data(), err, sizeof err);
    std::vector<double> e2;
    for (int i = 0; rc == EGOGEO_GPU_OK && i < n; ++i)
      if (s2[static_cast<size_t>(i)] == EGOGEO_GPU_KEEP) e2.push_back(std::hypot(f2[2 * i] - (pts[2 * i] - sx), f2[2 * i + 1] - (pts[2 * i + 1] - sy)));
    std::sort(e2.begin(), e2.end());
    const double m2 = e2.empty() ? 1e9 : e2[e2.size() / 2];
    check(rc == EGOGEO_GPU_OK && static_cast<int>(e2.size()) >= n / 5 && m2 < (win < 13 ? 0.15 : 0.05),
          "window " + std::to_string(win) + ": reference keeps " + std::to_string(e2.size()) + "/" + std::to_string(n) + ", median error " + std::to_string(m2) + " px");
  }
  check(egogeo_gpu_reference_track(&p, a.data(), b.data(), 16, 16, n, pts.data(), fwd.data(), back.data(), st.data(), err, sizeof err) == EGOGEO_GPU_EINVAL &&
            std::strstr(err, "32"),
        "reference_track refuses a 16x16 frame");

  // Reference detection with bucketing on random 6x6 px blocks (corners everywhere): the per-cell
  // quota, the spacing and the count limit hold.
  std::vector<unsigned char> blocks(static_cast<size_t>(w) * h);
  {
    std::mt19937 rng(3);
    std::vector<unsigned char> lv(static_cast<size_t>(w / 6 + 1) * (h / 6 + 1));
    for (auto& v : lv) v = static_cast<unsigned char>(rng() % 256);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)  // + pixel noise: plateaus of equal scores would all fall to the strict non-max suppression
        blocks[static_cast<size_t>(y) * w + x] = static_cast<unsigned char>(lv[static_cast<size_t>(y / 6) * (w / 6 + 1) + x / 6] / 2u + 64u + static_cast<unsigned>(rng() % 16u));
  }
  std::vector<float> xy(2 * 1000), score(1000);
  int count = 0, found = 0;
  egogeo_gpu_detect_job dj{0, 0, 12, 200, 4, 3, 8, 0, nullptr, 1000, xy.data(), score.data(), &count, &found};
  check(egogeo_gpu_reference_detect(blocks.data(), w, h, &dj, err, sizeof err) == EGOGEO_GPU_OK, "reference_detect runs");
  std::vector<int> per(12, 0);
  bool sorted = true, spaced = true;
  for (int i = 0; i < count; ++i) {
    per[static_cast<size_t>(std::min(3, static_cast<int>(xy[2 * i] / (w / 4.f))) + 4 * std::min(2, static_cast<int>(xy[2 * i + 1] / (h / 3.f))))]++;
    if (i > 0 && score[i] > score[i - 1]) sorted = false;
    for (int j = 0; j < i; ++j)
      if (std::fabs(xy[2 * i] - xy[2 * j]) < 8 && std::fabs(xy[2 * i + 1] - xy[2 * j + 1]) < 8 && static_cast<int>(xy[2 * i]) / 8 == static_cast<int>(xy[2 * j]) / 8 &&
          static_cast<int>(xy[2 * i + 1]) / 8 == static_cast<int>(xy[2 * j + 1]) / 8)
        spaced = false;
  }
  bool quota = true;
  for (int c : per) quota = quota && c <= 200 / 12;
  check(found > 0 && count > 0 && count <= 200 && found >= count, "FAST finds corners (" + std::to_string(found) + ", kept " + std::to_string(count) + ")");
  check(sorted && quota && spaced, "kept corners: strongest first, per-cell quota, no two in one min_distance cell");
  egogeo_gpu_detect_job badj = dj;
  badj.threshold = 0;
  check(egogeo_gpu_reference_detect(blocks.data(), w, h, &badj, err, sizeof err) == EGOGEO_GPU_EINVAL && std::strstr(err, "threshold"), "threshold 0 is refused");

  if (devices > 0 && inject) {
    // The test hook: EGOGEO_GPU_SELFTEST_INJECT=1 perturbs one score of the device's self-test, as a
    // device whose arithmetic went wrong would: create must refuse with one line saying what differed.
    const int rc = egogeo_gpu_create(&p, &ctx);
    const std::string msg = egogeo_gpu_last_error(ctx);
    check(rc == EGOGEO_GPU_ESELFTEST && msg.find("self-test failed") != std::string::npos && msg.find("FAST score at") != std::string::npos &&
              msg.find('\n') == std::string::npos,
          "a failing device: create is ESELFTEST with one line: '" + msg + "'");
    unsigned char px[32 * 32] = {};
    egogeo_gpu_frame f{0, 0, px, 32, 32, 32};
    const int prc = egogeo_gpu_push_frames(ctx, &f, 1);
    check(prc == EGOGEO_GPU_EINVAL && std::strstr(egogeo_gpu_last_error(ctx), "not created"), "calls on a context that failed its self-test are refused");
    egogeo_gpu_destroy(ctx);
  } else if (devices > 0) {
    // The device (or, with EGOGEO_GPU_REFERENCE=1, the host reference behind the same interface)
    // must give what the host reference gives: two slots of three buffers, six frames in one push.
    p.max_width = w;
    p.max_height = h;
    p.max_points = n;
    p.batch = 2;
    int rc = egogeo_gpu_create(&p, &ctx);
    check(rc == EGOGEO_GPU_OK, std::string("create (self-test passed): ") + egogeo_gpu_last_error(ctx));
    if (rc == EGOGEO_GPU_OK) {
      std::vector<unsigned char> wide(static_cast<size_t>(w + 7) * h);  // a stride above the width
      for (int y = 0; y < h; ++y) std::memcpy(wide.data() + static_cast<size_t>(y) * (w + 7), b.data() + static_cast<size_t>(y) * w, static_cast<size_t>(w));
      const egogeo_gpu_frame fr[7] = {{0, 0, a.data(), w, h, w},      {0, 1, b.data(), w, h, w}, {0, 2, blocks.data(), w, h, w},
                                      {1, 0, wide.data(), w, h, w + 7}, {1, 1, a.data(), w, h, w}, {1, 2, blocks.data(), w, h, w},
                                      {1, 2, a.data(), w, h, w}};
      rc = egogeo_gpu_push_frames(ctx, fr, 7);
      check(rc == EGOGEO_GPU_EINVAL && std::strstr(egogeo_gpu_last_error(ctx), "batch x buffers = 6"), std::string("7 frames into 2 x 3 buffers are refused: ") + egogeo_gpu_last_error(ctx));
      rc = egogeo_gpu_push_frames(ctx, fr, 6);
      check(rc == EGOGEO_GPU_OK, std::string("push_frames of batch x buffers = 6 frames: ") + egogeo_gpu_last_error(ctx));
      std::vector<float> gf(2 * pts.size()), gb(2 * pts.size());
      std::vector<unsigned char> gs(2 * static_cast<size_t>(n));
      egogeo_gpu_track_job tj[2] = {{0, 0, 1, n, pts.data(), gf.data(), gb.data(), gs.data()},
                                    {1, 1, 0, n, pts.data(), gf.data() + pts.size(), gb.data() + pts.size(), gs.data() + n}};
      rc = egogeo_gpu_track(ctx, tj, 2);
      check(rc == EGOGEO_GPU_OK, std::string("track (2 jobs): ") + egogeo_gpu_last_error(ctx));
      double d = 0;
      int same = 0, bits = 0;
      for (int k = 0; k < 2; ++k)  // job 1 tracks a -> b as well (slot 1 holds b in buffer 0, a in 1): the same answers
        for (int i = 0; i < n; ++i) {
          const size_t o = static_cast<size_t>(k) * pts.size();
          d = std::fmax(d, std::hypot(gf[o + 2 * i] - fwd[2 * i], gf[o + 2 * i + 1] - fwd[2 * i + 1]));
          d = std::fmax(d, std::hypot(gb[o + 2 * i] - back[2 * i], gb[o + 2 * i + 1] - back[2 * i + 1]));
          same += gs[static_cast<size_t>(k) * n + i] == st[static_cast<size_t>(i)];
          // Bit for bit is what klt_core.h aims at (--fmad=false, the same float steps on both sides).
          bits += gf[o + 2 * i] == fwd[2 * i] && gf[o + 2 * i + 1] == fwd[2 * i + 1] && gb[o + 2 * i] == back[2 * i] && gb[o + 2 * i + 1] == back[2 * i + 1];
        }
      check(d < 1e-3 && same == 2 * n, "tracks = host reference (max diff " + std::to_string(d) + ", same status " + std::to_string(same) + "/" + std::to_string(2 * n) +
                                           ", bit-identical " + std::to_string(bits) + "/" + std::to_string(2 * n) + ")");

      // Detection: raw corners with scores (job 0), and the bucketed selection with existing tracks
      // (job 1), against reference_detect.
      const std::vector<float> existing = {40.f, 40.f, 161.5f, 100.25f, 300.f, 200.f, 10.f, 230.f};
      std::vector<float> rxy(2 * 20000), rsc(20000), sxy(2 * 1000), ssc(1000);
      int rcount = 0, rfound = 0, scount = 0, sfound = 0;
      egogeo_gpu_detect_job rj{0, 0, 12, 0, 1, 1, 1, 0, nullptr, 20000, rxy.data(), rsc.data(), &rcount, &rfound};
      egogeo_gpu_detect_job sj{0, 0, 12, 200, 4, 3, 8, 4, existing.data(), 1000, sxy.data(), ssc.data(), &scount, &sfound};
      const int r1 = egogeo_gpu_reference_detect(blocks.data(), w, h, &rj, err, sizeof err);
      const int r2 = egogeo_gpu_reference_detect(blocks.data(), w, h, &sj, err, sizeof err);
      check(r1 == EGOGEO_GPU_OK && r2 == EGOGEO_GPU_OK && scount > 0 && scount < 200 - 4, "reference_detect with existing tracks runs (" + std::to_string(scount) + " kept)");
      std::vector<float> g0(rxy.size()), g0s(rsc.size()), g1(sxy.size()), g1s(ssc.size());
      int c0 = 0, f0 = 0, c1 = 0, f1 = 0;
      egogeo_gpu_detect_job gj[2] = {{0, 2, 12, 0, 1, 1, 1, 0, nullptr, 20000, g0.data(), g0s.data(), &c0, &f0},
                                     {1, 2, 12, 200, 4, 3, 8, 4, existing.data(), 1000, g1.data(), g1s.data(), &c1, &f1}};
      rc = egogeo_gpu_detect(ctx, gj, 2);
      check(rc == EGOGEO_GPU_OK, std::string("detect (2 jobs): ") + egogeo_gpu_last_error(ctx));
      check(f0 == rfound && c0 == rcount && std::equal(g0.begin(), g0.begin() + 2 * c0, rxy.begin()) && std::equal(g0s.begin(), g0s.begin() + c0, rsc.begin()),
            "raw FAST corners and scores = host reference (" + std::to_string(c0) + " vs " + std::to_string(rcount) + ")");
      check(f1 == sfound && c1 == scount && std::equal(g1.begin(), g1.begin() + 2 * c1, sxy.begin()) && std::equal(g1s.begin(), g1s.begin() + c1, ssc.begin()),
            "corners after selection = host reference (" + std::to_string(c1) + " vs " + std::to_string(scount) + ")");
      // A capacity below the count: the strongest `capacity` corners, in order.
      int c2 = 0;
      gj[0].capacity = 5;
      gj[0].count = &c2;
      rc = egogeo_gpu_detect(ctx, gj, 1);
      check(rc == EGOGEO_GPU_OK && c2 == 5 && std::equal(g0.begin(), g0.begin() + 10, rxy.begin()), "capacity 5: the 5 strongest corners");
      const std::vector<float> many(2 * static_cast<size_t>(n + 1), 50.f);
      gj[1].n_existing = n + 1;
      gj[1].existing = many.data();
      rc = egogeo_gpu_detect(ctx, gj + 1, 1);
      check(rc == EGOGEO_GPU_EINVAL && std::strstr(egogeo_gpu_last_error(ctx), "max_points"), "more existing tracks than max_points are refused");
      // Device time per stage (EGOGEO_GPU_PROFILE=1 on a device; the host reference has none).
      const char* prof_env = std::getenv("EGOGEO_GPU_PROFILE");
      const bool profiled = prof_env && std::strcmp(prof_env, "1") == 0 && !(ref_env && std::strcmp(ref_env, "1") == 0);
      char prof[1024];
      rc = egogeo_gpu_profile(ctx, prof, sizeof prof);
      check(rc == EGOGEO_GPU_OK && (profiled ? std::strstr(prof, "\"track\": {\"ms\": ") && std::strstr(prof, "\"select\": {\"ms\": ") && !std::strstr(prof, "\"spans\": 0}")
                                             : std::strcmp(prof, "{\"enabled\": false}") == 0),
            std::string("profile: ") + (rc == EGOGEO_GPU_OK ? prof : "(failed)"));
      check(egogeo_gpu_profile(ctx, prof, profiled ? 64 : 8) == EGOGEO_GPU_EINVAL, "profile: a buffer too small is refused");
      tj[0].slot = 2;  // out of range: batch is 2
      rc = egogeo_gpu_track(ctx, tj, 1);
      check(rc == EGOGEO_GPU_EINVAL && std::strstr(egogeo_gpu_last_error(ctx), "out of range"), "a slot out of range is refused");
    }
    egogeo_gpu_destroy(ctx);
  }
  return egogeo::gpu::test::report();
}
