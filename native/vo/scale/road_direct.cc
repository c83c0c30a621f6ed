#include "road_direct.h"

#include "../track/band_blur.h"

#include <opencv2/imgproc.hpp>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EGOGEO_DIRECT_AVX2 1  // compiled with a target attribute, run where the CPU has AVX2
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace egogeo::vo {

namespace {

constexpr int kStep = 3;            // sample grid (working pixels)
constexpr size_t kMaxSamples = 4000;
constexpr double kMinGradient = 1;  // grey levels per pixel along the parallax, on the blurred frame: textured road only
constexpr int kCoarse = 64;         // grid points over [0, s_max]
constexpr size_t kThin = 4;         // the coarse grid's first pass reads every kThin-th sample
constexpr size_t kCandidates = 16;  // distances of the first pass scored on every sample
constexpr size_t kMinValid = 250;   // samples landing inside the previous frame for a score (fewer correlate by chance)
constexpr int kGolden = 24;         // golden-section steps: the bracket of two coarse steps (s_max / 32) to 3e-7 s_max

// Current-frame road samples and where each lands in the previous frame for a distance s:
// p1(s) = a + c(s) b (homogeneous pixels), c(s) = s / (1 + s q), the plane homography's inverse.
// Stored by component (the projection loop below vectorises over samples).
struct Samples {
  std::vector<double> ax, ay, az, bx, by, bz;
  std::vector<float> v;  // current-frame intensity
  double q = 0;
  void push(const cv::Vec3d& a, const cv::Vec3d& b) {
    ax.push_back(a[0]), ay.push_back(a[1]), az.push_back(a[2]);
    bx.push_back(b[0]), by.push_back(b[1]), bz.push_back(b[2]);
  }
};

inline float bilinear(const cv::Mat& img, double x, double y) {
  const int x0 = static_cast<int>(x), y0 = static_cast<int>(y);
  const float fx = static_cast<float>(x - x0), fy = static_cast<float>(y - y0);
  const float* r0 = img.ptr<float>(y0);
  const float* r1 = img.ptr<float>(y0 + 1);
  return (1 - fy) * ((1 - fx) * r0[x0] + fx * r0[x0 + 1]) + fy * ((1 - fx) * r1[x0] + fx * r1[x0 + 1]);
}

#ifdef EGOGEO_DIRECT_AVX2
/// score()'s first two loops four samples at a time: each lane does the scalar operations in their
/// order (no fused multiply-add; bilinear's float operations), so the same values; the samples that
/// land inside are packed in sample order. Returns their count; xs, ys need 4 entries of slack.
__attribute__((target("avx2"))) size_t project_avx2(const Samples& S, const cv::Mat& prev, int top, double c, double* xs, double* ys) {
  const size_t N = S.v.size();
  const __m256d one = _mm256_set1_pd(1.0), vW = _mm256_set1_pd(prev.cols - 2), vH = _mm256_set1_pd(prev.rows - 2), vT = _mm256_set1_pd(std::max(1, top));
  const __m256d eps = _mm256_set1_pd(1e-9), minus1 = _mm256_set1_pd(-1.0), c4 = _mm256_set1_pd(c);
  const __m128 onef = _mm_set1_ps(1.f);
  const int step = static_cast<int>(prev.step / sizeof(float));
  const float* base = prev.ptr<float>(0);
  // Lane order of the packed doubles for each mask of lanes inside (as 32-bit index pairs).
  alignas(32) static constexpr int kPack[16][8] = {
      {0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}, {2, 3, 0, 1, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7},
      {4, 5, 0, 1, 2, 3, 6, 7}, {0, 1, 4, 5, 2, 3, 6, 7}, {2, 3, 4, 5, 0, 1, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7},
      {6, 7, 0, 1, 2, 3, 4, 5}, {0, 1, 6, 7, 2, 3, 4, 5}, {2, 3, 6, 7, 0, 1, 4, 5}, {0, 1, 2, 3, 6, 7, 4, 5},
      {4, 5, 6, 7, 0, 1, 2, 3}, {0, 1, 4, 5, 6, 7, 2, 3}, {2, 3, 4, 5, 6, 7, 0, 1}, {0, 1, 2, 3, 4, 5, 6, 7}};
  size_t n = 0, i = 0;
  for (; i + 4 <= N; i += 4) {
    const __m256d z = _mm256_add_pd(_mm256_loadu_pd(&S.az[i]), _mm256_mul_pd(c4, _mm256_loadu_pd(&S.bz[i])));
    const __m256d iz = _mm256_div_pd(one, z);
    const __m256d x = _mm256_blendv_pd(minus1, _mm256_mul_pd(_mm256_add_pd(_mm256_loadu_pd(&S.ax[i]), _mm256_mul_pd(c4, _mm256_loadu_pd(&S.bx[i]))), iz),
                                       _mm256_cmp_pd(z, eps, _CMP_GT_OQ));
    const __m256d y = _mm256_mul_pd(_mm256_add_pd(_mm256_loadu_pd(&S.ay[i]), _mm256_mul_pd(c4, _mm256_loadu_pd(&S.by[i]))), iz);
    const __m256d in = _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(x, one, _CMP_GE_OQ), _mm256_cmp_pd(y, vT, _CMP_GE_OQ)),
                                     _mm256_and_pd(_mm256_cmp_pd(x, vW, _CMP_LT_OQ), _mm256_cmp_pd(y, vH, _CMP_LT_OQ)));
    const int mask = _mm256_movemask_pd(in);
    if (mask == 0) continue;
    // Lanes outside read pixel (1, T), which is inside, and are dropped by the packing.
    const __m256d xi = _mm256_blendv_pd(one, x, in), yi = _mm256_blendv_pd(vT, y, in);
    const __m128i x0 = _mm256_cvttpd_epi32(xi), y0 = _mm256_cvttpd_epi32(yi);
    const __m128 fx = _mm256_cvtpd_ps(_mm256_sub_pd(xi, _mm256_cvtepi32_pd(x0))), fy = _mm256_cvtpd_ps(_mm256_sub_pd(yi, _mm256_cvtepi32_pd(y0)));
    alignas(16) int ix[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(ix), _mm_add_epi32(_mm_mullo_epi32(y0, _mm_set1_epi32(step)), x0));
    auto pair = [&](int o) { return _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(base + o))); };  // unaligned 8 bytes
    const __m128 t0 = _mm_movelh_ps(pair(ix[0]), pair(ix[1])), t1 = _mm_movelh_ps(pair(ix[2]), pair(ix[3]));
    const __m128 u0 = _mm_movelh_ps(pair(ix[0] + step), pair(ix[1] + step)), u1 = _mm_movelh_ps(pair(ix[2] + step), pair(ix[3] + step));
    const __m128 p00 = _mm_shuffle_ps(t0, t1, _MM_SHUFFLE(2, 0, 2, 0)), p01 = _mm_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 1, 3, 1));
    const __m128 p10 = _mm_shuffle_ps(u0, u1, _MM_SHUFFLE(2, 0, 2, 0)), p11 = _mm_shuffle_ps(u0, u1, _MM_SHUFFLE(3, 1, 3, 1));
    const __m128 gx = _mm_sub_ps(onef, fx), gy = _mm_sub_ps(onef, fy);
    const __m128 r0 = _mm_add_ps(_mm_mul_ps(gx, p00), _mm_mul_ps(fx, p01)), r1 = _mm_add_ps(_mm_mul_ps(gx, p10), _mm_mul_ps(fx, p11));
    const __m256d vb = _mm256_cvtps_pd(_mm_add_ps(_mm_mul_ps(gy, r0), _mm_mul_ps(fy, r1)));
    const __m256d va = _mm256_cvtps_pd(_mm_loadu_ps(&S.v[i]));
    const __m256i order = _mm256_load_si256(reinterpret_cast<const __m256i*>(kPack[mask]));
    _mm256_storeu_pd(xs + n, _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(va), order)));
    _mm256_storeu_pd(ys + n, _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(vb), order)));
    n += static_cast<size_t>(__builtin_popcount(static_cast<unsigned>(mask)));
  }
  for (; i < N; ++i) {
    const double z = S.az[i] + c * S.bz[i];
    const double iz = 1 / z;
    const double x = z > 1e-9 ? (S.ax[i] + c * S.bx[i]) * iz : -1.0, y = (S.ay[i] + c * S.by[i]) * iz;
    if (!(x >= 1 && y >= std::max(1, top) && x < prev.cols - 2 && y < prev.rows - 2)) continue;
    xs[n] = S.v[i];
    ys[n] = bilinear(prev, x, y);
    ++n;
  }
  return n;
}
#endif

