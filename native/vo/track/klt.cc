#include "klt.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#define EGOGEO_KLT_SSE2 1
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EGOGEO_KLT_AVX2 1  // compiled for AVX2 with a target attribute, run where the CPU has it
#endif

namespace egogeo::vo {
namespace {

// OpenCV's fixed point (lkpyramid.cpp): bilinear weights in 14 bits; the window's grey levels kept
// 5 bits finer than 8-bit pixels, its derivatives at Scharr's scale; sums scaled by 2^-20.
constexpr int kWBits = 14;
constexpr float kFltScale = 1.f / (1 << 20);

inline int descale(int x, int n) { return (x + (1 << (n - 1))) >> n; }

struct Weights {
  int w00, w01, w10, w11;
};

Weights weights(float a, float b) {
  Weights w;
  w.w00 = cvRound((1.f - a) * (1.f - b) * (1 << kWBits));
  w.w01 = cvRound(a * (1.f - b) * (1 << kWBits));
  w.w10 = cvRound((1.f - a) * b * (1 << kWBits));
  w.w11 = (1 << kWBits) - w.w00 - w.w01 - w.w10;
  return w;
}

/// Pixels a Mat's rows may be read past their last column (the border its buffer holds there).
int right_margin(const cv::Mat& m) {
  cv::Size whole;
  cv::Point ofs;
  m.locateROI(whole, ofs);
  return whole.width - ofs.x - m.cols;
}

/// The previous frame's window at one level: grey levels and derivatives (int16, rows of `stride`
/// with zeros past the window's width, so blocks of `lanes` pixels read nothing but zeros there).
struct Window {
  int w = 0, h = 0, lanes = 8, blocks = 0, stride = 0;
  std::vector<int16_t> I, Ix, Iy;
  void size(int side, int block_lanes) {
    w = h = side;
    lanes = block_lanes;
    blocks = (side + lanes - 1) / lanes;
    stride = blocks * lanes;
    I.assign(static_cast<size_t>(h) * stride, 0);
    Ix.assign(I.size(), 0);
    Iy.assign(I.size(), 0);
  }
  // Rows of blocks a 32-bit lane may sum before it could overflow: a block adds at most
  // 2 * 8160 * 4080 < 2^26 to each lane.
  int rows_per_flush() const { return std::max(1, 31 / blocks); }
};

/// Sums of the window's derivative products (OpenCV's iA11, iA12, iA22), exact.
struct Gram {
  int64_t a11 = 0, a12 = 0, a22 = 0;
};

void extract_scalar(const cv::Mat& I, const cv::Mat& dI, int ix, int iy, const Weights& q, Window& win, Gram& g) {
  const size_t stepI = I.step, dstep = dI.step / sizeof(int16_t);
  for (int y = 0; y < win.h; ++y) {
    const uchar* src = I.data + static_cast<ptrdiff_t>(iy + y) * static_cast<ptrdiff_t>(stepI) + ix;
    const int16_t* d = reinterpret_cast<const int16_t*>(dI.data + static_cast<ptrdiff_t>(iy + y) * static_cast<ptrdiff_t>(dI.step)) + 2 * ix;
    int16_t* Iw = &win.I[static_cast<size_t>(y) * win.stride];
    int16_t* Ixw = &win.Ix[static_cast<size_t>(y) * win.stride];
    int16_t* Iyw = &win.Iy[static_cast<size_t>(y) * win.stride];
    for (int x = 0; x < win.w; ++x, d += 2) {
      const int ival = descale(src[x] * q.w00 + src[x + 1] * q.w01 + src[x + stepI] * q.w10 + src[x + stepI + 1] * q.w11, kWBits - 5);
      const int ixval = descale(d[0] * q.w00 + d[2] * q.w01 + d[dstep] * q.w10 + d[dstep + 2] * q.w11, kWBits);
      const int iyval = descale(d[1] * q.w00 + d[3] * q.w01 + d[dstep + 1] * q.w10 + d[dstep + 3] * q.w11, kWBits);
      Iw[x] = static_cast<int16_t>(ival);
      Ixw[x] = static_cast<int16_t>(ixval);
      Iyw[x] = static_cast<int16_t>(iyval);
      g.a11 += ixval * ixval;
      g.a12 += ixval * iyval;
      g.a22 += iyval * iyval;
    }
  }
}

/// OpenCV's b: sums of (J - I) times each derivative over the window, exact.
void mismatch_scalar(const cv::Mat& J, int jx, int jy, const Weights& q, const Window& win, int64_t& b1, int64_t& b2) {
  const size_t stepJ = J.step;
  for (int y = 0; y < win.h; ++y) {
    const uchar* src = J.data + static_cast<ptrdiff_t>(jy + y) * static_cast<ptrdiff_t>(stepJ) + jx;
    const int16_t* Iw = &win.I[static_cast<size_t>(y) * win.stride];
    const int16_t* Ixw = &win.Ix[static_cast<size_t>(y) * win.stride];
    const int16_t* Iyw = &win.Iy[static_cast<size_t>(y) * win.stride];
    for (int x = 0; x < win.w; ++x) {
      const int diff = descale(src[x] * q.w00 + src[x + 1] * q.w01 + src[x + stepJ] * q.w10 + src[x + stepJ + 1] * q.w11, kWBits - 5) - Iw[x];
      b1 += diff * Ixw[x];
      b2 += diff * Iyw[x];
    }
  }
}

#ifdef EGOGEO_KLT_SSE2
inline int64_t hsum(__m128i v) {
  alignas(16) int32_t l[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(l), v);
  return static_cast<int64_t>(l[0]) + l[1] + l[2] + l[3];
}

/// 8 pixels of an 8-bit row pair at (x, y), (x+1, y), (x, y+1), (x+1, y+1) interpolated as OpenCV
/// does: int16 grey levels 5 bits finer.
inline __m128i interp8(const uchar* r0, const uchar* r1, __m128i w01, __m128i w23, __m128i delta) {
  const __m128i z = _mm_setzero_si128();
  const __m128i a = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r0)), z);
  const __m128i b = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r0 + 1)), z);
  const __m128i c = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r1)), z);
  const __m128i d = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r1 + 1)), z);
  __m128i lo = _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(a, b), w01), _mm_madd_epi16(_mm_unpacklo_epi16(c, d), w23));
  __m128i hi = _mm_add_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(a, b), w01), _mm_madd_epi16(_mm_unpackhi_epi16(c, d), w23));
  lo = _mm_srai_epi32(_mm_add_epi32(lo, delta), kWBits - 5);
  hi = _mm_srai_epi32(_mm_add_epi32(hi, delta), kWBits - 5);
  return _mm_packs_epi32(lo, hi);
}

