#pragma once
// The example-weighted mean of N host buffers, slice by slice: the host half of
// devices::averageSlice, and ParameterAverager::average.
#include <dl4cpp/nn/tensor/Tensor.h>

#include <cstdint>
#include <vector>

namespace dl4cpp::cpu {

// destinations[*][i] = sum_r (examples[r] / total) * buffers[r][i] for i in [begin, end), r in
// replica order (a fixed summation order); buffers with no examples have no vote, all-zero
// weights leave the destinations unchanged. Destinations may include the sources. Every tensor
// must be in host memory.
void weightedMean(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                  std::vector<Tensor>& destinations, int64_t begin, int64_t end);

}  // namespace dl4cpp::cpu
