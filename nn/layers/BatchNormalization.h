#pragma once
#include <dl4cpp/nn/conf/layers/BatchNormalization.h>
#include <dl4cpp/nn/layers/RuntimeLayer.h>

namespace dl4cpp::layers {

// Runtime of dl4cpp::BatchNormalization.
class BatchNormalization : public RuntimeLayer {
 public:
  explicit BatchNormalization(const dl4cpp::BatchNormalization& conf);

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override;
  void bindState(const std::vector<Tensor>& state) override;
  Shape outputShape(const Shape& input) const override { return input; }

  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override;
  void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) override;
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override;
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override;
  // One backend op gives dx, dgamma and dbeta together.
  void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                Tensor* inputGrad) override;

 private:
  // The per-channel buffers on the context's device (allocated on the first forward pass).
  void ensureBuffers(DeviceContext& ctx);
  // gamma's and beta's gradients, or scratch when they are locked or not wanted.
  Tensor& gammaGradient(bool wanted) { return wanted && !locked_ ? dgamma_ : discardGamma_; }
  Tensor& betaGradient(bool wanted) { return wanted && !locked_ ? dbeta_ : discardBeta_; }

  int64_t channels_;
  float decay_, eps_;
  bool locked_;
  float lockedGamma_, lockedBeta_;
  Activation activation_;
  float alpha_;
  Tensor gamma_, beta_, dgamma_, dbeta_;  // views into the flat buffers, or (locked) constants
  Tensor runningMean_, runningVariance_;  // views into the layer state
  Tensor batchMean_, batchVariance_;      // of the last training forward pass
  Tensor discardGamma_, discardBeta_;
  Tensor input_;  // the last training forward pass's input (a view), for backwardInput
};

}  // namespace dl4cpp::layers