/// 4 pixels of interleaved (Ix, Iy) derivatives interpolated: int32 lanes Ix, Iy, Ix, Iy, … for
/// pixels p..p+3 come back as two vectors (p, p+1) and (p+2, p+3).
inline void interp_deriv4(const int16_t* r0, const int16_t* r1, __m128i w01, __m128i w23, __m128i delta, __m128i& lo, __m128i& hi) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0 + 2));
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1));
  const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1 + 2));
  lo = _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(a, b), w01), _mm_madd_epi16(_mm_unpacklo_epi16(c, d), w23));
  hi = _mm_add_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(a, b), w01), _mm_madd_epi16(_mm_unpackhi_epi16(c, d), w23));
  lo = _mm_srai_epi32(_mm_add_epi32(lo, delta), kWBits);
  hi = _mm_srai_epi32(_mm_add_epi32(hi, delta), kWBits);
}

/// int16 lanes (Ix, Iy) x 4 twice -> the 8 Ix and the 8 Iy.
inline void deinterleave(__m128i p0, __m128i p1, __m128i& ix, __m128i& iy) {
  ix = _mm_packs_epi32(_mm_srai_epi32(_mm_slli_epi32(p0, 16), 16), _mm_srai_epi32(_mm_slli_epi32(p1, 16), 16));
  iy = _mm_packs_epi32(_mm_srai_epi32(p0, 16), _mm_srai_epi32(p1, 16));
}

inline __m128i pair(int a, int b) { return _mm_set1_epi32(static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(b)) << 16) | static_cast<uint16_t>(a))); }

void extract_sse2(const cv::Mat& I, const cv::Mat& dI, int ix, int iy, const Weights& q, Window& win, Gram& g) {
  const __m128i w01 = pair(q.w00, q.w01), w23 = pair(q.w10, q.w11);
  const __m128i dI5 = _mm_set1_epi32(1 << (kWBits - 5 - 1)), dD = _mm_set1_epi32(1 << (kWBits - 1));
  const int keep = win.w - 8 * (win.blocks - 1);  // pixels of the last block inside the window
  const __m128i last_mask = _mm_cmplt_epi16(_mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7), _mm_set1_epi16(static_cast<int16_t>(keep)));
  __m128i s11 = _mm_setzero_si128(), s12 = s11, s22 = s11;
  const int flush = win.rows_per_flush();
  for (int y = 0; y < win.h; ++y) {
    const uchar* r0 = I.data + static_cast<ptrdiff_t>(iy + y) * static_cast<ptrdiff_t>(I.step) + ix;
    const uchar* r1 = r0 + I.step;
    const int16_t* d0 = reinterpret_cast<const int16_t*>(dI.data + static_cast<ptrdiff_t>(iy + y) * static_cast<ptrdiff_t>(dI.step)) + 2 * ix;
    const int16_t* d1 = reinterpret_cast<const int16_t*>(reinterpret_cast<const uchar*>(d0) + dI.step);
    int16_t* Iw = &win.I[static_cast<size_t>(y) * win.stride];
    int16_t* Ixw = &win.Ix[static_cast<size_t>(y) * win.stride];
    int16_t* Iyw = &win.Iy[static_cast<size_t>(y) * win.stride];
    for (int k = 0; k < win.blocks; ++k) {
      const int x = 8 * k;
      const __m128i mask = k == win.blocks - 1 ? last_mask : _mm_set1_epi16(-1);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(Iw + x), _mm_and_si128(interp8(r0 + x, r1 + x, w01, w23, dI5), mask));
      __m128i a, b, c, d;
      interp_deriv4(d0 + 2 * x, d1 + 2 * x, w01, w23, dD, a, b);
      interp_deriv4(d0 + 2 * x + 8, d1 + 2 * x + 8, w01, w23, dD, c, d);
      __m128i gx, gy;
      deinterleave(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d), gx, gy);
      gx = _mm_and_si128(gx, mask);
      gy = _mm_and_si128(gy, mask);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(Ixw + x), gx);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(Iyw + x), gy);
      s11 = _mm_add_epi32(s11, _mm_madd_epi16(gx, gx));
      s12 = _mm_add_epi32(s12, _mm_madd_epi16(gx, gy));
      s22 = _mm_add_epi32(s22, _mm_madd_epi16(gy, gy));
    }
    if ((y + 1) % flush == 0 || y + 1 == win.h) {
      g.a11 += hsum(s11), g.a12 += hsum(s12), g.a22 += hsum(s22);
      s11 = s12 = s22 = _mm_setzero_si128();
    }
  }
}

