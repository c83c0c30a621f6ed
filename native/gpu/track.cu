// Tracking: pyramidal KLT forward, then backward from its result, and the four checks per point.
#include "kernels.cuh"
#include "klt_core.h"

namespace egogeo::gpu {

/// A warp tracks one point (klt_core.h's lane groups): lane i takes the window's pixels i, i + 32,
/// ..., and the exact integer sums are added across the warp by a butterfly, so every lane holds
/// the totals and runs the same float steps. Host form: never called (lane 0 of 32 alone).
struct WarpGroup {
  EGG_HD int lane() const {
#ifdef __CUDA_ARCH__
    return static_cast<int>(threadIdx.x & 31);
#else
    return 0;
#endif
  }
  EGG_HD int size() const { return 32; }
  EGG_HD int64_t sum(int64_t v) const {
#ifdef __CUDA_ARCH__
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, static_cast<long long>(v), o);
#endif
    return v;
  }
};

/// Forward KLT, backward KLT from the forward result, then the four checks, for point i of job J,
/// by the lanes of g; lane 0 writes the results.
template <class Group>
__device__ __forceinline__ void track_one(const Group& g, const TrackDesc& J, int i, const float2* pts, float2* fwd, float2* back, uint8_t* status,
                                          int16_t* scratch, int window, int iterations, float eps2, float min_eig, float fb2) {
  const int k = J.offset + i;
  const float2 p = pts[k];
  float fx, fy, bx, by;
  const bool s1 = lk_point(g, J.from, J.to, J.top, window, iterations, eps2, min_eig, p.x, p.y, 0, 0, false, scratch, &fx, &fy);
  const bool s2 = lk_point(g, J.to, J.from, J.top, window, iterations, eps2, min_eig, fx, fy, p.x, p.y, true, scratch, &bx, &by);
  if (g.lane() != 0) return;
  fwd[k] = make_float2(fx, fy);
  back[k] = make_float2(bx, by);
  const float dx = bx - p.x, dy = by - p.y;
  status[k] = static_cast<uint8_t>((s1 ? EGOGEO_GPU_FWD : 0) | (s2 ? EGOGEO_GPU_BACK : 0) |
                                   (fx >= 0 && fy >= 0 && fx < J.w - 1 && fy < J.h - 1 ? EGOGEO_GPU_INSIDE : 0) |
                                   (dx * dx + dy * dy < fb2 ? EGOGEO_GPU_FB : 0));
}

/// One warp per point; each warp's window templates (3 x window^2 shorts) in shared memory.
__global__ void k_track(const TrackDesc* jobs, const float2* pts, float2* fwd, float2* back, uint8_t* status, int window, int iterations,
                        float eps2, float min_eig, float fb2) {
  extern __shared__ int16_t track_smem[];
  const TrackDesc& J = jobs[blockIdx.y];
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int i = static_cast<int>(blockIdx.x) * kTrackWarps + warp;
  if (i >= J.n) return;  // the whole warp: the shuffles below need all 32 lanes
  track_one(WarpGroup{}, J, i, pts, fwd, back, status, track_smem + warp * 3 * window * window, window, iterations, eps2, min_eig, fb2);
}

/// EGOGEO_GPU_OPT_THREAD_KLT (the former kernel, kept to measure against): one thread per point,
/// its window templates in local memory.
__global__ void k_track_thread(const TrackDesc* jobs, const float2* pts, float2* fwd, float2* back, uint8_t* status, int window, int iterations,
                               float eps2, float min_eig, float fb2) {
  const TrackDesc& J = jobs[blockIdx.y];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= J.n) return;
  int16_t scratch[3 * kMaxWindow * kMaxWindow];
  track_one(Solo{}, J, i, pts, fwd, back, status, scratch, window, iterations, eps2, min_eig, fb2);
}

}  // namespace egogeo::gpu
