#include "fast.h"

#include <opencv2/features2d.hpp>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EGOGEO_FAST_AVX2 1  // compiled with a target attribute, run where the CPU has AVX2
#define EGOGEO_AVX2 __attribute__((target("avx2")))
#endif

#include <algorithm>

namespace egogeo::vo {
namespace {

// The circle of radius 3, in order around it (OpenCV's makeOffsets for 16 points; any cyclic
// order gives the same arcs).
constexpr int kOx[16] = {0, 1, 2, 3, 3, 3, 2, 1, 0, -1, -2, -3, -3, -3, -2, -1};
constexpr int kOy[16] = {3, 3, 2, 1, 0, -1, -2, -3, -3, -3, -2, -1, 0, 1, 2, 3};

/// OpenCV's corner score at (x, y): 0 when no corner at `threshold`, else the largest arc strength
/// minus one (an arc's strength: min |centre - circle| over 9 contiguous circle pixels all brighter,
/// or all darker, than the centre). For images too narrow for a vector.
int score_at(const uchar* c, int step, int threshold) {
  const int v = c[0];
  int d[16];
  for (int k = 0; k < 16; ++k) d[k] = v - c[kOy[k] * step + kOx[k]];
  int best = 0;
  for (int s = 0; s < 16; ++s) {
    int lo = 256, hi = -256;
    for (int k = 0; k < 9; ++k) lo = std::min(lo, d[(s + k) & 15]), hi = std::max(hi, d[(s + k) & 15]);
    best = std::max({best, lo, -hi});
  }
  return best > threshold ? best - 1 : 0;
}

#ifdef EGOGEO_FAST_AVX2
/// The best arc strength of 32 pixels: with a = (centre - circle)+ (darker) or (circle - centre)+
/// (brighter), saturated bytes, an arc's strength is the minimum of a over it (0 when one pixel has
/// the other sign); the minima of the 16 cyclic windows of 9 by doubling (2, 4, 8, + 1).
EGOGEO_AVX2 inline __m256i arc_best(const uchar* p, const int* off) {
  const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  __m256i r[16];
  for (int k = 0; k < 16; ++k) r[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + off[k]));
  __m256i best = _mm256_setzero_si256();
  for (int brighter = 0; brighter < 2; ++brighter) {
    __m256i a[16], m2[16], m4[16];
    for (int k = 0; k < 16; ++k) a[k] = brighter ? _mm256_subs_epu8(r[k], c) : _mm256_subs_epu8(c, r[k]);
    for (int k = 0; k < 16; ++k) m2[k] = _mm256_min_epu8(a[k], a[(k + 1) & 15]);
    for (int k = 0; k < 16; ++k) m4[k] = _mm256_min_epu8(m2[k], m2[(k + 2) & 15]);
    for (int k = 0; k < 16; ++k) best = _mm256_max_epu8(best, _mm256_min_epu8(_mm256_min_epu8(m4[k], m4[(k + 4) & 15]), a[(k + 8) & 15]));
  }
  return best;
}

/// Lanes where v is not above the neighbour row q (v <= q, unsigned), or-ed into `le`.
EGOGEO_AVX2 inline __m256i not_above(__m256i le, __m256i v, const uchar* q) {
  const __m256i n = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
  return _mm256_or_si256(le, _mm256_cmpeq_epi8(_mm256_max_epu8(v, n), n));
}

EGOGEO_AVX2 void corners_avx2(const cv::Mat& img, int threshold, std::vector<cv::KeyPoint>& kps, FastScratch& scratch) {
  kps.clear();
  const int rows = img.rows, cols = img.cols;
  // OpenCV tests rows and columns 3 .. size - 4 (the circle inside the image); a smaller image has none.
  if (rows < 7 || cols < 7) return;
  scratch.score.assign(static_cast<size_t>(rows) * cols, 0);  // 0: no corner (borders included)
  uchar* S = scratch.score.data();
  const int step = static_cast<int>(img.step);
  int off[16];
  for (int k = 0; k < 16; ++k) off[k] = kOy[k] * step + kOx[k];
  const __m256i one = _mm256_set1_epi8(1), above = _mm256_set1_epi8(static_cast<char>(threshold + 1));
  // The score plane: best - 1 where best > threshold (a corner), else 0.
  for (int y = 3; y < rows - 3; ++y) {
    const uchar* row = img.ptr<uchar>(y);
    uchar* out = S + static_cast<size_t>(y) * cols;
    if (cols - 6 < 32 || threshold >= 255) {  // too narrow for a vector; at 255 nothing is a corner
      for (int x = 3; x < cols - 3; ++x) out[x] = static_cast<uchar>(score_at(row + x, step, threshold));
      continue;
    }
    const int last = cols - 3 - 32;
    for (int x = 3;; x += 32) {
      x = std::min(x, last);  // the last vector overlaps the one before (the same values again)
      const __m256i best = arc_best(row + x, off);
      const __m256i corner = _mm256_cmpeq_epi8(_mm256_max_epu8(best, above), best);  // best >= threshold + 1
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + x), _mm256_and_si256(_mm256_sub_epi8(best, one), corner));
      if (x == last) break;
    }
  }
  // Non-maximum suppression as OpenCV's: a corner strictly above its 8 neighbours (a score of 0 never
  // is), listed row by row, left to right.
  for (int y = 3; y < rows - 3; ++y) {
    const uchar *a = S + static_cast<size_t>(y - 1) * cols, *m = a + cols, *b = m + cols;
    int x = 3;
    for (; x + 33 <= cols; x += 32) {  // x + 32 columns read (x + 32 <= cols - 1)
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(m + x));
      __m256i le = _mm256_setzero_si256();
      le = not_above(le, v, m + x - 1), le = not_above(le, v, m + x + 1);
      le = not_above(le, v, a + x - 1), le = not_above(le, v, a + x), le = not_above(le, v, a + x + 1);
      le = not_above(le, v, b + x - 1), le = not_above(le, v, b + x), le = not_above(le, v, b + x + 1);
      for (unsigned mask = ~static_cast<unsigned>(_mm256_movemask_epi8(le)); mask; mask &= mask - 1) {
        const int k = __builtin_ctz(mask);
        kps.emplace_back(static_cast<float>(x + k), static_cast<float>(y), 7.f, -1.f, static_cast<float>(m[x + k]));
      }
    }
    for (; x < cols - 3; ++x) {
      const int v = m[x];
      if (v > m[x - 1] && v > m[x + 1] && v > a[x - 1] && v > a[x] && v > a[x + 1] && v > b[x - 1] && v > b[x] && v > b[x + 1])
        kps.emplace_back(static_cast<float>(x), static_cast<float>(y), 7.f, -1.f, static_cast<float>(v));
    }
  }
}
#endif

}  // namespace

bool fast_corners_own() {
#ifdef EGOGEO_FAST_AVX2
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

void fast_corners(const cv::Mat& img, int threshold, std::vector<cv::KeyPoint>& kps, FastScratch& scratch, bool opencv) {
  CV_Assert(img.type() == CV_8UC1 && threshold >= 0 && threshold <= 255);
#ifdef EGOGEO_FAST_AVX2
  if (!opencv && fast_corners_own()) return corners_avx2(img, threshold, kps, scratch);
#endif
  cv::FAST(img, kps, threshold, true);
}

}  // namespace egogeo::vo