void mismatch_sse2(const cv::Mat& J, int jx, int jy, const Weights& q, const Window& win, int64_t& b1, int64_t& b2) {
  const __m128i w01 = pair(q.w00, q.w01), w23 = pair(q.w10, q.w11);
  const __m128i dI5 = _mm_set1_epi32(1 << (kWBits - 5 - 1));
  __m128i s1 = _mm_setzero_si128(), s2 = s1;
  const int flush = win.rows_per_flush();
  for (int y = 0; y < win.h; ++y) {
    const uchar* r0 = J.data + static_cast<ptrdiff_t>(jy + y) * static_cast<ptrdiff_t>(J.step) + jx;
    const uchar* r1 = r0 + J.step;
    const int16_t* Iw = &win.I[static_cast<size_t>(y) * win.stride];
    const int16_t* Ixw = &win.Ix[static_cast<size_t>(y) * win.stride];
    const int16_t* Iyw = &win.Iy[static_cast<size_t>(y) * win.stride];
    for (int k = 0; k < win.blocks; ++k) {
      const int x = 8 * k;
      // Past the window's width the derivatives are zero: those lanes add nothing.
      const __m128i diff = _mm_sub_epi16(interp8(r0 + x, r1 + x, w01, w23, dI5), _mm_loadu_si128(reinterpret_cast<const __m128i*>(Iw + x)));
      s1 = _mm_add_epi32(s1, _mm_madd_epi16(diff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(Ixw + x))));
      s2 = _mm_add_epi32(s2, _mm_madd_epi16(diff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(Iyw + x))));
    }
    if ((y + 1) % flush == 0 || y + 1 == win.h) {
      b1 += hsum(s1), b2 += hsum(s2);
      s1 = s2 = _mm_setzero_si128();
    }
  }
}
#endif


#ifdef EGOGEO_KLT_AVX2
#define EGOGEO_AVX2 __attribute__((target("avx2")))

EGOGEO_AVX2 inline int64_t hsum8(__m256i v) {
  alignas(32) int32_t l[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(l), v);
  int64_t s = 0;
  for (int k = 0; k < 8; ++k) s += l[k];
  return s;
}

/// interp8's 16-pixel form: the lanes come back in pixel order (unpack and pack both work within
/// 128-bit halves, and undo each other's order).
EGOGEO_AVX2 inline __m256i interp16(const uchar* r0, const uchar* r1, __m256i w01, __m256i w23, __m256i delta) {
  const __m256i a = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r0)));
  const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r0 + 1)));
  const __m256i c = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r1)));
  const __m256i d = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r1 + 1)));
  __m256i lo = _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), w01), _mm256_madd_epi16(_mm256_unpacklo_epi16(c, d), w23));
  __m256i hi = _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), w01), _mm256_madd_epi16(_mm256_unpackhi_epi16(c, d), w23));
  lo = _mm256_srai_epi32(_mm256_add_epi32(lo, delta), kWBits - 5);
  hi = _mm256_srai_epi32(_mm256_add_epi32(hi, delta), kWBits - 5);
  return _mm256_packs_epi32(lo, hi);
}

/// 8 pixels of interleaved (Ix, Iy) interpolated, as int16 Ix, Iy pairs in pixel order.
EGOGEO_AVX2 inline __m256i interp_deriv8(const int16_t* r0, const int16_t* r1, __m256i w01, __m256i w23, __m256i delta) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0 + 2));
  const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1));
  const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1 + 2));
  __m256i lo = _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), w01), _mm256_madd_epi16(_mm256_unpacklo_epi16(c, d), w23));
  __m256i hi = _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), w01), _mm256_madd_epi16(_mm256_unpackhi_epi16(c, d), w23));
  lo = _mm256_srai_epi32(_mm256_add_epi32(lo, delta), kWBits);
  hi = _mm256_srai_epi32(_mm256_add_epi32(hi, delta), kWBits);
  return _mm256_packs_epi32(lo, hi);
}

