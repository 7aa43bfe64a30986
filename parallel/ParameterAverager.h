#pragma once
// ParameterAverager: the example-weighted mean of N equally long flat buffers (parameters,
// updater state or gradients of the N replicas), computed slice by slice so that every worker
// averages its own part in parallel.
//
//   result[i] = sum_r (examples[r] / total) * buffers[r][i],   r = 0, 1, ..., N-1 in this order
//
// A replica that processed no examples has no vote. The summation order is fixed, so the result
// is bit-reproducible; with one contributing replica it is that replica's values exactly.
#include <cstdint>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace dl4cpp::parallel {

class ParameterAverager {
 public:
  // Elements [begin, end) of slice `part` of `parts` over `length` elements (parts differ by at
  // most one 64-byte-aligned block, so slices never share a cache line).
  static std::pair<int64_t, int64_t> slice(int64_t length, int part, int parts);

  // Writes the weighted mean of buffers[*][begin, end) into every tensor of `destinations`
  // (which may include the sources: each element is read from all sources before it is written).
  // `examples[r]` weighs buffers[r]; all-zero weights leave the destinations unchanged. Every
  // tensor must be in host memory (devices::averageSlice in nn/backend/Devices.h averages
  // buffers on any devices, with the same result).
  static void average(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                      std::vector<Tensor>& destinations, int64_t begin, int64_t end);
};

}  // namespace dl4cpp::parallel
