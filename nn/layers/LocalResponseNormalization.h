#pragma once
#include <dl4cpp/nn/conf/layers/LocalResponseNormalization.h>
#include <dl4cpp/nn/layers/RuntimeLayer.h>

namespace dl4cpp::layers {

// Runtime of dl4cpp::LocalResponseNormalization. No parameters. Keeps a view of the last forward
// pass's input (the network's buffer, unchanged until the backward pass that follows) and the
// backend's workspace of the last training forward pass, which the backward pass reads.
class LocalResponseNormalization : public RuntimeLayer {
 public:
  explicit LocalResponseNormalization(const dl4cpp::LocalResponseNormalization& conf)
      : params_{static_cast<int64_t>(conf.n), static_cast<float>(conf.k),
                static_cast<float>(conf.alpha), static_cast<float>(conf.beta)} {}

  Shape outputShape(const Shape& input) const override { return input; }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    ctx.backend().lrnForward(params_, input, output, fwd.training, workspace_);
    input_ = input;
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().lrnBackward(params_, input_, grad, inputGrad, workspace_);
  }

 private:
  LrnParams params_;
  Tensor input_;
  Tensor workspace_;
};

}  // namespace dl4cpp::layers