EGOGEO_AVX2 void extract_avx2(const cv::Mat& I, const cv::Mat& dI, int ix, int iy, const Weights& q, Window& win, Gram& g) {
  const __m256i w01 = _mm256_set1_epi32(static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(q.w01)) << 16) | static_cast<uint16_t>(q.w00)));
  const __m256i w23 = _mm256_set1_epi32(static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(q.w11)) << 16) | static_cast<uint16_t>(q.w10)));
  const __m256i dI5 = _mm256_set1_epi32(1 << (kWBits - 5 - 1)), dD = _mm256_set1_epi32(1 << (kWBits - 1));
  const int keep = win.w - 16 * (win.blocks - 1);
  const __m256i last_mask = _mm256_cmpgt_epi16(_mm256_set1_epi16(static_cast<int16_t>(keep)), _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  __m256i s11 = _mm256_setzero_si256(), s12 = s11, s22 = s11;
  const int flush = win.rows_per_flush();
  for (int y = 0; y < win.h; ++y) {
    const uchar* r0 = I.data + static_cast<ptrdiff_t>(iy + y) * static_cast<ptrdiff_t>(I.step) + ix;
    const uchar* r1 = r0 + I.step;
    const int16_t* d0 = reinterpret_cast<const int16_t*>(dI.data + static_cast<ptrdiff_t>(iy + y) * static_cast<ptrdiff_t>(dI.step)) + 2 * ix;
    const int16_t* d1 = reinterpret_cast<const int16_t*>(reinterpret_cast<const uchar*>(d0) + dI.step);
    int16_t* Iw = &win.I[static_cast<size_t>(y) * win.stride];
    int16_t* Ixw = &win.Ix[static_cast<size_t>(y) * win.stride];
    int16_t* Iyw = &win.Iy[static_cast<size_t>(y) * win.stride];
    for (int k = 0; k < win.blocks; ++k) {
      const int x = 16 * k;
      const __m256i mask = k == win.blocks - 1 ? last_mask : _mm256_set1_epi16(-1);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(Iw + x), _mm256_and_si256(interp16(r0 + x, r1 + x, w01, w23, dI5), mask));
      const __m256i p0 = interp_deriv8(d0 + 2 * x, d1 + 2 * x, w01, w23, dD), p1 = interp_deriv8(d0 + 2 * x + 16, d1 + 2 * x + 16, w01, w23, dD);
      // Even lanes Ix, odd Iy; packing works within halves, the permute puts pixels back in order.
      __m256i gx = _mm256_packs_epi32(_mm256_srai_epi32(_mm256_slli_epi32(p0, 16), 16), _mm256_srai_epi32(_mm256_slli_epi32(p1, 16), 16));
      __m256i gy = _mm256_packs_epi32(_mm256_srai_epi32(p0, 16), _mm256_srai_epi32(p1, 16));
      gx = _mm256_and_si256(_mm256_permute4x64_epi64(gx, 0xD8), mask);
      gy = _mm256_and_si256(_mm256_permute4x64_epi64(gy, 0xD8), mask);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(Ixw + x), gx);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(Iyw + x), gy);
      s11 = _mm256_add_epi32(s11, _mm256_madd_epi16(gx, gx));
      s12 = _mm256_add_epi32(s12, _mm256_madd_epi16(gx, gy));
      s22 = _mm256_add_epi32(s22, _mm256_madd_epi16(gy, gy));
    }
    if ((y + 1) % flush == 0 || y + 1 == win.h) {
      g.a11 += hsum8(s11), g.a12 += hsum8(s12), g.a22 += hsum8(s22);
      s11 = s12 = s22 = _mm256_setzero_si256();
    }
  }
}

EGOGEO_AVX2 void mismatch_avx2(const cv::Mat& J, int jx, int jy, const Weights& q, const Window& win, int64_t& b1, int64_t& b2) {
  const __m256i w01 = _mm256_set1_epi32(static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(q.w01)) << 16) | static_cast<uint16_t>(q.w00)));
  const __m256i w23 = _mm256_set1_epi32(static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(q.w11)) << 16) | static_cast<uint16_t>(q.w10)));
  const __m256i dI5 = _mm256_set1_epi32(1 << (kWBits - 5 - 1));
  __m256i s1 = _mm256_setzero_si256(), s2 = s1;
  const int flush = win.rows_per_flush();
  for (int y = 0; y < win.h; ++y) {
    const uchar* r0 = J.data + static_cast<ptrdiff_t>(jy + y) * static_cast<ptrdiff_t>(J.step) + jx;
    const uchar* r1 = r0 + J.step;
    const int16_t* Iw = &win.I[static_cast<size_t>(y) * win.stride];
    const int16_t* Ixw = &win.Ix[static_cast<size_t>(y) * win.stride];
    const int16_t* Iyw = &win.Iy[static_cast<size_t>(y) * win.stride];
    for (int k = 0; k < win.blocks; ++k) {
      const int x = 16 * k;
      const __m256i diff = _mm256_sub_epi16(interp16(r0 + x, r1 + x, w01, w23, dI5), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(Iw + x)));
      s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(diff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(Ixw + x))));
      s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(diff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(Iyw + x))));
    }
    if ((y + 1) % flush == 0 || y + 1 == win.h) {
      b1 += hsum8(s1), b2 += hsum8(s2);
      s1 = s2 = _mm256_setzero_si256();
    }
  }
}

