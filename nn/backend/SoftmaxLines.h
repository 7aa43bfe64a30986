#pragma once
// How softmax walks a tensor, for every backend: along dimension 1 of (N, C, rest...), as N * rest
// lines of C values `stride` = rest apart (1 for the (N, C) rows of a dense or output layer).
#include <algorithm>
#include <cstdint>

#include "nn/backend/HostDevice.h"
#include "nn/core/Error.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

struct SoftmaxLines {
  int64_t count, channels, stride;

  // The lines of `y`; BackendError for rank < 2 (no dimension 1 to run along).
  explicit SoftmaxLines(const Tensor& y) {
    if (y.rank() < 2)
      throw BackendError("softmax runs over dimension 1 and needs rank >= 2, got shape " +
                         y.shape().toString());
    channels = y.dim(1);
    stride = y.numel() / std::max<int64_t>(y.dim(0) * channels, 1);
    count = y.dim(0) * stride;
  }
  // The element line `line` starts at.
  DL4CPP_HOST_DEVICE int64_t start(int64_t line) const {
    return line / stride * channels * stride + line % stride;
  }
};

}  // namespace dl4cpp
