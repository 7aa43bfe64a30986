#include "nn/conf/layers/BaseRecurrentLayer.h"

#include "nn/backend/ops/RecurrentOps.h"
#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/layers/RecurrentRuntime.h"
#include "nn/core/Error.h"

namespace dl4cpp {

InputType BaseRecurrentLayer::resolve(int index, const InputType& input,
                                      const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  if (input.kind != InputType::Kind::Recurrent)
    throw ConfigError(where(index) + " needs sequences but receives " + input.toString() +
                      "; set the input type with InputType::recurrent(size)");
  if (nIn == 0) nIn = input.size;
  if (nIn != input.size)
    throw ConfigError(where(index) + ": nIn is " + std::to_string(nIn) +
                      " but the previous layer delivers " + input.toString());
  if (nOut <= 0 || nOut > limits::kMaxExtent)
    throw ConfigError(where(index) + ": nOut must be between 1 and " +
                      std::to_string(limits::kMaxExtent) + ", got " + std::to_string(nOut));
  if (!limits::boundedProduct({nIn + nOut, gateBlocks() * nOut}, limits::kMaxParameters))
    throw ConfigError(where(index) + ": (nIn + nOut) x " + std::to_string(gateBlocks()) +
                      " nOut weights exceed the limit of " +
                      std::to_string(limits::kMaxParameters));
  validateCommon(index);
  if (!recurrentActivationSupported(*activation))
    throw ConfigError(where(index) + ": activation " + toString(*activation) +
                      " is not available in a recurrent layer (its derivative must follow from "
                      "its output): use TANH, SIGMOID, HARDSIGMOID, HARDTANH, RELU or IDENTITY");
  return InputType::recurrent(nOut, input.length);
}

void BaseRecurrentLayer::writeFields(LayerFieldWriter& out) const {
  out.integer("nIn", nIn);
  out.integer("nOut", nOut);
}

void BaseRecurrentLayer::readFields(const LayerFieldReader& in) {
  nIn = in.size("nIn", limits::kMaxExtent);
  nOut = in.size("nOut", limits::kMaxExtent);
}

}  // namespace dl4cpp

namespace dl4cpp::detail {

RecurrentRuntime::RecurrentRuntime(const BaseRecurrentLayer& conf, int gates)
    : nIn_(conf.nIn), nOut_(conf.nOut), gates_(gates) {}

void RecurrentRuntime::bindParams(const std::vector<Tensor>& params,
                                  const std::vector<Tensor>& grads) {
  w_ = params[0];
  rw_ = params[1];
  b_ = params[2];
  dw_ = grads[0];
  drw_ = grads[1];
  db_ = grads[2];
}

void RecurrentRuntime::forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                               const ForwardContext& fwd) {
  const int64_t n = input.dim(0), t = input.dim(2);
  mask_ = fwd.featuresMask != nullptr ? *fwd.featuresMask : Tensor();
  if (!mask_.empty() && mask_.shape() != Shape{n, t})
    throw ShapeError("recurrent layer: the features mask " + mask_.shape().toString() +
                     " does not match sequences " + input.shape().toString() + " (expected [" +
                     std::to_string(n) + ", " + std::to_string(t) + "])");
  const int64_t floats = recurrentWorkspaceFloats(n, t, nIn_, nOut_, gates_);
  if (ws_.numel() < floats) ws_ = Tensor(Shape{floats}, input.device());
  backwardSteps_ = fwd.tbpttBackwardLength;
  switch (fwd.recurrentState) {
    case ForwardContext::RecurrentStateMode::NONE:
      carried_ = nullptr;
      break;
    case ForwardContext::RecurrentStateMode::START:
      kept_ = RecurrentState();
      carried_ = &kept_;
      break;
    case ForwardContext::RecurrentStateMode::CONTINUE:
      if (!kept_.h.empty() && kept_.h.dim(0) != n)
        throw ShapeError("recurrent layer: the state kept from the previous pass is for " +
                         std::to_string(kept_.h.dim(0)) + " sequences, this input has " +
                         std::to_string(n) +
                         " (clear it first: rnnClearPreviousState, or a new truncated-BPTT batch)");
      carried_ = &kept_;
      break;
  }
  cellForward(ctx, input, output);
}

void RecurrentRuntime::backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad,
                                bool params, Tensor* inputGrad) {
  (void)input;   // the workspace holds what the backward pass reads
  (void)params;  // the op writes dW, dRW and db with dx: they come out of one pass over time
  cellBackward(ctx, grad, inputGrad);
}

void RecurrentRuntime::backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) {
  backward(ctx, input, grad, true, nullptr);
}

void RecurrentRuntime::backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) {
  backward(ctx, Tensor(), grad, false, &inputGrad);
}

}  // namespace dl4cpp::detail