// GCC 12's AVX-512 headers start some intrinsics from an "undefined" vector and warn about it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define EGOGEO_AVX512 __attribute__((target("avx512f,avx512bw")))

/// 16 pixels from each of two rows, widened to int16: the first row's in the low half.
EGOGEO_AVX512 inline __m512i pair16(const uchar* lo, const uchar* hi) {
  return _mm512_cvtepu8_epi16(
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(lo))), _mm_loadu_si128(reinterpret_cast<const __m128i*>(hi)), 1));
}

EGOGEO_AVX512 inline int64_t hsum16(__m512i v) {
  return _mm512_reduce_add_epi64(_mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(v)), _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v, 1))));
}

/// Two 32-byte rows (lo, hi) as one vector, lo in the low half.
EGOGEO_AVX512 inline __m512i load2(const void* lo, const void* hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(static_cast<const __m256i*>(lo))), _mm256_loadu_si256(static_cast<const __m256i*>(hi)), 1);
}

/// interp_deriv8 on two derivative row pairs at once: (dy0, dy1) rows y and y + 1 of the
/// derivative level at pixel offset p (int16 pairs), row y's 8 pixels in the low half.
EGOGEO_AVX512 inline __m512i deriv2(const int16_t* dy0, const int16_t* dy1, const int16_t* dy2, __m512i w01, __m512i w23, __m512i delta) {
  const __m512i a = load2(dy0, dy1), b = load2(dy0 + 2, dy1 + 2), c = load2(dy1, dy2), d = load2(dy1 + 2, dy2 + 2);
  __m512i lo = _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpacklo_epi16(a, b), w01), _mm512_madd_epi16(_mm512_unpacklo_epi16(c, d), w23));
  __m512i hi = _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpackhi_epi16(a, b), w01), _mm512_madd_epi16(_mm512_unpackhi_epi16(c, d), w23));
  lo = _mm512_srai_epi32(_mm512_add_epi32(lo, delta), kWBits);
  hi = _mm512_srai_epi32(_mm512_add_epi32(hi, delta), kWBits);
  return _mm512_packs_epi32(lo, hi);
}