/// ZNCC of the samples' intensities against the previous frame at distance s; -inf when too few land
/// inside. `xy` is scratch (2 per sample, and slack). The projections are computed for all samples
/// first (the same operations per sample, so the same values), then summed in sample order.
double score(const Samples& S, const cv::Mat& prev, int top, double s, int* valid_out, std::vector<double>& xy) {
  if (!(1 + s * S.q > 1e-6)) return -std::numeric_limits<double>::infinity();
  const double c = s / (1 + s * S.q);
  const double W = prev.cols - 2, H = prev.rows - 2, T = std::max(1, top);
  const size_t N = S.v.size();
  xy.resize(2 * N + 8);
  double* xs = xy.data();
  double* ys = xs + N + 4;
  size_t n = 0;
#ifdef EGOGEO_DIRECT_AVX2
  if (__builtin_cpu_supports("avx2")) {
    n = project_avx2(S, prev, top, c, xs, ys);
  } else
#endif
  {
    for (size_t i = 0; i < N; ++i) {
      const double z = S.az[i] + c * S.bz[i];
      const double iz = 1 / z;
      // Behind the camera: a point outside the frame (fails the test below).
      xs[i] = z > 1e-9 ? (S.ax[i] + c * S.bx[i]) * iz : -1.0;
      ys[i] = (S.ay[i] + c * S.by[i]) * iz;
    }
    // The samples that land inside, with both intensities (the gathers), then the sums in sample
    // order: the sums' dependency chains no longer wait on the gathers.
    for (size_t i = 0; i < N; ++i) {
      const double x = xs[i], y = ys[i];
      if (!(x >= 1 && y >= T && x < W && y < H)) continue;
      xs[n] = S.v[i];
      ys[n] = bilinear(prev, x, y);
      ++n;
    }
  }
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  for (size_t i = 0; i < n; ++i) {
    const double va = xs[i], vb = ys[i];
    sa += va;
    sb += vb;
    saa += va * va;
    sbb += vb * vb;
    sab += va * vb;
  }
  if (valid_out) *valid_out = static_cast<int>(n);
  if (n < kMinValid) return -std::numeric_limits<double>::infinity();
  const double m = static_cast<double>(n);
  const double cov = sab - sa * sb / m, va = saa - sa * sa / m, vb = sbb - sb * sb / m;
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : -std::numeric_limits<double>::infinity();
}

