#include "klt_scale.h"

#include <opencv2/imgproc.hpp>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EGOGEO_REFINE_AVX2 1  // compiled with a target attribute, run where the CPU has AVX2
// A function compiled twice, for AVX2 and for the baseline, the loader picking one (an ifunc).
#define EGOGEO_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define EGOGEO_CLONES_AVX2
#endif

#include <algorithm>
#include <cmath>

namespace egogeo::vo {
namespace {
/// Bilinear sampling on a regular grid: a sample's column and row are the grid's, so each one's
/// integer cell and fraction are found once per column and per row, not once per sample (the same
/// floats a lookup per sample computes, so the same values).
/// Past n, up to a multiple of 8, the last entry repeats (a row of 8-lane blocks reads there).
struct GridAxis {
  std::vector<int> i0;
  std::vector<float> f;
  template <class At>
  void set(int n, const At& at) {
    const size_t padded = (static_cast<size_t>(n) + 7) / 8 * 8;
    i0.resize(padded);
    f.resize(padded);
    for (int k = 0; k < n; ++k) {
      const float x = at(k);
      i0[k] = static_cast<int>(std::floor(x));
      f[k] = x - i0[k];
    }
    for (size_t k = static_cast<size_t>(n); k < padded; ++k) i0[k] = i0[k - 1], f[k] = f[k - 1];
  }
};

template <typename T>
inline float bilinear_at(const cv::Mat& m, int x0, float fx, int y0, float fy) {
  const T* a = m.ptr<T>(y0);
  const T* b = m.ptr<T>(y0 + 1);
  return (1 - fy) * ((1 - fx) * a[x0] + fx * a[x0 + 1]) + fy * ((1 - fx) * b[x0] + fx * b[x0 + 1]);
}

/// I1's grey level and gradients at a sample for refine_scaled, from Scharr's gradients (scaled by
/// 1/32) in two float images.
struct FloatGradients {
  const cv::Mat &gx, &gy;
  void at(const cv::Mat& I1, int x0, float fx, int y0, float fy, double& ix, double& iy, double& i1) const {
    ix = bilinear_at<float>(gx, x0, fx, y0, fy), iy = bilinear_at<float>(gy, x0, fx, y0, fy), i1 = bilinear_at<uchar>(I1, x0, fx, y0, fy);
  }
  /// at() for the n samples of one row (columns x0[k], fx[k]).
  void row(const cv::Mat& I1, int y0, float fy, const int* x0, const float* fx, int n, float* ix, float* iy, float* i1) const {
    for (int k = 0; k < n; ++k) {
      ix[k] = bilinear_at<float>(gx, x0[k], fx[k], y0, fy), iy[k] = bilinear_at<float>(gy, x0[k], fx[k], y0, fy);
      i1[k] = bilinear_at<uchar>(I1, x0[k], fx[k], y0, fy);
    }
  }
};

#ifdef EGOGEO_REFINE_AVX2
#define EGOGEO_AVX2 __attribute__((target("avx2")))
EGOGEO_AVX2 inline __m256 bilinear8(__m256 g, __m256 f, __m256 gy, __m256 fy, __m256 a0, __m256 a1, __m256 b0, __m256 b1) {
  const __m256 top = _mm256_add_ps(_mm256_mul_ps(g, a0), _mm256_mul_ps(f, a1));
  const __m256 bottom = _mm256_add_ps(_mm256_mul_ps(g, b0), _mm256_mul_ps(f, b1));
  return _mm256_add_ps(_mm256_mul_ps(gy, top), _mm256_mul_ps(fy, bottom));
}
// The int16 dx (low half) or dy (high half) of a pixel's pair, as the float at() makes of it.
EGOGEO_AVX2 inline __m256 dx8(__m256i v) { return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(v, 16), 16)), _mm256_set1_ps(1.f / 32)); }
EGOGEO_AVX2 inline __m256 dy8(__m256i v) { return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srai_epi32(v, 16)), _mm256_set1_ps(1.f / 32)); }
EGOGEO_AVX2 inline __m256 grey8(__m256i v, int shift) {
  return _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srl_epi32(v, _mm_cvtsi32_si128(shift)), _mm256_set1_epi32(0xFF)));
}