/// extract_avx2 two window rows at a time (the window's rows y, y + 1 in a vector's halves), for a
/// window of one 16-lane block per row; an odd last row runs as in AVX2. Exact integer sums.
EGOGEO_AVX512 void extract_avx512(const cv::Mat& I, const cv::Mat& dI, int ix, int iy, const Weights& q, Window& win, Gram& g) {
  const int32_t p01 = static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(q.w01)) << 16) | static_cast<uint16_t>(q.w00));
  const int32_t p23 = static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(q.w11)) << 16) | static_cast<uint16_t>(q.w10));
  const __m512i w01 = _mm512_set1_epi32(p01), w23 = _mm512_set1_epi32(p23);
  const __m512i dI5 = _mm512_set1_epi32(1 << (kWBits - 5 - 1)), dD = _mm512_set1_epi32(1 << (kWBits - 1));
  // Lanes inside the window: the first w of each 16-lane half.
  const __mmask32 keep = static_cast<__mmask32>(((1u << win.w) - 1) | (((1u << win.w) - 1) << 16));
  // packs interleaves 4-pixel quarters within 128-bit lanes; this puts each row's pixels in order.
  const __m512i order = _mm512_setr_epi64(0, 2, 1, 3, 4, 6, 5, 7);
  const size_t stepI = I.step, stepD = dI.step;
  const uchar* img = I.data + static_cast<ptrdiff_t>(iy) * static_cast<ptrdiff_t>(stepI) + ix;
  const uchar* der = dI.data + static_cast<ptrdiff_t>(iy) * static_cast<ptrdiff_t>(stepD) + 4 * static_cast<ptrdiff_t>(ix);
  __m512i s11 = _mm512_setzero_si512(), s12 = s11, s22 = s11;
  int y = 0;
  for (; y + 1 < win.h; y += 2) {
    const uchar* r0 = img + static_cast<ptrdiff_t>(y) * static_cast<ptrdiff_t>(stepI);
    const uchar *r1 = r0 + stepI, *r2 = r1 + stepI;
    const __m512i a = pair16(r0, r1), b = pair16(r0 + 1, r1 + 1), c = pair16(r1, r2), d = pair16(r1 + 1, r2 + 1);
    __m512i lo = _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpacklo_epi16(a, b), w01), _mm512_madd_epi16(_mm512_unpacklo_epi16(c, d), w23));
    __m512i hi = _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpackhi_epi16(a, b), w01), _mm512_madd_epi16(_mm512_unpackhi_epi16(c, d), w23));
    lo = _mm512_srai_epi32(_mm512_add_epi32(lo, dI5), kWBits - 5);
    hi = _mm512_srai_epi32(_mm512_add_epi32(hi, dI5), kWBits - 5);
    const size_t o = static_cast<size_t>(y) * win.stride;
    _mm512_storeu_si512(&win.I[o], _mm512_maskz_mov_epi16(keep, _mm512_packs_epi32(lo, hi)));
    const int16_t* d0 = reinterpret_cast<const int16_t*>(der + static_cast<ptrdiff_t>(y) * static_cast<ptrdiff_t>(stepD));
    const int16_t* d1 = reinterpret_cast<const int16_t*>(reinterpret_cast<const uchar*>(d0) + stepD);
    const int16_t* d2 = reinterpret_cast<const int16_t*>(reinterpret_cast<const uchar*>(d1) + stepD);
    const __m512i p0 = deriv2(d0, d1, d2, w01, w23, dD), p1 = deriv2(d0 + 16, d1 + 16, d2 + 16, w01, w23, dD);
    // Even lanes dx, odd dy (as in extract_avx2), each row's pixels put back in order.
    __m512i gx = _mm512_packs_epi32(_mm512_srai_epi32(_mm512_slli_epi32(p0, 16), 16), _mm512_srai_epi32(_mm512_slli_epi32(p1, 16), 16));
    __m512i gy = _mm512_packs_epi32(_mm512_srai_epi32(p0, 16), _mm512_srai_epi32(p1, 16));
    gx = _mm512_maskz_mov_epi16(keep, _mm512_permutexvar_epi64(order, gx));
    gy = _mm512_maskz_mov_epi16(keep, _mm512_permutexvar_epi64(order, gy));
    _mm512_storeu_si512(&win.Ix[o], gx);
    _mm512_storeu_si512(&win.Iy[o], gy);
    s11 = _mm512_add_epi32(s11, _mm512_madd_epi16(gx, gx));
    s12 = _mm512_add_epi32(s12, _mm512_madd_epi16(gx, gy));
    s22 = _mm512_add_epi32(s22, _mm512_madd_epi16(gy, gy));
  }
  g.a11 += hsum16(s11), g.a12 += hsum16(s12), g.a22 += hsum16(s22);
  if (y < win.h) {  // the odd last row, as extract_avx2 does it
    const __m256i v01 = _mm256_set1_epi32(p01), v23 = _mm256_set1_epi32(p23);
    const __m256i v5 = _mm256_set1_epi32(1 << (kWBits - 5 - 1)), vD = _mm256_set1_epi32(1 << (kWBits - 1));
    const __m256i mask = _mm256_cmpgt_epi16(_mm256_set1_epi16(static_cast<int16_t>(win.w)), _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    const uchar* r0 = img + static_cast<ptrdiff_t>(y) * static_cast<ptrdiff_t>(stepI);
    const int16_t* d0 = reinterpret_cast<const int16_t*>(der + static_cast<ptrdiff_t>(y) * static_cast<ptrdiff_t>(stepD));
    const int16_t* d1 = reinterpret_cast<const int16_t*>(reinterpret_cast<const uchar*>(d0) + stepD);
    const size_t o = static_cast<size_t>(y) * win.stride;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(&win.I[o]), _mm256_and_si256(interp16(r0, r0 + stepI, v01, v23, v5), mask));
    const __m256i p0 = interp_deriv8(d0, d1, v01, v23, vD), p1 = interp_deriv8(d0 + 16, d1 + 16, v01, v23, vD);
    __m256i gx = _mm256_packs_epi32(_mm256_srai_epi32(_mm256_slli_epi32(p0, 16), 16), _mm256_srai_epi32(_mm256_slli_epi32(p1, 16), 16));
    __m256i gy = _mm256_packs_epi32(_mm256_srai_epi32(p0, 16), _mm256_srai_epi32(p1, 16));
    gx = _mm256_and_si256(_mm256_permute4x64_epi64(gx, 0xD8), mask);
    gy = _mm256_and_si256(_mm256_permute4x64_epi64(gy, 0xD8), mask);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(&win.Ix[o]), gx);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(&win.Iy[o]), gy);
    g.a11 += hsum8(_mm256_madd_epi16(gx, gx)), g.a12 += hsum8(_mm256_madd_epi16(gx, gy)), g.a22 += hsum8(_mm256_madd_epi16(gy, gy));
  }
}

