#include <dl4cpp/nn/layers/ConvolutionLayer.h>

namespace dl4cpp::layers {

ConvolutionLayer::ConvolutionLayer(const dl4cpp::ConvolutionLayer& conf)
    : nIn_(conf.nIn),
      nOut_(conf.nOut),
      hasBias_(conf.hasBias),
      geometry_(conf.geometry),
      activation_(*conf.activation, static_cast<float>(conf.leakyReluAlpha)) {}

void ConvolutionLayer::bindParams(const std::vector<Tensor>& params,
                                  const std::vector<Tensor>& grads) {
  const size_t wi = hasBias_ ? 1 : 0;
  if (hasBias_) {
    b_ = params[0];
    db_ = grads[0];
  }
  w_ = params[wi];
  dw_ = grads[wi];
}

Shape ConvolutionLayer::outputShape(const Shape& input) const {
  return {input[0], nOut_, geometry_.outH(input[2]), geometry_.outW(input[3])};
}

LayerDescription ConvolutionLayer::describe() const {
  LayerDescription d;
  d.kind = LayerDescription::Kind::CONVOLUTION;
  d.geometry = geometry_;
  d.activation = activation_.kind();
  d.alpha = activation_.alpha();
  d.w = w_;
  d.b = b_;
  d.dw = dw_;
  d.db = db_;
  return d;
}

void ConvolutionLayer::forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                               const ForwardContext& fwd) {
  activation_.forward(ctx, output, fwd.training, [&](Tensor& z) {
    ctx.backend().convolutionForward(input, w_, b_, z, geometry_);
  });
}

void ConvolutionLayer::backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) {
  activation_.backward(ctx, output, grad, grad);
}

void ConvolutionLayer::backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) {
  ctx.backend().convolutionBackwardWeights(input, grad, dw_, db_, geometry_);
}

void ConvolutionLayer::backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) {
  ctx.backend().convolutionBackwardData(grad, w_, inputGrad, geometry_);
}

}  // namespace dl4cpp::layers
