// Per-pixel and per-point numerics of the GPU path, written once for host and device so the same
// code runs in the CUDA kernels and in the host reference (egogeo_gpu_reference_*), which is what
// can be checked against OpenCV on a machine without a GPU. Each function reproduces the integer
// arithmetic of OpenCV 4.6 (modules/video/src/lkpyramid.cpp, imgproc pyrDown, features2d FAST); the
// KLT's window sums are exact integers (lk_point), as the CPU tracker's (native/vo/track/klt.cc), so tracks
// equal the CPU path's bit for bit and cv::calcOpticalFlowPyrLK's but for its float rounding.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define EGG_HD __host__ __device__ __forceinline__
#else
#define EGG_HD inline
#include <cmath>
#endif

namespace egogeo::gpu {

/// One pyramid level: 8-bit image (row pitch in bytes) and its Scharr derivatives (dx, dy pairs,
/// row pitch in pairs). Outside the image the pixels are BORDER_REFLECT_101 (buildOpticalFlowPyramid
/// pads with it) and the derivatives are 0 (calcOpticalFlowPyrLK pads them with BORDER_CONSTANT).
struct Level {
  const uint8_t* img;
  const int16_t* deriv;
  int w, h, pitch, dpitch;
};

EGG_HD int reflect101(int i, int n) {
  // Valid for -n < i < 2n - 1, i.e. for borders narrower than the image (levels stop before that).
  return i < 0 ? -i : (i >= n ? 2 * n - 2 - i : i);
}

EGG_HD int pix(const Level& L, int x, int y) { return L.img[reflect101(y, L.h) * L.pitch + reflect101(x, L.w)]; }

EGG_HD int deriv(const Level& L, int x, int y, int c) {
  if (x < 0 || y < 0 || x >= L.w || y >= L.h) return 0;
  return L.deriv[(y * L.dpitch + x) * 2 + c];
}

EGG_HD int floor_i(float v) {
#ifdef __CUDA_ARCH__
  return __float2int_rd(v);
#else
  return static_cast<int>(std::floor(v));
#endif
}

/// cvRound: round half to even.
EGG_HD int round_i(float v) {
#ifdef __CUDA_ARCH__
  return __float2int_rn(v);
#else
  return static_cast<int>(std::nearbyint(v));
#endif
}

EGG_HD float sqrt_f(float v) {
#ifdef __CUDA_ARCH__
  return __fsqrt_rn(v);
#else
  return std::sqrt(v);
#endif
}

/// pyrDown: 5-tap [1 4 6 4 1] in both directions, (sum + 128) >> 8, reflect-101 inside `src`.
/// Integer-exact, so the order of the sums does not matter.
EGG_HD uint8_t pyrdown_pixel(const uint8_t* src, int sw, int sh, int spitch, int x, int y) {
  const int k[5] = {1, 4, 6, 4, 1};
  int sum = 0;
  for (int dy = -2; dy <= 2; ++dy) {
    const uint8_t* row = src + reflect101(2 * y + dy, sh) * spitch;
    int r = 0;
    for (int dx = -2; dx <= 2; ++dx) r += k[dx + 2] * row[reflect101(2 * x + dx, sw)];
    sum += k[dy + 2] * r;
  }
  return static_cast<uint8_t>((sum + 128) >> 8);
}

/// calcSharrDeriv: vertical [3 10 3] / [-1 0 1] then horizontal [-1 0 1] / [3 10 3], rows and
/// columns reflected (101) at the image edges. Returns dx, dy unscaled (|d| <= 16 * 255).
EGG_HD void scharr_pixel(const uint8_t* img, int w, int h, int pitch, int x, int y, int16_t* dx, int16_t* dy) {
  const int y0 = h > 1 ? reflect101(y - 1, h) : 0, y2 = h > 1 ? reflect101(y + 1, h) : 0;
  const int xl = w > 1 ? reflect101(x - 1, w) : 0, xr = w > 1 ? reflect101(x + 1, w) : 0;
  const uint8_t* r0 = img + y0 * pitch;
  const uint8_t* r1 = img + y * pitch;
  const uint8_t* r2 = img + y2 * pitch;
  // smooth(c) = 3*r0 + 10*r1 + 3*r2, diff(c) = r2 - r0 on column c.
  const int sl = (r0[xl] + r2[xl]) * 3 + r1[xl] * 10, sr = (r0[xr] + r2[xr]) * 3 + r1[xr] * 10;
  const int dl = r2[xl] - r0[xl], dc = r2[x] - r0[x], dr = r2[xr] - r0[xr];
  *dx = static_cast<int16_t>(sr - sl);
  *dy = static_cast<int16_t>((dl + dr) * 3 + dc * 10);
}

/// FAST-9/16 (OpenCV's TYPE_9_16): 0 when (x, y) is no corner at `threshold`, else OpenCV's
/// cornerScore: the largest arc strength minus one (>= threshold). Arc strength: over the 16 arcs
/// of 9 contiguous circle pixels, min |centre - circle| with one sign throughout the arc.
EGG_HD int fast_score(const uint8_t* img, int pitch, int x, int y, int threshold) {
  const int ox[16] = {0, 1, 2, 3, 3, 3, 2, 1, 0, -1, -2, -3, -3, -3, -2, -1};
  const int oy[16] = {3, 3, 2, 1, 0, -1, -2, -3, -3, -3, -2, -1, 0, 1, 2, 3};
  const uint8_t* c = img + y * pitch + x;
  const int v = c[0];
  int d[16];
  // Quick reject: an arc of 9 contains one pixel of every opposite pair (k, k + 8), so pairs 0/8
  // and 4/12 must both hold a pixel of the arc's sign.
  for (int k = 0; k < 16; ++k) d[k] = v - c[oy[k] * pitch + ox[k]];
  const bool b0 = d[0] > threshold || d[8] > threshold, b1 = d[0] < -threshold || d[8] < -threshold;
  const bool b2 = d[4] > threshold || d[12] > threshold, b3 = d[4] < -threshold || d[12] < -threshold;
  if (!((b0 && b2) || (b1 && b3))) return 0;
  int best = 0;
  // On the device the arc loop must stay rolled: ptxas (CUDA 13.0, sm_90) mis-folds the unrolled
  // min/max chains (in the darker-arc branch the minimum became a maximum: 1.3 M of 11.2 M KITTI
  // pixels scored differently, ../shared/gpu/README.md). Rolled, 0 pixels differ. Guarded: g++ and
  // nvcc's host pass refuse the unknown pragma (-Werror=unknown-pragmas). Every context re-proves
  // it (the self-test of egogeo_gpu_create).
#ifdef __CUDA_ARCH__
#pragma unroll 1
#endif
  for (int s = 0; s < 16; ++s) {
    int lo = 1 << 20, hi = -(1 << 20);
    for (int k = 0; k < 9; ++k) {
      const int e = d[(s + k) & 15];
      lo = e < lo ? e : lo;
      hi = e > hi ? e : hi;
    }
    // lo > 0: the whole arc is darker than the centre by >= lo; hi < 0: brighter by >= -hi.
    if (lo > best) best = lo;
    if (-hi > best) best = -hi;
  }
  return best > threshold ? best - 1 : 0;
}

/// The lanes that track one point together. The window's pixels are dealt out to them (pixel i of
/// the win x win window to lane i mod size) and each lane sums its pixels' products; sum() adds the
/// lanes' sums. The sums are exact integers (|ix|, |iy| <= 4080, |diff| <= 8160, so every product and
/// sum is an integer), as the CPU tracker's KLT (native/vo/track/klt.cc) sums them, so their value depends
/// on no order and no dealing: every lane then runs the same float steps on the same totals, holds
/// the same estimate and takes the same branches. OpenCV 4.6 adds the products as floats (rounding
/// once the sums pass 2^24), so its last bits depend on its lane order; the exact sums give the CPU
/// path's tracks bit for bit, on one host thread (Solo: the host reference) or on a warp (context.cu),
/// and a group of host threads stands in for a warp in the tests (test/klt_group_test.cc).
struct Solo {
  EGG_HD int lane() const { return 0; }
  EGG_HD int size() const { return 1; }
  EGG_HD int64_t sum(int64_t v) const { return v; }
};

/// Pyramidal Lucas-Kanade for one point, as LKTrackerInvoker: `prev`/`next` hold levels
/// 0..max_level. `pt` is in level-0 pixels; `guess` the initial estimate in `next` (used when
/// use_guess, else pt). scratch: 3 * win * win shorts shared by the group (each lane touches only
/// its own pixels). Returns status; *out the estimate. Group: lane(), size(), sum(int64) as Solo.
template <class Group>
EGG_HD bool lk_point(const Group& g, const Level* prev, const Level* next, int max_level, int win, int iters, float eps2, float min_eig,
                     float ptx, float pty, float gx, float gy, bool use_guess, int16_t* scratch, float* outx, float* outy) {
  constexpr int W_BITS = 14;
  constexpr float FLT_SCALE = 1.f / (1 << 20);
  const float half = (win - 1) * 0.5f;
  const int area = win * win, lane = g.lane(), step = g.size();
  // This lane's first pixel, and the move from one of its pixels to the next (step columns on).
  const int y0 = lane / win, x0 = lane - y0 * win, sy = step / win, sx = step - sy * win;
  int16_t* Iw = scratch;
  int16_t* dIw = scratch + area;
  bool status = true;
  float nx = 0, ny = 0;  // nextPts[ptidx] as OpenCV holds it (the window centre, current level)
  for (int level = max_level; level >= 0; --level) {
    const Level& I = prev[level];
    const Level& J = next[level];
    const float scale = 1.f / static_cast<float>(1 << level);
    float px = ptx * scale, py = pty * scale;
    if (level == max_level) {
      nx = use_guess ? gx * scale : px;
      ny = use_guess ? gy * scale : py;
    } else {
      nx *= 2.f;
      ny *= 2.f;
    }
    px -= half;
    py -= half;
    const int ipx = floor_i(px), ipy = floor_i(py);
    if (ipx < -win || ipx >= I.w || ipy < -win || ipy >= I.h) {
      if (level == 0) status = false;
      continue;
    }
    float a = px - ipx, b = py - ipy;
    int iw00 = round_i((1.f - a) * (1.f - b) * (1 << W_BITS));
    int iw01 = round_i(a * (1.f - b) * (1 << W_BITS));
    int iw10 = round_i((1.f - a) * b * (1 << W_BITS));
    int iw11 = (1 << W_BITS) - iw00 - iw01 - iw10;
    int64_t s11 = 0, s12 = 0, s22 = 0;
    for (int i = lane, x = x0, y = y0; i < area; i += step) {
      const int xx = ipx + x, yy = ipy + y;
      const int ival = pix(I, xx, yy) * iw00 + pix(I, xx + 1, yy) * iw01 + pix(I, xx, yy + 1) * iw10 + pix(I, xx + 1, yy + 1) * iw11;
      const int ixv = deriv(I, xx, yy, 0) * iw00 + deriv(I, xx + 1, yy, 0) * iw01 + deriv(I, xx, yy + 1, 0) * iw10 + deriv(I, xx + 1, yy + 1, 0) * iw11;
      const int iyv = deriv(I, xx, yy, 1) * iw00 + deriv(I, xx + 1, yy, 1) * iw01 + deriv(I, xx, yy + 1, 1) * iw10 + deriv(I, xx + 1, yy + 1, 1) * iw11;
      const int iv = (ival + (1 << (W_BITS - 6))) >> (W_BITS - 5);
      const int ix = (ixv + (1 << (W_BITS - 1))) >> W_BITS;
      const int iy = (iyv + (1 << (W_BITS - 1))) >> W_BITS;
      Iw[i] = static_cast<int16_t>(iv);
      dIw[2 * i] = static_cast<int16_t>(ix);
      dIw[2 * i + 1] = static_cast<int16_t>(iy);
      s11 += ix * ix;
      s12 += ix * iy;
      s22 += iy * iy;
      x += sx;
      y += sy;
      if (x >= win) {
        x -= win;
        ++y;
      }
    }
    const float A11 = static_cast<float>(g.sum(s11)) * FLT_SCALE, A12 = static_cast<float>(g.sum(s12)) * FLT_SCALE,
                A22 = static_cast<float>(g.sum(s22)) * FLT_SCALE;
    float D = A11 * A22 - A12 * A12;
    const float mineig = (A22 + A11 - sqrt_f((A11 - A22) * (A11 - A22) + 4.f * A12 * A12)) / static_cast<float>(2 * win * win);
    if (mineig < min_eig || D < 1.1920929e-07f) {  // FLT_EPSILON
      if (level == 0) status = false;
      continue;
    }
    D = 1.f / D;
    // nextPts[ptidx] keeps the level's starting estimate until the first step writes it back.
    float resx = nx, resy = ny;
    nx -= half;
    ny -= half;
    float pdx = 0, pdy = 0;
    for (int j = 0; j < iters; ++j) {
      const int inx = floor_i(nx), iny = floor_i(ny);
      if (inx < -win || inx >= J.w || iny < -win || iny >= J.h) {
        if (level == 0) status = false;
        break;
      }
      a = nx - inx;
      b = ny - iny;
      iw00 = round_i((1.f - a) * (1.f - b) * (1 << W_BITS));
      iw01 = round_i(a * (1.f - b) * (1 << W_BITS));
      iw10 = round_i((1.f - a) * b * (1 << W_BITS));
      iw11 = (1 << W_BITS) - iw00 - iw01 - iw10;
      int64_t s1 = 0, s2 = 0;
      for (int i = lane, x = x0, y = y0; i < area; i += step) {
        const int xx = inx + x, yy = iny + y;
        const int jv = pix(J, xx, yy) * iw00 + pix(J, xx + 1, yy) * iw01 + pix(J, xx, yy + 1) * iw10 + pix(J, xx + 1, yy + 1) * iw11;
        const int diff = ((jv + (1 << (W_BITS - 6))) >> (W_BITS - 5)) - Iw[i];
        s1 += diff * dIw[2 * i];
        s2 += diff * dIw[2 * i + 1];
        x += sx;
        y += sy;
        if (x >= win) {
          x -= win;
          ++y;
        }
      }
      const float b1 = static_cast<float>(g.sum(s1)) * FLT_SCALE, b2 = static_cast<float>(g.sum(s2)) * FLT_SCALE;
      const float dx = (A12 * b2 - A22 * b1) * D;
      const float dy = (A12 * b1 - A11 * b2) * D;
      nx += dx;
      ny += dy;
      resx = nx + half;
      resy = ny + half;
      if (static_cast<double>(dx) * dx + static_cast<double>(dy) * dy <= eps2) break;
      // OpenCV: std::abs(float) < 0.01 (a double); for a float v that is |v| <= 0.01f.
      const float sx = dx + pdx, sy = dy + pdy;
      if (j > 0 && (sx <= 0.01f && sx >= -0.01f) && (sy <= 0.01f && sy >= -0.01f)) {
        // Oscillating between two positions: settle halfway (as OpenCV does).
        resx -= dx * 0.5f;
        resy -= dy * 0.5f;
        break;
      }
      pdx = dx;
      pdy = dy;
    }
    // The next level starts from the estimate as written back (the window centre).
    nx = resx;
    ny = resy;
    if (level == 0 && status) {
      // With an err array (egogeo's tracker passes one) OpenCV also drops a level-0 result whose
      // window lies outside the image's border.
      const int ex = floor_i(nx - half), ey = floor_i(ny - half);
      if (ex < -win || ex >= J.w || ey < -win || ey >= J.h) status = false;
    }
  }
  *outx = nx;
  *outy = ny;
  return status;
}

}  // namespace egogeo::gpu