/// The sums of one distance's ZNCC (score()'s, kept per distance).
struct Sums {
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  int64_t n = 0;
};

double zncc(const Sums& a, size_t min_valid = kMinValid) {
  if (a.n < static_cast<int64_t>(min_valid)) return -std::numeric_limits<double>::infinity();
  const double m = static_cast<double>(a.n);
  const double cov = a.sab - a.sa * a.sb / m, va = a.saa - a.sa * a.sa / m, vb = a.sbb - a.sb * a.sb / m;
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : -std::numeric_limits<double>::infinity();
}

/// score() at each of the distances with c[k] = s / (1 + s q) (ok[k]: 1 + s q > 1e-6): the loops
/// turned around, each sample at every distance, so each distance's sums still take the samples
/// in order and give score()'s bits.
void sums_scalar(const Samples& S, const cv::Mat& prev, int top, const std::vector<double>& c, const std::vector<char>& ok, std::vector<Sums>& acc) {
  const double W = prev.cols - 2, H = prev.rows - 2, T = std::max(1, top);
  const size_t N = S.v.size(), K = c.size();
  for (size_t i = 0; i < N; ++i) {
    const double va = S.v[i];
    for (size_t k = 0; k < K; ++k) {
      if (!ok[k]) continue;
      const double z = S.az[i] + c[k] * S.bz[i];
      const double iz = 1 / z;
      const double x = z > 1e-9 ? (S.ax[i] + c[k] * S.bx[i]) * iz : -1.0;
      const double y = (S.ay[i] + c[k] * S.by[i]) * iz;
      if (!(x >= 1 && y >= T && x < W && y < H)) continue;
      const double vb = bilinear(prev, x, y);
      Sums& a = acc[k];
      a.sa += va;
      a.sb += vb;
      a.saa += va * va;
      a.sbb += vb * vb;
      a.sab += va * vb;
      ++a.n;
    }
  }
}