/// PyramidGradients::row eight samples at a time: the two rows' (dx, dy) pairs and grey levels
/// gathered per lane, then at()'s float operations lane by lane (no fused multiply-add), so the
/// same floats. x0 and fx are padded to a multiple of 8 (GridAxis).
EGOGEO_AVX2 void pyramid_row_avx2(const cv::Mat& d, const cv::Mat& I1, int y0, float fy, const int* x0, const float* fx, int n, float* ix, float* iy,
                                  float* i1) {
  const int* a = d.ptr<int>(y0);  // one int32 per pixel: the int16 pair (dx, dy)
  const int* b = d.ptr<int>(y0 + 1);
  // Grey levels read 4 bytes from x0 (two used; x0 + 1 <= cols - 2 by refine_scaled's reach check, so inside the rows' memory).
  const int* p = reinterpret_cast<const int*>(I1.ptr<uchar>(y0));
  const int* q = reinterpret_cast<const int*>(I1.ptr<uchar>(y0 + 1));
  const __m256 fyv = _mm256_set1_ps(fy), gyv = _mm256_set1_ps(1 - fy);
  for (int k = 0; k < n; k += 8) {
    const __m256i xi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x0 + k));
    const __m256 f = _mm256_loadu_ps(fx + k), g = _mm256_sub_ps(_mm256_set1_ps(1.f), f);
    const __m256i A0 = _mm256_i32gather_epi32(a, xi, 4), A1 = _mm256_i32gather_epi32(a + 1, xi, 4);
    const __m256i B0 = _mm256_i32gather_epi32(b, xi, 4), B1 = _mm256_i32gather_epi32(b + 1, xi, 4);
    _mm256_storeu_ps(ix + k, bilinear8(g, f, gyv, fyv, dx8(A0), dx8(A1), dx8(B0), dx8(B1)));
    _mm256_storeu_ps(iy + k, bilinear8(g, f, gyv, fyv, dy8(A0), dy8(A1), dy8(B0), dy8(B1)));
    const __m256i P = _mm256_i32gather_epi32(p, xi, 1), Q = _mm256_i32gather_epi32(q, xi, 1);
    _mm256_storeu_ps(i1 + k, bilinear8(g, f, gyv, fyv, grey8(P, 0), grey8(P, 8), grey8(Q, 0), grey8(Q, 8)));
  }
}
#undef EGOGEO_AVX2
#endif

/// The same, the gradients read from KLT's derivative level (cv::buildOpticalFlowPyramid's:
/// Scharr's kernel, unscaled, int16 (dx, dy) pairs, the same reflected border): each is an integer,
/// so dividing by 32 gives the very float cv::Scharr(…, 1.0 / 32) stores. The three bilinear
/// interpolations run as the lanes of one SSE vector (gx, gy, grey, 0): each lane does
/// bilinear_at's float operations in its order, so the same values.
struct PyramidGradients {
  const cv::Mat& d;  // CV_16SC2
#if defined(__SSE2__)
  static __m128 corners(const cv::Vec2s* g, const uchar* p, int x0, __m128& right) {
    const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + x0));  // gx0 gy0 gx1 gy1 (int16)
    const __m128 f = _mm_mul_ps(_mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(v, v), 16)), _mm_set1_ps(1.f / 32));
    const __m128 grey = _mm_setr_ps(static_cast<float>(p[x0]), static_cast<float>(p[x0 + 1]), 0.f, 0.f);
    right = _mm_shuffle_ps(f, grey, _MM_SHUFFLE(2, 1, 3, 2));  // gx1 gy1 p1 0
    return _mm_shuffle_ps(f, grey, _MM_SHUFFLE(2, 0, 1, 0));   // gx0 gy0 p0 0
  }
  void at(const cv::Mat& I1, int x0, float fx, int y0, float fy, double& ix, double& iy, double& i1) const {
    __m128 a1, b1;
    const __m128 a0 = corners(d.ptr<cv::Vec2s>(y0), I1.ptr<uchar>(y0), x0, a1);
    const __m128 b0 = corners(d.ptr<cv::Vec2s>(y0 + 1), I1.ptr<uchar>(y0 + 1), x0, b1);
    const __m128 gx = _mm_set1_ps(1 - fx), fxv = _mm_set1_ps(fx), gy = _mm_set1_ps(1 - fy), fyv = _mm_set1_ps(fy);
    const __m128 top = _mm_add_ps(_mm_mul_ps(gx, a0), _mm_mul_ps(fxv, a1)), bottom = _mm_add_ps(_mm_mul_ps(gx, b0), _mm_mul_ps(fxv, b1));
    alignas(16) float r[4];
    _mm_store_ps(r, _mm_add_ps(_mm_mul_ps(gy, top), _mm_mul_ps(fyv, bottom)));
    ix = r[0], iy = r[1], i1 = r[2];
  }