/// mismatch_avx2 two window rows at a time (AVX-512: rows y and y + 1 in the two halves of a vector,
/// each half the AVX2 block's lanes in its order). Exact integer sums, so the same b1, b2. For a
/// window of one 16-lane block per row (window side <= 16); an odd last row runs as in AVX2.
EGOGEO_AVX512 void mismatch_avx512(const cv::Mat& J, int jx, int jy, const Weights& q, const Window& win, int64_t& b1, int64_t& b2) {
  const int32_t p01 = static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(q.w01)) << 16) | static_cast<uint16_t>(q.w00));
  const int32_t p23 = static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(q.w11)) << 16) | static_cast<uint16_t>(q.w10));
  const __m512i w01 = _mm512_set1_epi32(p01), w23 = _mm512_set1_epi32(p23), dI5 = _mm512_set1_epi32(1 << (kWBits - 5 - 1));
  const size_t step = J.step;
  const uchar* row = J.data + static_cast<ptrdiff_t>(jy) * static_cast<ptrdiff_t>(step) + jx;
  __m512i s1 = _mm512_setzero_si512(), s2 = s1;
  int y = 0;
  for (; y + 1 < win.h; y += 2) {
    const uchar* r0 = row + static_cast<ptrdiff_t>(y) * static_cast<ptrdiff_t>(step);
    const uchar *r1 = r0 + step, *r2 = r1 + step;
    const __m512i a = pair16(r0, r1), b = pair16(r0 + 1, r1 + 1), c = pair16(r1, r2), d = pair16(r1 + 1, r2 + 1);
    __m512i lo = _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpacklo_epi16(a, b), w01), _mm512_madd_epi16(_mm512_unpacklo_epi16(c, d), w23));
    __m512i hi = _mm512_add_epi32(_mm512_madd_epi16(_mm512_unpackhi_epi16(a, b), w01), _mm512_madd_epi16(_mm512_unpackhi_epi16(c, d), w23));
    lo = _mm512_srai_epi32(_mm512_add_epi32(lo, dI5), kWBits - 5);
    hi = _mm512_srai_epi32(_mm512_add_epi32(hi, dI5), kWBits - 5);
    const size_t o = static_cast<size_t>(y) * win.stride;  // rows y, y + 1: 32 consecutive int16
    const __m512i diff = _mm512_sub_epi16(_mm512_packs_epi32(lo, hi), _mm512_loadu_si512(&win.I[o]));
    s1 = _mm512_add_epi32(s1, _mm512_madd_epi16(diff, _mm512_loadu_si512(&win.Ix[o])));
    s2 = _mm512_add_epi32(s2, _mm512_madd_epi16(diff, _mm512_loadu_si512(&win.Iy[o])));
  }
  // Each lane took at most one product pair per row pair: (h / 2) * 2 * 8160 * 4080 < 2^31 for h <= 16.
  b1 += hsum16(s1);
  b2 += hsum16(s2);
  if (y < win.h) {  // the odd last row, as mismatch_avx2 does it
    const __m256i v01 = _mm256_set1_epi32(p01), v23 = _mm256_set1_epi32(p23), d5 = _mm256_set1_epi32(1 << (kWBits - 5 - 1));
    const uchar* r0 = row + static_cast<ptrdiff_t>(y) * static_cast<ptrdiff_t>(step);
    const size_t o = static_cast<size_t>(y) * win.stride;
    const __m256i diff = _mm256_sub_epi16(interp16(r0, r0 + step, v01, v23, d5), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&win.I[o])));
    b1 += hsum8(_mm256_madd_epi16(diff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&win.Ix[o]))));
    b2 += hsum8(_mm256_madd_epi16(diff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&win.Iy[o]))));
  }
}
#undef EGOGEO_AVX512
#pragma GCC diagnostic pop
#endif

}  // namespace

void klt_track(const std::vector<cv::Mat>& prev, const std::vector<cv::Mat>& next, const std::vector<cv::Point2f>& from,
               std::vector<cv::Point2f>& to, std::vector<uchar>& status, const KltParams& p, bool use_initial) {
  const size_t n = from.size();
  status.assign(n, 1);
  if (!use_initial) to = from;
  CV_Assert(to.size() == n);
  if (n == 0) return;
  CV_Assert(prev.size() >= 2 && prev.size() % 2 == 0 && prev[1].type() == CV_16SC2);
  const int next_step = next.size() >= 2 && next[1].type() == CV_16SC2 ? 2 : 1;
  const int max_level = std::min({p.max_level, static_cast<int>(prev.size()) / 2 - 1, static_cast<int>(next.size()) / next_step - 1});
  const int max_count = std::min(std::max(p.max_count, 0), 100);
  const double eps = std::min(std::max(p.epsilon, 0.), 10.);
  const double eps2 = eps * eps;
  const cv::Size win_size(p.window, p.window);
  const cv::Point2f half_win((win_size.width - 1) * 0.5f, (win_size.height - 1) * 0.5f);
  const float area2 = static_cast<float>(2 * win_size.width * win_size.height);

  // Points in the order of their rows: each is tracked on its own (the order changes no answer),
  // and neighbours in the image share cache lines of the frame and its derivatives (a full-size
  // derivative level is 4 bytes a pixel, larger than the L2 cache).
  std::vector<int> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return from[a].y < from[b].y; });
#ifdef EGOGEO_KLT_AVX2
  const bool avx2 = p.isa >= 2 && __builtin_cpu_supports("avx2");
  // Two rows a vector where the CPU has AVX-512 (BW) and a row is one 16-lane block.
  const bool avx512 = avx2 && p.isa >= 3 && __builtin_cpu_supports("avx512bw") && (p.window + 15) / 16 == 1;
#else
  const bool avx2 = false;
  const bool avx512 = false;
