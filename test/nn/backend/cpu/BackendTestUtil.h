#pragma once
// Helpers shared by the CPU backend's kernel tests: square windows, deterministic test data and
// the calling thread's OpenMP team size.
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/tensor/Tensor.h"

namespace testutil {

// A kernel x kernel window moving by `stride`, with `pad` on every side.
inline dl4cpp::WindowGeometry window(int64_t kernel, int64_t stride, int64_t pad = 0) {
  dl4cpp::WindowGeometry g;
  g.kernelH = g.kernelW = kernel;
  g.strideH = g.strideW = stride;
  g.padTop = g.padLeft = g.padBottom = g.padRight = pad;
  return g;
}

// Values in [-1, 1] in steps of 0.01, a different sequence for each salt.
inline dl4cpp::Tensor filled(const dl4cpp::Shape& shape, int64_t salt) {
  dl4cpp::Tensor t(shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data()[i] = static_cast<float>((i * 7919 + salt * 104729) % 201 - 100) / 100.0f;
  return t;
}

// Sets the calling thread's team size as CpuBackend does, within OMP_THREAD_LIMIT: beyond the
// limit OpenMP gives a smaller team than oneDNN plans for, and oneDNN's kernels then wait at their
// barriers for threads that never come (scripts/test-aarch64.sh runs with a limit of 1).
inline void setOmpThreads(int threads) {
  omp_set_num_threads(std::min(threads, omp_get_thread_limit()));
}

}  // namespace testutil