#else
  static float g(const cv::Vec2s& v, int k) { return static_cast<float>(v[k]) * (1.f / 32); }
  void at(const cv::Mat& I1, int x0, float fx, int y0, float fy, double& ix, double& iy, double& i1) const {
    const cv::Vec2s* a = d.ptr<cv::Vec2s>(y0);
    const cv::Vec2s* b = d.ptr<cv::Vec2s>(y0 + 1);
    float v[2];
    for (int k = 0; k < 2; ++k) v[k] = (1 - fy) * ((1 - fx) * g(a[x0], k) + fx * g(a[x0 + 1], k)) + fy * ((1 - fx) * g(b[x0], k) + fx * g(b[x0 + 1], k));
    ix = v[0], iy = v[1], i1 = bilinear_at<uchar>(I1, x0, fx, y0, fy);
  }
#endif
  /// at() for the n samples of one row (columns x0[k], fx[k], padded to a multiple of 8).
  void row(const cv::Mat& I1, int y0, float fy, const int* x0, const float* fx, int n, float* ix, float* iy, float* i1) const {
#ifdef EGOGEO_REFINE_AVX2
    if (__builtin_cpu_supports("avx2")) return pyramid_row_avx2(d, I1, y0, fy, x0, fx, n, ix, iy, i1);
#endif
    for (int k = 0; k < n; ++k) {
      double a, b, c;
      at(I1, x0[k], fx[k], y0, fy, a, b, c);
      ix[k] = static_cast<float>(a), iy[k] = static_cast<float>(b), i1[k] = static_cast<float>(c);
    }
  }
};

/// refine_scaled's buffers, reused from track to track: the template and the window's grid.
struct RefineScratch {
  std::vector<float> tmpl, ix, iy, i1;  // the template; one row's samples of I1
  GridAxis cols, rows;
};

/// refine_scaled's normal equations, summed sample by sample in four-lane accumulators: with
/// V = (ix, iy, j2, j3) (J's first four entries), a[0..3] sum ix V, iy V, j2 V, j3 V (the upper
/// triangle's products, lanes below the diagonal unused), a[4] e V, a[5] -V (J's entry -1 times V),
/// e4 -e. Each lane takes its entry's products in sample order and a product's factors commute, so
/// every sum is the double a scalar sum of J[r] J[c] (and J[r] e) over the samples gives.
struct NormalSums {
  alignas(32) double a[6][4] = {};
  double e4 = 0;
};

/// One row v of the window's samples (u = -half..half) added to `ns`: ix, iy, i1 are I1's gradients
/// and grey level at each, tmpl the template's row.
EGOGEO_CLONES_AVX2 void add_row(const float* ix, const float* iy, const float* i1, const float* tmpl, int half, int v, double g,
                                                                double b, NormalSums& ns) {
  using v4 = double __attribute__((vector_size(32)));
  v4 a0, a1, a2, a3, a4, a5;
  __builtin_memcpy(&a0, ns.a[0], sizeof(v4)), __builtin_memcpy(&a1, ns.a[1], sizeof(v4)), __builtin_memcpy(&a2, ns.a[2], sizeof(v4));
  __builtin_memcpy(&a3, ns.a[3], sizeof(v4)), __builtin_memcpy(&a4, ns.a[4], sizeof(v4)), __builtin_memcpy(&a5, ns.a[5], sizeof(v4));
  double e4 = ns.e4;
  for (int u = -half, k = 0; u <= half; ++u, ++k) {
    const double x = ix[k], y = iy[k], t = tmpl[k];
    const double e = i1[k] - g * t - b;
    const double j2 = x * u + y * v, j3 = -t;
    const v4 V = {x, y, j2, j3};
    a0 += x * V;
    a1 += y * V;
    a2 += j2 * V;
    a3 += j3 * V;
    a4 += e * V;
    a5 += -V;
    e4 += -e;
  }
  __builtin_memcpy(ns.a[0], &a0, sizeof(v4)), __builtin_memcpy(ns.a[1], &a1, sizeof(v4)), __builtin_memcpy(ns.a[2], &a2, sizeof(v4));
  __builtin_memcpy(ns.a[3], &a3, sizeof(v4)), __builtin_memcpy(ns.a[4], &a4, sizeof(v4)), __builtin_memcpy(ns.a[5], &a5, sizeof(v4));
  ns.e4 = e4;
}

/// Gauss-Newton on I1(q + s u) = g I0(p + u) + b over the window u in [-half, half]^2: the track's
/// end q refined together with the patch's scale change s, gain g and offset b (`grad`: I1's
/// gradients). False (q unchanged) when a sample leaves the image, the system is singular, or the
/// answer moves q by more than `max_shift` or s outside [0.6, 1.6].