#ifdef EGOGEO_DIRECT_AVX2
/// sums_scalar four distances at a time (one per lane): each lane does the scalar operations in
/// the same order (no fused multiply-add), a sample outside the frame adds zeros, so the same bits.
__attribute__((target("avx2"))) void sums_avx2(const Samples& S, const cv::Mat& prev, int top, const std::vector<double>& c, const std::vector<char>& ok,
                                              std::vector<Sums>& acc) {
  const size_t N = S.v.size(), K = c.size(), G = (K + 3) / 4;
  std::vector<double> cv4(4 * G, 0.0);
  std::vector<int64_t> ok4(4 * G, 0);
  for (size_t k = 0; k < K; ++k) cv4[k] = c[k], ok4[k] = ok[k] ? -1 : 0;
  std::vector<double> Sa(4 * G, 0.0), Sb = Sa, Saa = Sa, Sbb = Sa, Sab = Sa;
  std::vector<int64_t> Cnt(4 * G, 0);
  const __m256d one = _mm256_set1_pd(1.0), vW = _mm256_set1_pd(prev.cols - 2), vH = _mm256_set1_pd(prev.rows - 2), vT = _mm256_set1_pd(std::max(1, top));
  const __m256d eps = _mm256_set1_pd(1e-9), minus1 = _mm256_set1_pd(-1.0);
  const __m128 onef = _mm_set1_ps(1.f);
  const int step = static_cast<int>(prev.step / sizeof(float));
  const __m128i vstep = _mm_set1_epi32(step);
  const float* base = prev.ptr<float>(0);
  // Four distances (lanes) at a time over every sample, their sums in registers.
  for (size_t g = 0; g < G; ++g) {
    const __m256d c4 = _mm256_loadu_pd(&cv4[4 * g]);
    const __m256d okg = _mm256_castsi256_pd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(&ok4[4 * g])));
    __m256d sa = _mm256_setzero_pd(), sb = sa, saa = sa, sbb = sa, sab = sa;
    __m256i cnt = _mm256_setzero_si256();
    for (size_t i = 0; i < N; ++i) {
      const __m256d az = _mm256_set1_pd(S.az[i]), bz = _mm256_set1_pd(S.bz[i]);
      const __m256d z = _mm256_add_pd(az, _mm256_mul_pd(c4, bz));
      const __m256d iz = _mm256_div_pd(one, z);
      const __m256d x = _mm256_blendv_pd(minus1, _mm256_mul_pd(_mm256_add_pd(_mm256_set1_pd(S.ax[i]), _mm256_mul_pd(c4, _mm256_set1_pd(S.bx[i]))), iz),
                                         _mm256_cmp_pd(z, eps, _CMP_GT_OQ));
      const __m256d y = _mm256_mul_pd(_mm256_add_pd(_mm256_set1_pd(S.ay[i]), _mm256_mul_pd(c4, _mm256_set1_pd(S.by[i]))), iz);
      __m256d in = _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(x, one, _CMP_GE_OQ), _mm256_cmp_pd(y, vT, _CMP_GE_OQ)),
                                 _mm256_and_pd(_mm256_cmp_pd(x, vW, _CMP_LT_OQ), _mm256_cmp_pd(y, vH, _CMP_LT_OQ)));
      in = _mm256_and_pd(in, okg);
      if (_mm256_movemask_pd(in) == 0) continue;
      // Lanes outside read pixel (1, T), which is inside, and add zeros.
      const __m256d xs = _mm256_blendv_pd(one, x, in), ys = _mm256_blendv_pd(vT, y, in);
      const __m128i x0 = _mm256_cvttpd_epi32(xs), y0 = _mm256_cvttpd_epi32(ys);
      const __m128 fx = _mm256_cvtpd_ps(_mm256_sub_pd(xs, _mm256_cvtepi32_pd(x0))), fy = _mm256_cvtpd_ps(_mm256_sub_pd(ys, _mm256_cvtepi32_pd(y0)));
      const __m128i idx = _mm_add_epi32(_mm_mullo_epi32(y0, vstep), x0);
      // Each lane's two pixel pairs as 64-bit loads (cheaper than four gathers).
      alignas(16) int ix[4];
      _mm_store_si128(reinterpret_cast<__m128i*>(ix), idx);
      auto pair = [&](int o) { return _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(base + o))); };  // unaligned 8 bytes
      const __m128 t0 = _mm_movelh_ps(pair(ix[0]), pair(ix[1])), t1 = _mm_movelh_ps(pair(ix[2]), pair(ix[3]));  // p00 p01 of lanes 0 1 | 2 3
      const __m128 u0 = _mm_movelh_ps(pair(ix[0] + step), pair(ix[1] + step)), u1 = _mm_movelh_ps(pair(ix[2] + step), pair(ix[3] + step));
      const __m128 p00 = _mm_shuffle_ps(t0, t1, _MM_SHUFFLE(2, 0, 2, 0)), p01 = _mm_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 1, 3, 1));
      const __m128 p10 = _mm_shuffle_ps(u0, u1, _MM_SHUFFLE(2, 0, 2, 0)), p11 = _mm_shuffle_ps(u0, u1, _MM_SHUFFLE(3, 1, 3, 1));
      const __m128 gx = _mm_sub_ps(onef, fx), gy = _mm_sub_ps(onef, fy);
      const __m128 r0 = _mm_add_ps(_mm_mul_ps(gx, p00), _mm_mul_ps(fx, p01)), r1 = _mm_add_ps(_mm_mul_ps(gx, p10), _mm_mul_ps(fx, p11));
      const __m256d vb = _mm256_and_pd(_mm256_cvtps_pd(_mm_add_ps(_mm_mul_ps(gy, r0), _mm_mul_ps(fy, r1))), in);
      const __m256d va = _mm256_set1_pd(static_cast<double>(S.v[i]));
      sa = _mm256_add_pd(sa, _mm256_and_pd(va, in));
      sb = _mm256_add_pd(sb, vb);
      saa = _mm256_add_pd(saa, _mm256_and_pd(_mm256_mul_pd(va, va), in));
      sbb = _mm256_add_pd(sbb, _mm256_mul_pd(vb, vb));
      sab = _mm256_add_pd(sab, _mm256_and_pd(_mm256_mul_pd(va, vb), in));
      cnt = _mm256_sub_epi64(cnt, _mm256_castpd_si256(in));
    }
    const size_t o = 4 * g;
    _mm256_storeu_pd(&Sa[o], sa), _mm256_storeu_pd(&Sb[o], sb), _mm256_storeu_pd(&Saa[o], saa), _mm256_storeu_pd(&Sbb[o], sbb), _mm256_storeu_pd(&Sab[o], sab);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(&Cnt[o]), cnt);
  }
  for (size_t k = 0; k < K; ++k) acc[k] = Sums{Sa[k], Sb[k], Saa[k], Sbb[k], Sab[k], Cnt[k]};
}
#endif

