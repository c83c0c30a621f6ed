#include "band_blur.h"

#include <opencv2/imgproc.hpp>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EGOGEO_BLUR_AVX2 1  // compiled with a target attribute, run where the CPU has AVX2 and FMA
#endif

#include <algorithm>

namespace egogeo::vo {
namespace {

/// cv::GaussianBlur's kernel size for a float image: cvRound(sigma * 4 * 2 + 1) | 1.
int kernel_size(double sigma) { return cvRound(sigma * 8 + 1) | 1; }

void blur_opencv(const cv::Mat& grey, int top, double sigma, cv::Mat& dst, BandBlurScratch& scratch) {
  cv::Mat& f = scratch.f;
  f.create(grey.size(), CV_32F);
  // The filter reads the rows above the band up to its radius (a submatrix's surroundings), so
  // those are converted and the rest left alone.
  const int from = std::max(0, top - kernel_size(sigma) / 2);
  grey.rowRange(from, grey.rows).convertTo(f.rowRange(from, grey.rows), CV_32F);
  cv::Mat band = dst.rowRange(top, grey.rows);
  cv::GaussianBlur(f.rowRange(top, grey.rows), band, cv::Size(0, 0), sigma);
}

#ifdef EGOGEO_BLUR_AVX2
#define EGOGEO_AVX2_FMA __attribute__((target("avx2,fma")))

/// d[x] = FMA chain of k[i] p[x + i], i = 0..ks-1, for x < n (n a multiple of 8; p padded).
EGOGEO_AVX2_FMA void row_pass(const float* p, const float* k, int ks, int n, float* d) {
  int x = 0;
  for (; x + 32 <= n; x += 32) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int i = 0; i < ks; ++i) {
      const __m256 kv = _mm256_broadcast_ss(k + i);
      const float* q = p + x + i;
      s0 = _mm256_fmadd_ps(_mm256_loadu_ps(q), kv, s0);
      s1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 8), kv, s1);
      s2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 16), kv, s2);
      s3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 24), kv, s3);
    }
    _mm256_storeu_ps(d + x, s0), _mm256_storeu_ps(d + x + 8, s1), _mm256_storeu_ps(d + x + 16, s2), _mm256_storeu_ps(d + x + 24, s3);
  }
  for (; x < n; x += 8) {
    __m256 s = _mm256_setzero_ps();
    for (int i = 0; i < ks; ++i) s = _mm256_fmadd_ps(_mm256_loadu_ps(p + x + i), _mm256_broadcast_ss(k + i), s);
    _mm256_storeu_ps(d + x, s);
  }
}

/// d[x - from] = kc[0] S[0][x], then FMAs of kc[i] (S[i][x] + S[-i][x]), i = 1..r, for x in [from, n)
/// (n - from a multiple of 8).
EGOGEO_AVX2_FMA void column_pass(const float* const* S, const float* kc, int r, int from, int n, float* d) {
  int x = from;
  const __m256 zero = _mm256_setzero_ps();
  for (; x + 32 <= n; x += 32) {
    const __m256 c = _mm256_broadcast_ss(kc);
    const float* m = S[0] + x;
    __m256 s0 = _mm256_fmadd_ps(_mm256_loadu_ps(m), c, zero), s1 = _mm256_fmadd_ps(_mm256_loadu_ps(m + 8), c, zero);
    __m256 s2 = _mm256_fmadd_ps(_mm256_loadu_ps(m + 16), c, zero), s3 = _mm256_fmadd_ps(_mm256_loadu_ps(m + 24), c, zero);
    for (int i = 1; i <= r; ++i) {
      const float *a = S[i] + x, *b = S[-i] + x;
      const __m256 kv = _mm256_broadcast_ss(kc + i);
      s0 = _mm256_fmadd_ps(_mm256_add_ps(_mm256_loadu_ps(a), _mm256_loadu_ps(b)), kv, s0);
      s1 = _mm256_fmadd_ps(_mm256_add_ps(_mm256_loadu_ps(a + 8), _mm256_loadu_ps(b + 8)), kv, s1);
      s2 = _mm256_fmadd_ps(_mm256_add_ps(_mm256_loadu_ps(a + 16), _mm256_loadu_ps(b + 16)), kv, s2);
      s3 = _mm256_fmadd_ps(_mm256_add_ps(_mm256_loadu_ps(a + 24), _mm256_loadu_ps(b + 24)), kv, s3);
    }
    float* o = d + (x - from);
    _mm256_storeu_ps(o, s0), _mm256_storeu_ps(o + 8, s1), _mm256_storeu_ps(o + 16, s2), _mm256_storeu_ps(o + 24, s3);
  }
  for (; x < n; x += 8) {
    __m256 s = _mm256_fmadd_ps(_mm256_loadu_ps(S[0] + x), _mm256_broadcast_ss(kc), zero);
    for (int i = 1; i <= r; ++i) s = _mm256_fmadd_ps(_mm256_add_ps(_mm256_loadu_ps(S[i] + x), _mm256_loadu_ps(S[-i] + x)), _mm256_broadcast_ss(kc + i), s);
    _mm256_storeu_ps(d + (x - from), s);
  }
}