template <class Gradients>
bool refine_scaled(const cv::Mat& I0, const cv::Mat& I1, const Gradients& grad, cv::Point2f p, cv::Point2f& q,
                   int half, float max_shift, RefineScratch& scratch) {
  const int side = 2 * half + 1;
  if (p.x - half < 0 || p.y - half < 0 || p.x + half + 1 >= I0.cols || p.y + half + 1 >= I0.rows) return false;
  std::vector<float>& tmpl = scratch.tmpl;
  GridAxis &cols = scratch.cols, &rows = scratch.rows;
  tmpl.resize(static_cast<size_t>(side) * side);
  const size_t lanes = (static_cast<size_t>(side) + 7) / 8 * 8;
  scratch.ix.resize(lanes), scratch.iy.resize(lanes), scratch.i1.resize(lanes);
  float *rix = scratch.ix.data(), *riy = scratch.iy.data(), *ri1 = scratch.i1.data();
  cols.set(side, [&](int k) { return p.x + (k - half); });
  rows.set(side, [&](int k) { return p.y + (k - half); });
  for (int v = 0, i = 0; v < side; ++v)
    for (int u = 0; u < side; ++u, ++i) tmpl[i] = bilinear_at<uchar>(I0, cols.i0[u], cols.f[u], rows.i0[v], rows.f[v]);
  double qx = q.x, qy = q.y, s = 1, g = 1, b = 0;
  for (int it = 0; it < 8; ++it) {
    // The normal equations (J = (ix, iy, j2, j3, -1) per sample, residual e): NormalSums.
    NormalSums ns;
    const double reach = s * half + 1;
    if (qx - reach < 0 || qy - reach < 0 || qx + reach + 1 >= I1.cols || qy + reach + 1 >= I1.rows) return false;
    cols.set(side, [&](int k) { return static_cast<float>(qx + s * (k - half)); });
    rows.set(side, [&](int k) { return static_cast<float>(qy + s * (k - half)); });
    for (int v = -half; v <= half; ++v) {
      grad.row(I1, rows.i0[v + half], rows.f[v + half], cols.i0.data(), cols.f.data(), side, rix, riy, ri1);
      add_row(rix, riy, ri1, &tmpl[static_cast<size_t>(v + half) * side], half, v, g, b, ns);
    }
    const double(&a0)[4] = ns.a[0], (&a1)[4] = ns.a[1], (&a2)[4] = ns.a[2], (&a3)[4] = ns.a[3], (&a4)[4] = ns.a[4], (&a5)[4] = ns.a[5];
    const double h[5][5] = {{a0[0], a0[1], a0[2], a0[3], a5[0]},
                            {0, a1[1], a1[2], a1[3], a5[1]},
                            {0, 0, a2[2], a2[3], a5[2]},
                            {0, 0, 0, a3[3], a5[3]},
                            {0, 0, 0, 0, static_cast<double>(side * side)}};  // the sum of side^2 ones (-1 times -1)
    const double r5[5] = {a4[0], a4[1], a4[2], a4[3], ns.e4};
    cv::Matx<double, 5, 5> H;
    cv::Vec<double, 5> rhs;
    for (int r = 0; r < 5; ++r) {
      rhs[r] = -r5[r];
      for (int c = 0; c < 5; ++c) H(r, c) = c >= r ? h[r][c] : h[c][r];
    }
    cv::Vec<double, 5> d;
    if (!cv::solve(H, rhs, d, cv::DECOMP_CHOLESKY)) return false;
    qx += d[0];
    qy += d[1];
    s += d[2];
    g += d[3];
    b += d[4];
    if (!(s > 0.6 && s < 1.6) || !std::isfinite(qx + qy)) return false;
    if (d[0] * d[0] + d[1] * d[1] < 1e-4) break;
  }
  if (std::hypot(qx - q.x, qy - q.y) > max_shift) return false;
  q = cv::Point2f(static_cast<float>(qx), static_cast<float>(qy));
  return true;
}

}  // namespace

void refine_tracks_scaled(const cv::Mat& I0, const cv::Mat& I1, const cv::Mat* derivs, cv::Mat& gx, cv::Mat& gy,
                          const std::vector<cv::Point2f>& from, std::vector<cv::Point2f>& to, const std::vector<bool>& use, int half,
                          float max_shift) {
  RefineScratch scratch;
  auto refine = [&](const auto& grad) {
    for (size_t i = 0; i < from.size(); ++i)
      if (use[i]) refine_scaled(I0, I1, grad, from[i], to[i], half, max_shift, scratch);
  };
  if (derivs) {
    refine(PyramidGradients{*derivs});
  } else {
    cv::Scharr(I1, gx, CV_32F, 1, 0, 1.0 / 32);
    cv::Scharr(I1, gy, CV_32F, 0, 1, 1.0 / 32);
    refine(FloatGradients{gx, gy});
  }
}

}  // namespace egogeo::vo