/// score() at each of the distances s: out[k] = score(S, prev, top, s[k]), bit for bit (sums_scalar,
/// or sums_avx2 where the CPU has AVX2). One sample's projections at neighbouring distances lie
/// close together in the previous frame (cache lines reused), and the distances' sums are
/// independent of each other (no chain of dependent additions).
void score_many(const Samples& S, const cv::Mat& prev, int top, const std::vector<double>& s, std::vector<double>& out, size_t min_valid = kMinValid) {
  const size_t K = s.size();
  std::vector<double> c(K);
  std::vector<char> ok(K);
  for (size_t k = 0; k < K; ++k) {
    ok[k] = 1 + s[k] * S.q > 1e-6;
    c[k] = s[k] / (1 + s[k] * S.q);
  }
  std::vector<Sums> acc(K);
#ifdef EGOGEO_DIRECT_AVX2
  if (__builtin_cpu_supports("avx2")) sums_avx2(S, prev, top, c, ok, acc);
  else
#endif
    sums_scalar(S, prev, top, c, ok, acc);
  out.resize(K);
  for (size_t k = 0; k < K; ++k) out[k] = ok[k] ? zncc(acc[k], min_valid) : -std::numeric_limits<double>::infinity();
}

}  // namespace

void road_image(const cv::Mat& grey, int top, RoadImage& out, BandBlurScratch& scratch) {
  if (grey.empty()) {
    out = RoadImage{};
    return;
  }
  const int was_top = out.top;
  const bool fresh = out.coarse.size() != grey.size() || out.coarse.type() != CV_32F || out.fine.size() != grey.size() || out.fine.type() != CV_32F;
  out.top = std::clamp(top, 0, grey.rows - 1);
  out.coarse.create(grey.size(), CV_32F);
  out.fine.create(grey.size(), CV_32F);
  // Nothing reads the rows above the band; they are zero all the same, set when the buffers are
  // new or the band moved (a clip's frames share one size and one band).
  if (fresh || out.top != was_top) {
    out.coarse.rowRange(0, out.top).setTo(0);
    out.fine.rowRange(0, out.top).setTo(0);
  }
  // The band blurred as part of the whole frame (the filter reads the rows above it).
  band_blur(grey, out.top, 3.0, out.coarse, scratch);
  band_blur(grey, out.top, 1.0, out.fine, scratch);
}

