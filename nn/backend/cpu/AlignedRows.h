#pragma once
// Sizes in whole cache lines, and copies of image rows that start on a cache line and are a whole
// number of lines long, for kernels whose vector loads run along rows at every offset and must not
// straddle two lines (DirectConvolution.cpp's weight gradient at avx2).
#include <algorithm>
#include <cstdint>

#include "nn/backend/cpu/ParallelFor.h"

namespace dl4cpp::cpu {

inline constexpr int64_t kCacheLineFloats = 16;

// `floats` rounded up to whole cache lines (a row's padded width, a thread's buffer).
inline int64_t wholeCacheLines(int64_t floats) {
  return (floats + kCacheLineFloats - 1) / kCacheLineFloats * kCacheLineFloats;
}

// Floats of scratch copyToAlignedRows needs: the rows, and the slack to align their start.
inline int64_t alignedRowsFloats(int64_t rows, int64_t width) {
  return rows * wholeCacheLines(width) + kCacheLineFloats - 1;
}

// Copies `rows` rows of `width` floats from `in` to rows wholeCacheLines(width) floats apart at
// the first cache line of `scratch` (alignedRowsFloats(rows, width) floats), over the OpenMP
// threads, and returns where they start. The padding is left as it was: readers stay within rows.
inline const float* copyToAlignedRows(const float* in, int64_t rows, int64_t width,
                                      float* scratch) {
  const auto address = reinterpret_cast<uintptr_t>(scratch);
  const uintptr_t line = kCacheLineFloats * sizeof(float);
  float* out = scratch + static_cast<int64_t>((line - address % line) % line / sizeof(float));
  const int64_t stride = wholeCacheLines(width);
  parallelRanges(rows, [in, out, width, stride](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) std::copy_n(in + r * width, width, out + r * stride);
  });
  return out;
}

}  // namespace dl4cpp::cpu
