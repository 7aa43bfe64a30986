#pragma once
// Launch geometry shared by the backend's kernels. Every element-wise kernel uses a grid-stride
// loop over int64_t indices, so any element count is covered by a bounded grid and no index can
// overflow 32 bits.
#include <algorithm>
#include <cstdint>

namespace dl4cpp::cuda {

constexpr int kThreadsPerBlock = 256;
// 4096 blocks of 256 threads fill every SM of an H100 several times over; larger tensors loop.
constexpr int64_t kMaxBlocks = 4096;

inline unsigned blocksFor(int64_t n) {
  return static_cast<unsigned>(
      std::clamp<int64_t>((n + kThreadsPerBlock - 1) / kThreadsPerBlock, 1, kMaxBlocks));
}

}  // namespace dl4cpp::cuda

// for (int64_t i = first index of this thread; i < n; i += total threads)
#define DL4CPP_GRID_STRIDE_LOOP(i, n)                                                    \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
