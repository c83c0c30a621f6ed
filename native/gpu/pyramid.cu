// Pyramids: pyrDown to the next level and Scharr derivatives of a level (klt_core.h's arithmetic, OpenCV 4.6's).
#include "kernels.cuh"
#include "klt_core.h"

namespace egogeo::gpu {

__global__ void k_pyrdown(const PlaneOp* ops) {
  const PlaneOp op = ops[blockIdx.z];
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= op.dw || y >= op.dh) return;
  static_cast<uint8_t*>(op.dst)[y * op.dpitch + x] = pyrdown_pixel(op.src, op.w, op.h, op.spitch, x, y);
}

__global__ void k_scharr(const PlaneOp* ops) {
  const PlaneOp op = ops[blockIdx.z];
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= op.w || y >= op.h) return;
  int16_t* d = static_cast<int16_t*>(op.dst) + (y * op.dpitch + x) * 2;
  scharr_pixel(op.src, op.w, op.h, op.spitch, x, y, d, d + 1);
}

}  // namespace egogeo::gpu
