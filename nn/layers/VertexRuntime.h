#pragma once
// The runtime contract of a graph vertex that is not a layer (dl4cpp::GraphVertex: merge,
// element-wise, subset, scale, ...), as layers::RuntimeLayer is a layer's. ComputationGraph::init()
// creates one from each vertex's configuration (GraphVertex::instantiate()). A vertex has no
// parameters and no state.
//
// One training step calls, with inputs x_0 .. x_k-1 and output y:
//   forward(ctx, x, y, training)          writes y (overwrites)
//   backward(ctx, x, y, g, dx)            writes (overwrites) dx[i] = dL/dx_i for every i whose
//                                         dx[i] is not empty (an input no gradient is wanted for)
// with g = dL/dy. The graph keeps x and y unchanged between the two; where a vertex's output
// feeds several vertices, the graph sums their gradients into g before calling backward.
// Tensors have the batch dimension first: (N, size) or (N, C, H, W).
#include <optional>
#include <span>

#include "nn/backend/DeviceContext.h"
#include "nn/backend/ops/TransformOps.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::layers {

class VertexRuntime {
 public:
  virtual ~VertexRuntime() = default;
  virtual void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
                       bool training) = 0;
  virtual void backward(DeviceContext& ctx, std::span<const Tensor> inputs, const Tensor& output,
                        const Tensor& outputGrad, std::span<Tensor> inputGrads) = 0;
  // The element-wise join this vertex computes with combineForward and nothing else
  // (ElementWiseVertex), which the graph may then run fused with the activation after it; none
  // for every other vertex.
  virtual std::optional<CombineOp> combineOp() const { return std::nullopt; }
};

}  // namespace dl4cpp::layers
