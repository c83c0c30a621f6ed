// Detection: FAST scores, strict 3x3 maxima as sortable keys, and the selection of the sorted
// corners (select_core.h run by a CUDA block).
#include "kernels.cuh"
#include "klt_core.h"

#include <cub/block/block_scan.cuh>

namespace egogeo::gpu {

__global__ void k_fast(const PlaneOp* ops) {
  const PlaneOp op = ops[blockIdx.z];
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= op.w || y >= op.h) return;
  // OpenCV's FAST looks at rows and columns 3 .. n-4 only; the rest scores 0 (no corner).
  const bool inner = x >= 3 && y >= 3 && x < op.w - 3 && y < op.h - 3;
  static_cast<uint16_t*>(op.dst)[y * op.dpitch + x] = inner ? static_cast<uint16_t>(fast_score(op.src, op.spitch, x, y, op.threshold)) : 0;
}

/// Strict 3x3 non-maximum suppression of the FAST scores (OpenCV's rule), appending survivors.
__global__ void k_nms(const PlaneOp* ops) {
  const PlaneOp op = ops[blockIdx.z];
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 3 || y < 3 || x >= op.w - 3 || y >= op.h - 3) return;
  const uint16_t* s = reinterpret_cast<const uint16_t*>(op.src);
  const uint16_t v = s[y * op.dpitch + x];
  if (v == 0) return;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      if ((dx || dy) && s[(y + dy) * op.dpitch + x + dx] >= v) return;
  const int i = atomicAdd(op.count, 1);
  if (i < op.capacity) static_cast<unsigned long long*>(op.dst)[i] = corner_key(x, y, v);
}

/// The end of each job's segment of keys for the segmented sort.
__global__ void k_ends(const int* counts, int* ends, int n, int cap) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) ends[i] = i * cap + min(counts[i], cap);
}

using SelectScan = cub::BlockScan<int, kSelectThreads>;

/// A CUDA block as select_core.h's threads. Host form: never called.
struct CudaBlock {
  typename SelectScan::TempStorage& tmp;
#ifdef __CUDA_ARCH__
  __device__ int tid() const { return static_cast<int>(threadIdx.x); }
  __device__ int size() const { return static_cast<int>(blockDim.x); }
  __device__ void sync() const { __syncthreads(); }
  __device__ int exclusive_sum(int v, int& total) const {
    int out = 0;
    SelectScan(tmp).ExclusiveSum(v, out, total);
    return out;
  }
  __device__ void add(int* p, int v) const { atomicAdd(p, v); }
  __device__ void set(uint8_t* p) const { *p = 1; }
#else
  int tid() const { return 0; }
  int size() const { return 1; }
  void sync() const {}
  int exclusive_sum(int v, int& total) const { return total = v, 0; }
  void add(int* p, int v) const { *p += v; }
  void set(uint8_t* p) const { *p = 1; }
#endif
};

/// One block per detect job: select_core.h's selection of the job's sorted corners, its shared
/// state in shared memory (the occupancy grid in global memory when it does not fit).
__global__ void k_select(const DetectDesc* descs, const unsigned long long* keys, const int* counts, int cap, int* header, Corner* out,
                         const float2* existing, uint8_t* occ_global, size_t occ_stride) {
  extern __shared__ unsigned long long smem[];
  __shared__ int s_taken, s_done;
  __shared__ typename SelectScan::TempStorage scan_tmp;
  const int job = blockIdx.x;
  const DetectDesc D = descs[job];
  SelectShared S;
  S.chunk = smem;
  S.live_bucket = reinterpret_cast<int*>(smem + kChunk);
  S.live_cell = reinterpret_cast<unsigned*>(S.live_bucket + kChunk);
  S.per_bucket = reinterpret_cast<int*>(S.live_cell + kChunk);
  S.occ = D.occ_shared ? reinterpret_cast<uint8_t*>(S.per_bucket + D.cols * D.rows) : occ_global + static_cast<size_t>(job) * occ_stride;
  S.taken = &s_taken;
  S.done = &s_done;
  select_job(CudaBlock{scan_tmp}, D, keys + static_cast<size_t>(job) * cap, min(counts[job], cap), reinterpret_cast<const float*>(existing + D.existing_at),
             out + D.out_at, S, header + 2 * job);
}

}  // namespace egogeo::gpu