/// column_pass for two output rows at once, y (S[0]) and y + 1 (S[1]); S valid for -r .. r + 1.
/// Each row's chain is column_pass's, in its order; the rows they share are read once for both
/// (the pass is bound by its loads): y's step i adds S[i] + S[-i], y + 1's S[i + 1] + S[1 - i], and
/// S[i + 1] and S[-i] are y's next S[i] and y + 1's next S[1 - i].
EGOGEO_AVX2_FMA void column_pass2(const float* const* S, const float* kc, int r, int n, float* d0, float* d1) {
  const __m256 zero = _mm256_setzero_ps();
  int x = 0;
  for (; x + 16 <= n; x += 16) {
    const __m256 c = _mm256_broadcast_ss(kc);
    __m256 up0 = _mm256_loadu_ps(S[1] + x), up1 = _mm256_loadu_ps(S[1] + x + 8);    // S[i] of row y
    __m256 low0 = _mm256_loadu_ps(S[0] + x), low1 = _mm256_loadu_ps(S[0] + x + 8);  // S[1 - i] of row y + 1
    __m256 a0 = _mm256_fmadd_ps(low0, c, zero), a1 = _mm256_fmadd_ps(low1, c, zero);
    __m256 b0 = _mm256_fmadd_ps(up0, c, zero), b1 = _mm256_fmadd_ps(up1, c, zero);
    for (int i = 1; i <= r; ++i) {
      const __m256 kv = _mm256_broadcast_ss(kc + i);
      const __m256 m0 = _mm256_loadu_ps(S[-i] + x), m1 = _mm256_loadu_ps(S[-i] + x + 8);
      const __m256 p0 = _mm256_loadu_ps(S[i + 1] + x), p1 = _mm256_loadu_ps(S[i + 1] + x + 8);
      a0 = _mm256_fmadd_ps(_mm256_add_ps(up0, m0), kv, a0);
      a1 = _mm256_fmadd_ps(_mm256_add_ps(up1, m1), kv, a1);
      b0 = _mm256_fmadd_ps(_mm256_add_ps(p0, low0), kv, b0);
      b1 = _mm256_fmadd_ps(_mm256_add_ps(p1, low1), kv, b1);
      up0 = p0, up1 = p1, low0 = m0, low1 = m1;
    }
    _mm256_storeu_ps(d0 + x, a0), _mm256_storeu_ps(d0 + x + 8, a1), _mm256_storeu_ps(d1 + x, b0), _mm256_storeu_ps(d1 + x + 8, b1);
  }
  if (x < n) column_pass(S, kc, r, x, n, d0 + x), column_pass(S + 1, kc, r, x, n, d1 + x);
}

/// An 8-bit row as floats (exact).
EGOGEO_AVX2_FMA void widen(const uchar* g, int n, float* out) {
  int x = 0;
  for (; x + 8 <= n; x += 8) _mm256_storeu_ps(out + x, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + x)))));
  for (; x < n; ++x) out[x] = g[x];
}

