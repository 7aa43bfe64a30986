#include "nn/conf/layers/DenseLayer.h"

#include "nn/conf/layers/DenseRuntime.h"

namespace dl4cpp {

namespace detail {

DenseRuntime::DenseRuntime(const FeedForwardLayer& conf)
    : nIn_(conf.nIn),
      nOut_(conf.nOut),
      hasBias_(conf.hasBias),
      activation_(*conf.activation, static_cast<float>(conf.leakyReluAlpha)) {}

void DenseRuntime::bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) {
  w_ = params[0];
  dw_ = grads[0];
  if (hasBias_) {
    b_ = params[1];
    db_ = grads[1];
  }
}

void DenseRuntime::forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                           const ForwardContext& fwd) {
  activation_.forward(ctx, output, fwd.training,
                      [&](Tensor& z) { ctx.backend().innerProductForward(input, w_, b_, z); });
}

void DenseRuntime::backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) {
  activation_.backward(ctx, output, grad, grad);
}

void DenseRuntime::backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) {
  ctx.backend().innerProductBackwardWeights(input, grad, dw_, db_);
}

void DenseRuntime::backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) {
  ctx.backend().innerProductBackwardData(grad, w_, inputGrad);
}

}  // namespace detail

std::unique_ptr<layers::RuntimeLayer> DenseLayer::instantiate() const {
  return std::make_unique<detail::DenseRuntime>(*this);
}

}  // namespace dl4cpp
