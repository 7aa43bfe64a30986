#pragma once
// Truncated BPTT's segments (MultiLayerNetwork and ComputationGraph): the steps [start, start +
// len) of a minibatch of sequences. Private to the library (not installed).
#include <cstdint>

#include "iterators/DataSet.h"
#include "iterators/MultiDataSet.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::detail {

// Steps [start, start + len) of a sequence tensor (N, C, T) or mask (N, T), as a new host tensor.
Tensor sliceSteps(const Tensor& x, int64_t start, int64_t len);

// The segment of `batch`: its sequences, labels and masks cut to the steps [start, start + len);
// tensors that are not sequences (rows or images an input feeds every segment) stay whole.
DataSet segmentOf(const DataSet& batch, int64_t start, int64_t len);
MultiDataSet segmentOf(const MultiDataSet& batch, int64_t start, int64_t len);

}  // namespace dl4cpp::detail