DirectRoad direct_road_distance(const RoadImage& prevs, const RoadImage& currs, const Intrinsics& intr, const PairMotion& pm,
                                const cv::Vec3d& w, const cv::Vec3d& prior, double depression, double s_max, DirectScratch& scratch) {
  DirectRoad out;
  const cv::Mat &p3 = prevs.coarse, &c3 = currs.coarse, &p1 = prevs.fine, &c1 = currs.fine;
  if (p3.empty() || c3.empty() || p3.size() != c3.size() || !(s_max > 0)) return out;
  const cv::Matx33d K = intr.K(), Ki = K.inv(), Rt = pm.R.t();
  // X2 = (R + s t w^T) X1 on the plane, so X1 = R^T X2 - c(s) (w . R^T X2) R^T t.
  const cv::Vec3d u = Rt * pm.t_dir, Ku = K * u;

  // The current frame's gradients at the samples (sigma 3, for the coarse search's basin of several
  // pixels): cv::Sobel(coarse, CV_32F, 1, 0 | 0, 1, 3, 1.0 / 8) there, as OpenCV's small separable
  // filters compute it -- the derivative pass a difference, the smoothing pass (1, 2, 1) / 8 whose
  // products are exact (powers of two), so each is one rounding of the same sum whatever the order
  // or fusing. Computed at the samples only (every kStep-th row and column, away from the borders),
  // not over the whole band.
  auto gradient = [&c3](int v, int x, float& gx, float& gy) {
    const float *a = c3.ptr<float>(v - 1), *m = c3.ptr<float>(v), *b = c3.ptr<float>(v + 1);
    const float da = a[x + 1] - a[x - 1], dm = m[x + 1] - m[x - 1], db = b[x + 1] - b[x - 1];
    gx = (da + db) * 0.125f + dm * 0.25f;
    const float sa = a[x] * 0.25f + (a[x - 1] + a[x + 1]) * 0.125f, sb = b[x] * 0.25f + (b[x - 1] + b[x + 1]) * 0.125f;
    gy = sb - sa;
  };

  Samples coarse, fine;
  coarse.q = fine.q = w.dot(u);
  for (int v = kStep; v < c3.rows - kStep; v += kStep) {
    if (v <= currs.top + 1) continue;
    for (int x = kStep; x < c3.cols - kStep; x += kStep) {
      float gx, gy;
      gradient(v, x, gx, gy);
      // The gradient along the parallax is at most the gradient's length: a pixel whose gradient is
      // shorter than kMinGradient (with a margin for rounding) fails the test below whatever its
      // parallax, so it is passed over before the geometry (most of a road is smooth at sigma 3).
      const double g2 = static_cast<double>(gx) * gx + static_cast<double>(gy) * gy;
      if (g2 < 0.98 * kMinGradient * kMinGradient) continue;
      const cv::Vec3d ray = Ki * cv::Vec3d(x, v, 1);
      if (prior.dot(ray) < depression) continue;
      const cv::Vec3d r = Rt * ray, a = K * r, b = Ku * -w.dot(r);
      if (a[2] <= 1e-9) continue;
      // Only texture that changes along the point's parallax direction (the way it moves as s
      // grows) says anything about s: lane lines and road edges run through the focus of
      // expansion, along the parallax, and look the same at every distance (the aperture problem).
      const double du = (b[0] * a[2] - a[0] * b[2]) / (a[2] * a[2]), dv = (b[1] * a[2] - a[1] * b[2]) / (a[2] * a[2]);
      // sqrt of the squares, not std::hypot (its careful algorithm costs a call and tens of cycles;
      // du, dv are pixels per metre, far from overflow or underflow).
      const double dn = std::sqrt(du * du + dv * dv);
      if (!(dn > 1e-12)) continue;
      const double along = std::abs(gx * du + gy * dv) / dn;
      // |g| as a float, as std::hypot(float, float) rounds it (glibc: the double root of the double squares).
      if (along < kMinGradient || along < 0.5 * static_cast<float>(std::sqrt(g2))) continue;
      coarse.push(a, b);
      coarse.v.push_back(c3.at<float>(v, x));
      fine.v.push_back(c1.at<float>(v, x));
    }
  }
  if (coarse.v.size() < kMinValid) return out;
  if (coarse.v.size() > kMaxSamples) {  // an even thinning keeps the spatial spread
    const double keep = static_cast<double>(kMaxSamples) / static_cast<double>(coarse.v.size());
    Samples c2;
    c2.q = coarse.q;
    std::vector<float> f2;
    for (size_t i = 0; i < coarse.v.size(); ++i) {
      if (static_cast<size_t>(static_cast<double>(i + 1) * keep) == static_cast<size_t>(static_cast<double>(i) * keep)) continue;
      c2.push(cv::Vec3d(coarse.ax[i], coarse.ay[i], coarse.az[i]), cv::Vec3d(coarse.bx[i], coarse.by[i], coarse.bz[i]));
      c2.v.push_back(coarse.v[i]);
      f2.push_back(fine.v[i]);
    }
    coarse = std::move(c2);
    fine.v = std::move(f2);
  }
  fine.ax = coarse.ax, fine.ay = coarse.ay, fine.az = coarse.az;
  fine.bx = coarse.bx, fine.by = coarse.by, fine.bz = coarse.bz;
  std::vector<double>& xy = scratch.xy;

  int best = -1;
  double best_score = -std::numeric_limits<double>::infinity();
  const double step = s_max / kCoarse;
  std::vector<double> grid(kCoarse), scores;
  for (int k = 1; k <= kCoarse; ++k) grid[k - 1] = k * step;
  // Which distances can be the best: all of them scored on every kThin-th sample first, then the
  // kCandidates best of those on every sample. The best of all 64 on every sample is among them
  // unless a quarter of the samples ranks it below 16 others (the ZNCC of a quarter of the samples
  // tracks the whole's closely, a basin is several grid steps wide); the full-sample scores of the
  // candidates decide, in grid order as before.
  std::vector<int> candidates;
  if (coarse.v.size() >= kThin * kMinValid) {
    Samples thin;
    thin.q = coarse.q;
    for (size_t i = 0; i < coarse.v.size(); i += kThin) {
      thin.push(cv::Vec3d(coarse.ax[i], coarse.ay[i], coarse.az[i]), cv::Vec3d(coarse.bx[i], coarse.by[i], coarse.bz[i]));
      thin.v.push_back(coarse.v[i]);
    }
    std::vector<double> rough;
    score_many(thin, p3, prevs.top, grid, rough, kMinValid / (2 * kThin));
    for (int k = 0; k < kCoarse; ++k)
      if (std::isfinite(rough[k])) candidates.push_back(k);
    if (candidates.size() > kCandidates) {
      std::nth_element(candidates.begin(), candidates.begin() + kCandidates, candidates.end(),
                       [&](int a, int b) { return rough[a] > rough[b] || (rough[a] == rough[b] && a < b); });
      candidates.resize(kCandidates);
      std::sort(candidates.begin(), candidates.end());
    }
  } else {
    for (int k = 0; k < kCoarse; ++k) candidates.push_back(k);
  }
  std::vector<double> at(candidates.size());
  for (size_t j = 0; j < candidates.size(); ++j) at[j] = grid[candidates[j]];
  score_many(coarse, p3, prevs.top, at, scores);
  for (size_t j = 0; j < candidates.size(); ++j) {
    const double sc = scores[j];
    if (sc > best_score) {
      best_score = sc;
      best = candidates[j] + 1;
    }
  }
  if (best < 0 || !std::isfinite(best_score)) return out;
  // Golden section on the sharper frames inside the coarse optimum's neighbours.
  double lo = std::max(1e-3, (best - 1) * step), hi = std::min(s_max, (best + 1) * step);
  const double phi = 0.5 * (std::sqrt(5.0) - 1);
  double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
  double f1 = score(fine, p1, prevs.top, x1, nullptr, xy), f2 = score(fine, p1, prevs.top, x2, nullptr, xy);
  for (int it = 0; it < kGolden; ++it) {
    if (f1 >= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - phi * (hi - lo);
      f1 = score(fine, p1, prevs.top, x1, nullptr, xy);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + phi * (hi - lo);
      f2 = score(fine, p1, prevs.top, x2, nullptr, xy);
    }
  }
  const double s = 0.5 * (lo + hi);
  int valid = 0;
  const double sc = score(fine, p1, prevs.top, s, &valid, xy);
  if (!std::isfinite(sc)) return out;
  out.distance = s;
  out.score = sc;
  out.samples = valid;
  return out;
}

}  // namespace egogeo::vo
