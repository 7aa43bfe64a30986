#pragma once
// The runtime object LSTM and SimpleRnn share: parameter views W, RW, b and their gradients, the
// workspace the forward pass keeps for the backward pass, the mask of the batch, and the state
// carried from one pass to the next (truncated BPTT, rnnTimeStep). The cell
// itself is the recurrent op each type runs (RecurrentOps.h). Private to the library (not
// installed); defined in BaseRecurrentLayer.cpp.
#include "nn/backend/ops/RecurrentOps.h"
#include "nn/conf/layers/BaseRecurrentLayer.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp::detail {

class RecurrentRuntime : public layers::RuntimeLayer {
 public:
  RecurrentRuntime(const BaseRecurrentLayer& conf, int gates);

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override;
  Shape outputShape(const Shape& input) const override { return {input[0], nOut_, input[2]}; }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override;
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override;
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override;
  void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                Tensor* inputGrad) override;

 protected:
  // The type's op, forward and backward (dx may be null), on the bound views and ws_, mask_,
  // carried_ and backwardSteps_.
  virtual void cellForward(DeviceContext& ctx, const Tensor& x, Tensor& y) = 0;
  virtual void cellBackward(DeviceContext& ctx, const Tensor& dy, Tensor* dx) = 0;

  int64_t nIn_, nOut_;
  int gates_;
  Tensor w_, rw_, b_;     // W: (nIn, gates nOut), RW: (nOut, gates nOut), b: (gates nOut)
  Tensor dw_, drw_, db_;  // the same shapes, views into the flat gradients
  Tensor ws_;             // the forward's workspace (recurrentWorkspaceFloats), grown as needed
  Tensor mask_;           // the features mask of the last forward pass, or empty
  // The state carried between passes (ForwardContext::recurrentState), and what the cell's op
  // takes: &kept_ in a pass that carries state, null in one that starts every sequence at zero.
  RecurrentState kept_;
  RecurrentState* carried_ = nullptr;
  int64_t backwardSteps_ = 0;  // the last forward's tbpttBackwardLength (0: every step)
};

}  // namespace dl4cpp::detail
