#pragma once
// The example-weighted mean of N host buffers, slice by slice: the host half of
// devices::averageSlice, and ParameterAverager::average; and a process's share of a mean over a
// cluster.
#include <cstdint>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

// destinations[*][i] = sum_r (examples[r] / total) * buffers[r][i] for i in [begin, end), r in
// replica order (a fixed summation order); buffers with no examples have no vote, all-zero
// weights leave the destinations unchanged. Destinations may include the sources. Every tensor
// must be in host memory.
void weightedMean(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                  std::vector<Tensor>& destinations, int64_t begin, int64_t end);

// One process's share of a mean over a cluster: destination[i] = sum_r (examples[r] / total) *
// buffers[r][i] for i in [begin, end), where `total` counts the examples of every process; zeros
// when none of these buffers has examples. Summing the shares of all processes gives the mean,
// bit for bit what weightedMean gives for two buffers in one process.
void weightedPartialSum(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                        int64_t total, Tensor& destination, int64_t begin, int64_t end);

}  // namespace dl4cpp::cpu