#endif
  Window win;
  win.size(p.window, avx2 ? 16 : 8);
  for (int level = max_level; level >= 0; --level) {
    const cv::Mat& I = prev[2 * level];
    const cv::Mat& dI = prev[2 * level + 1];
    const cv::Mat& J = next[next_step * level];
    CV_Assert(I.size() == J.size() && I.type() == CV_8UC1 && J.type() == CV_8UC1);
    // The blocks read up to stride + 1 pixels from a window's left column (OpenCV's rows, w + 1):
    // where the buffer's border cannot hold that, the scalar path runs.
    const int reach = win.stride + 1;
    const int last_i = std::min(right_margin(I), right_margin(dI)) + I.cols - reach;
    const int last_j = right_margin(J) + J.cols - reach;
    const float scale = static_cast<float>(1. / (1 << level));
    // The next point's window rows are fetched while this one is tracked: a full-size derivative
    // level does not fit the cache, and a window's 14 rows are 14 misses in a row otherwise.
    auto prefetch = [&](int i) {
      const cv::Point2f q = from[i] * scale - half_win;
      const int x = cvFloor(q.x), y = cvFloor(q.y);
      if (x < -win_size.width || x >= dI.cols || y < -win_size.height || y >= dI.rows) return;
      for (int r = 0; r <= win.h; ++r) {
        const uchar* d = dI.data + static_cast<ptrdiff_t>(y + r) * static_cast<ptrdiff_t>(dI.step) + 4 * static_cast<ptrdiff_t>(x);
        __builtin_prefetch(d);
        __builtin_prefetch(d + 4 * win.w);
        __builtin_prefetch(I.data + static_cast<ptrdiff_t>(y + r) * static_cast<ptrdiff_t>(I.step) + x);
      }
    };
    for (size_t k = 0; k < n; ++k) {
      const int i = order[k];
      if (k + 1 < n) prefetch(order[k + 1]);
      cv::Point2f prev_pt = from[i] * scale;
      cv::Point2f next_pt;
      if (level == max_level) next_pt = use_initial ? to[i] * scale : prev_pt;
      else next_pt = to[i] * 2.f;
      to[i] = next_pt;

      prev_pt -= half_win;
      const cv::Point2i ip(cvFloor(prev_pt.x), cvFloor(prev_pt.y));
      if (ip.x < -win_size.width || ip.x >= dI.cols || ip.y < -win_size.height || ip.y >= dI.rows) {
        if (level == 0) status[i] = 0;
        continue;
      }
      Weights q = weights(prev_pt.x - ip.x, prev_pt.y - ip.y);
      Gram g;
      if (ip.x > last_i || p.isa < 1) extract_scalar(I, dI, ip.x, ip.y, q, win, g);
#ifdef EGOGEO_KLT_AVX2
      else if (avx512) extract_avx512(I, dI, ip.x, ip.y, q, win, g);
      else if (avx2) extract_avx2(I, dI, ip.x, ip.y, q, win, g);
#endif
#ifdef EGOGEO_KLT_SSE2
      else extract_sse2(I, dI, ip.x, ip.y, q, win, g);
#else
      else extract_scalar(I, dI, ip.x, ip.y, q, win, g);
#endif
      const float A11 = static_cast<float>(g.a11) * kFltScale, A12 = static_cast<float>(g.a12) * kFltScale, A22 = static_cast<float>(g.a22) * kFltScale;
      float D = A11 * A22 - A12 * A12;
      const float min_eig = (A22 + A11 - std::sqrt((A11 - A22) * (A11 - A22) + 4.f * A12 * A12)) / area2;
      if (min_eig < p.min_eig || D < FLT_EPSILON) {
        if (level == 0) status[i] = 0;
        continue;
      }
      D = 1.f / D;

      next_pt -= half_win;
      cv::Point2f prev_delta;
      for (int j = 0; j < max_count; ++j) {
        const cv::Point2i in(cvFloor(next_pt.x), cvFloor(next_pt.y));
        if (in.x < -win_size.width || in.x >= J.cols || in.y < -win_size.height || in.y >= J.rows) {
          if (level == 0) status[i] = 0;
          break;
        }
        q = weights(next_pt.x - in.x, next_pt.y - in.y);
        int64_t ib1 = 0, ib2 = 0;
        if (in.x > last_j || p.isa < 1) mismatch_scalar(J, in.x, in.y, q, win, ib1, ib2);
#ifdef EGOGEO_KLT_AVX2
        else if (avx512) mismatch_avx512(J, in.x, in.y, q, win, ib1, ib2);
        else if (avx2) mismatch_avx2(J, in.x, in.y, q, win, ib1, ib2);
#endif
#ifdef EGOGEO_KLT_SSE2
        else mismatch_sse2(J, in.x, in.y, q, win, ib1, ib2);
#else
        else mismatch_scalar(J, in.x, in.y, q, win, ib1, ib2);
#endif
        const float b1 = static_cast<float>(ib1) * kFltScale, b2 = static_cast<float>(ib2) * kFltScale;
        const cv::Point2f delta(static_cast<float>((A12 * b2 - A22 * b1) * D), static_cast<float>((A12 * b1 - A11 * b2) * D));
        next_pt += delta;
        to[i] = next_pt + half_win;
        if (delta.ddot(delta) <= eps2) break;
        if (j > 0 && std::abs(delta.x + prev_delta.x) < 0.01 && std::abs(delta.y + prev_delta.y) < 0.01) {
          to[i] -= delta * 0.5f;
          break;
        }
        prev_delta = delta;
      }
    }
  }
}

}  // namespace egogeo::vo
