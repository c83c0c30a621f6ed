// The library's CUDA kernels, one file per stage (pyramid.cu, detect.cu, track.cu), launched by
// context.cu: what a launch hands them (PlaneOp, TrackDesc) and their signatures.
#pragma once

#include "internal.h"
#include "select_core.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace egogeo::gpu {

/// One image operation of a batched launch (blockIdx.z picks the operation).
struct PlaneOp {
  const uint8_t* src;
  void* dst;
  int w, h, spitch;  // the source (pyrDown: the finer level)
  int dw, dh, dpitch;
  int threshold;     // FAST
  int* count;        // NMS: corner counter
  int capacity;
};

/// One track job as the kernel sees it.
struct TrackDesc {
  Level from[kMaxLevels + 1];
  Level to[kMaxLevels + 1];
  int top, n, offset, w, h;
};

constexpr int kBlock = 16;
constexpr int kSelectSmem = 60 * 1024;  // dynamic shared memory of k_select (sm_75 allows 64 KiB per block in all)

constexpr int kTrackWarps = 4;  // points (warps) per block of k_track

// pyramid.cu: pyrDown and Scharr, a pixel per thread, blockIdx.z the operation.
__global__ void k_pyrdown(const PlaneOp* ops);
__global__ void k_scharr(const PlaneOp* ops);
// detect.cu: FAST scores, their 3x3 maxima, the sort's segment ends, the selection (a block per job).
__global__ void k_fast(const PlaneOp* ops);
__global__ void k_nms(const PlaneOp* ops);
__global__ void k_ends(const int* counts, int* ends, int n, int cap);
__global__ void k_select(const DetectDesc* descs, const unsigned long long* keys, const int* counts, int cap, int* header, Corner* out,
                         const float2* existing, uint8_t* occ_global, size_t occ_stride);
// track.cu: forward-backward KLT, a warp per point (k_track) or the former thread per point.
__global__ void k_track(const TrackDesc* jobs, const float2* pts, float2* fwd, float2* back, uint8_t* status, int window, int iterations,
                        float eps2, float min_eig, float fb2);
__global__ void k_track_thread(const TrackDesc* jobs, const float2* pts, float2* fwd, float2* back, uint8_t* status, int window, int iterations,
                               float eps2, float min_eig, float fb2);

}  // namespace egogeo::gpu
