#pragma once
// DL4CPP_HOST_DEVICE marks a function nvcc compiles for both host and device; the host compiler
// sees a plain inline function. For formulas that CUDA kernels and the CPU backend (or host-side
// tests) must compute identically.
#if defined(__CUDACC__)
#define DL4CPP_HOST_DEVICE __host__ __device__
#else
#define DL4CPP_HOST_DEVICE
#endif