void blur_own(const cv::Mat& grey, int top, double sigma, cv::Mat& dst, BandBlurScratch& scratch) {
  const int W = grey.cols, H = grey.rows, ks = kernel_size(sigma), r = ks / 2;
  const int n = (W + 7) / 8 * 8;  // columns computed (the passes run whole vectors; the rest is dropped)
  // The very kernel cv::GaussianBlur builds (createGaussianKernels), exactly symmetric.
  const cv::Mat kernel = cv::getGaussianKernel(ks, sigma, CV_32F);
  const float* k = kernel.ptr<float>();
  // Border: BORDER_REFLECT_101 of the whole frame, as for a submatrix that reaches the frame's edges.
  auto reflect = [](int p, int len) { return cv::borderInterpolate(p, len, cv::BORDER_REFLECT_101); };
  // Source rows the band reads: top - r .. H - 1 + r, reflected.
  int lo = H - 1, hi = 0;
  for (int t = top - r; t <= H - 1 + r; ++t) lo = std::min(lo, reflect(t, H)), hi = std::max(hi, reflect(t, H));
  std::vector<float>& row = scratch.row;
  std::vector<float>& rows = scratch.rows;
  row.assign(static_cast<size_t>(n + 2 * r), 0.f);
  rows.resize(static_cast<size_t>(hi - lo + 1) * n + 8);  // + the last vector's output
  for (int y = lo; y <= hi; ++y) {
    const uchar* g = grey.ptr<uchar>(y);
    float* p = row.data();
    widen(g, W, p + r);
    for (int j = 1; j <= r; ++j) p[r - j] = g[reflect(-j, W)], p[r + W - 1 + j] = g[reflect(W - 1 + j, W)];
    row_pass(p, k, ks, n, rows.data() + static_cast<size_t>(y - lo) * n);
  }
  const float* kc = k + r;
  std::vector<const float*> S(static_cast<size_t>(ks) + 1);
  float* spare = rows.data() + static_cast<size_t>(hi - lo + 1) * n;  // the last, partial vector
  const int body = W / 8 * 8;                                          // columns written straight into dst
  // Two output rows a pass (the last alone when the band's height is odd).
  for (int y = top; y < H; y += 2) {
    const bool two = y + 1 < H;
    for (int i = -r; i <= r + (two ? 1 : 0); ++i) S[static_cast<size_t>(i + r)] = rows.data() + static_cast<size_t>(reflect(y + i, H) - lo) * n;
    const float* const* Sy = S.data() + r;
    if (two) column_pass2(Sy, kc, r, body, dst.ptr<float>(y), dst.ptr<float>(y + 1));
    else column_pass(Sy, kc, r, 0, body, dst.ptr<float>(y));
    for (int k = 0; k < (two ? 2 : 1) && body < W; ++k) {
      column_pass(Sy + k, kc, r, body, n, spare);
      std::copy(spare, spare + (W - body), dst.ptr<float>(y + k) + body);
    }
  }
}
#endif

}  // namespace

bool band_blur_own() {
#ifdef EGOGEO_BLUR_AVX2
  // OpenCV's dispatcher picks its AVX2 filter (FMA3 implied) where the CPU has AVX2.
  return cv::checkHardwareSupport(CV_CPU_AVX2) && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

void band_blur(const cv::Mat& grey, int top, double sigma, cv::Mat& dst, BandBlurScratch& scratch, bool opencv) {
  CV_Assert(grey.type() == CV_8UC1 && dst.type() == CV_32FC1 && dst.size() == grey.size() && top >= 0 && top < grey.rows && sigma > 0);
#ifdef EGOGEO_BLUR_AVX2
  if (!opencv && band_blur_own()) return blur_own(grey, top, sigma, dst, scratch);
#endif
  blur_opencv(grey, top, sigma, dst, scratch);
}

}  // namespace egogeo::vo
