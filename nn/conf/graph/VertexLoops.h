#pragma once
// What the built-in vertices' runtimes share: tensors seen as examples of contiguous values. The
// runtimes run on the backend's ops (ops/TransformOps.h), on any device.
// Private to nn/conf/graph (not installed).
#include <cstdint>

#include "nn/backend/Backend.h"
#include "nn/backend/DeviceContext.h"
#include "nn/layers/VertexRuntime.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::detail {

// Values per example of a tensor whose dimension 0 is the batch.
inline int64_t valuesPerExample(const Tensor& t) {
  return t.dim(0) == 0 ? 0 : t.numel() / t.dim(0);
}

// The runtime of the vertices that only give the same values per example another shape
// (ReshapeVertex, PreprocessorVertex): a copy each way.
class ReshapeRuntime : public layers::VertexRuntime {
 public:
  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    ctx.backend().copy(inputs[0], output);
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> /*inputs*/, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    if (!inputGrads[0].empty()) ctx.backend().copy(outputGrad, inputGrads[0]);
  }
};

}  // namespace dl4cpp::detail
