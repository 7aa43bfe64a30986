#pragma once
// What the built-in vertices' runtimes share: tensors seen as examples of contiguous values.
// Private to nn/conf/graph (not installed).
#include <cstdint>

#include "nn/backend/DeviceContext.h"
#include "nn/core/Error.h"
#include "nn/tensor/DeviceMemory.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::detail {

// Values per example of a tensor whose dimension 0 is the batch.
inline int64_t valuesPerExample(const Tensor& t) {
  return t.dim(0) == 0 ? 0 : t.numel() / t.dim(0);
}

// Vertices loop over host memory (GraphVertex.h): BackendError on another device.
inline void requireHost(const DeviceContext& ctx, const char* vertex) {
  if (!devices::isHostMemory(ctx.device()))
    throw BackendError(std::string(vertex) + " runs on the CPU only; this graph is on " +
                       ctx.device().toString());
}

}  // namespace dl4cpp::detail
