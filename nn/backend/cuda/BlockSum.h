#pragma once
// A block-wide sum in a fixed tree order (deterministic, no atomics), for kernels that reduce with
// one block per channel or example. Only .cu files include this.
#include "nn/backend/cuda/Launch.h"

namespace dl4cpp::cuda {

// The block's sum of each thread's `value` (blockDim.x == kThreadsPerBlock), in every thread;
// `shared` holds kThreadsPerBlock doubles.
__device__ inline double blockSum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int half = kThreadsPerBlock / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();
  return total;
}

}  // namespace dl4cpp::cuda
