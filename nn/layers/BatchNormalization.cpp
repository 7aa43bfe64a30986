#include <dl4cpp/nn/Error.h>
#include <dl4cpp/nn/layers/BatchNormalization.h>

namespace dl4cpp::layers {

BatchNormalization::BatchNormalization(const dl4cpp::BatchNormalization& conf)
    : channels_(conf.nOut),
      decay_(static_cast<float>(conf.decay)),
      eps_(static_cast<float>(conf.eps)),
      locked_(conf.lockGammaBeta),
      lockedGamma_(static_cast<float>(conf.gamma)),
      lockedBeta_(static_cast<float>(conf.beta)),
      activation_(*conf.activation),
      alpha_(static_cast<float>(conf.leakyReluAlpha)) {}

void BatchNormalization::bindParams(const std::vector<Tensor>& params,
                                    const std::vector<Tensor>& grads) {
  if (locked_) return;
  gamma_ = params[0];
  beta_ = params[1];
  dgamma_ = grads[0];
  dbeta_ = grads[1];
}

void BatchNormalization::bindState(const std::vector<Tensor>& state) {
  runningMean_ = state[0].view(0, Shape{channels_});
  runningVariance_ = state[0].view(channels_, Shape{channels_});
}

void BatchNormalization::ensureBuffers(DeviceContext& ctx) {
  if (!batchMean_.empty()) return;
  const Device device = ctx.device();
  batchMean_ = Tensor(Shape{channels_}, device);
  batchVariance_ = Tensor(Shape{channels_}, device);
  discardGamma_ = Tensor(Shape{channels_}, device);
  discardBeta_ = Tensor(Shape{channels_}, device);
  if (locked_) {
    gamma_ = Tensor(Shape{channels_}, device);
    beta_ = Tensor(Shape{channels_}, device);
    gamma_.fill(lockedGamma_);
    beta_.fill(lockedBeta_);
  }
}

void BatchNormalization::forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                                 const ForwardContext& fwd) {
  ensureBuffers(ctx);
  Backend& backend = ctx.backend();
  if (fwd.training) {
    backend.batchNormForwardTraining(input, gamma_, beta_, eps_, output, batchMean_,
                                     batchVariance_);
    backend.movingAverage(runningMean_, batchMean_, decay_);
    backend.movingAverage(runningVariance_, batchVariance_, decay_);
    input_ = input;
  } else {
    backend.batchNormForwardInference(input, gamma_, beta_, runningMean_, runningVariance_, eps_,
                                      output);
  }
  backend.activationForward(activation_, alpha_, output);
}

void BatchNormalization::backwardActivation(DeviceContext& ctx, const Tensor& output,
                                            Tensor& grad) {
  ctx.backend().activationBackward(activation_, alpha_, output, grad, grad);
}

void BatchNormalization::backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad,
                                  bool params, Tensor* inputGrad) {
  if (!params && inputGrad == nullptr) return;
  Tensor noInputGradient;
  ctx.backend().batchNormBackward(input, grad, gamma_, batchMean_, batchVariance_, eps_,
                                  inputGrad != nullptr ? *inputGrad : noInputGradient,
                                  gammaGradient(params), betaGradient(params));
}

void BatchNormalization::backwardParams(DeviceContext& ctx, const Tensor& input,
                                        const Tensor& grad) {
  backward(ctx, input, grad, true, nullptr);
}

void BatchNormalization::backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) {
  if (input_.empty())
    throw BackendError("BatchNormalization: backward without a training forward pass");
  backward(ctx, input_, grad, false, &inputGrad);
}

}  // namespace dl4cpp::layers
