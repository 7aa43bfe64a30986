#pragma once
// What the built-in vertices' runtimes share: tensors seen as examples of contiguous values.
// Private to nn/conf/graph (not installed).
#include <algorithm>
#include <cstdint>
#include <string>

#include "nn/backend/DeviceContext.h"
#include "nn/backend/Devices.h"
#include "nn/core/Error.h"
#include "nn/layers/VertexRuntime.h"
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

// The runtime of the vertices that only give the same values per example another shape
// (ReshapeVertex, PreprocessorVertex): a copy each way.
class ReshapeRuntime : public layers::VertexRuntime {
 public:
  explicit ReshapeRuntime(const char* vertex) : vertex_(vertex) {}
  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    requireHost(ctx, vertex_);
    std::copy_n(inputs[0].data(), output.numel(), output.data());
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> /*inputs*/, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    requireHost(ctx, vertex_);
    if (inputGrads[0].empty()) return;
    std::copy_n(outputGrad.data(), outputGrad.numel(), inputGrads[0].data());
  }

 private:
  const char* vertex_;
};

}  // namespace dl4cpp::detail
