#include "nn/conf/layers/BatchNormalization.h"

#include <fmt/format.h>

#include <cmath>

#include "nn/backend/ops/NormalizationOps.h"
#include "nn/conf/ConfigurationLimits.h"
#include "nn/core/Error.h"
#include "nn/layers/LayerActivation.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// The runtime object.
class BatchNormalizationRuntime : public layers::RuntimeLayer {
 public:
  explicit BatchNormalizationRuntime(const BatchNormalization& conf);

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
  // Whether the normalisation op applies the activation itself (else activation_ runs after it).
  bool opApplies() const { return batchNormFuses(activation_.kind()); }

  int64_t channels_;
  float decay_, eps_;
  bool locked_;
  float lockedGamma_, lockedBeta_;
  layers::LayerActivation activation_;
  Tensor gamma_, beta_, dgamma_, dbeta_;  // views into the flat buffers, or (locked) constants
  Tensor runningMean_, runningVariance_;  // views into the layer state
  Tensor batchMean_, batchVariance_;      // of the last training forward pass
  Tensor discardGamma_, discardBeta_;
  Tensor input_;   // the last training forward pass's input (a view), for backwardInput
  Tensor output_;  // y given to backwardActivation (a view), read by a fused ReLU's backward pass
};

BatchNormalizationRuntime::BatchNormalizationRuntime(const BatchNormalization& conf)
    : channels_(conf.nOut),
      decay_(static_cast<float>(conf.decay)),
      eps_(static_cast<float>(conf.eps)),
      locked_(conf.lockGammaBeta),
      lockedGamma_(static_cast<float>(conf.gamma)),
      lockedBeta_(static_cast<float>(conf.beta)),
      activation_(*conf.activation, static_cast<float>(conf.leakyReluAlpha)) {}

void BatchNormalizationRuntime::bindParams(const std::vector<Tensor>& params,
                                           const std::vector<Tensor>& grads) {
  if (locked_) return;
  gamma_ = params[0];
  beta_ = params[1];
  dgamma_ = grads[0];
  dbeta_ = grads[1];
}

void BatchNormalizationRuntime::bindState(const std::vector<Tensor>& state) {
  runningMean_ = state[0].view(0, Shape{channels_});
  runningVariance_ = state[0].view(channels_, Shape{channels_});
}

void BatchNormalizationRuntime::ensureBuffers(DeviceContext& ctx) {
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

void BatchNormalizationRuntime::forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                                        const ForwardContext& fwd) {
  ensureBuffers(ctx);
  Backend& backend = ctx.backend();
  const auto normalize = [&](Tensor& y, ActivationKind applied) {
    if (fwd.training) {
      backend.batchNormForwardTraining(input, gamma_, beta_, eps_, applied, y, batchMean_,
                                       batchVariance_);
      backend.movingAverage(runningMean_, batchMean_, decay_);
      backend.movingAverage(runningVariance_, batchVariance_, decay_);
      input_ = input;
    } else {
      backend.batchNormForwardInference(input, gamma_, beta_, runningMean_, runningVariance_, eps_,
                                        applied, y);
    }
  };
  if (opApplies()) {
    normalize(output, activation_.kind());
  } else {
    activation_.forward(ctx, output, fwd.training,
                        [&](Tensor& z) { normalize(z, ActivationKind::IDENTITY); });
  }
}

// A fused activation's derivative is applied by the backward op, which reads y: grad stays dL/dy.
void BatchNormalizationRuntime::backwardActivation(DeviceContext& ctx, const Tensor& output,
                                                   Tensor& grad) {
  if (opApplies()) {
    output_ = output;
  } else {
    activation_.backward(ctx, output, grad, grad);
  }
}

void BatchNormalizationRuntime::backward(DeviceContext& ctx, const Tensor& input,
                                         const Tensor& grad, bool params, Tensor* inputGrad) {
  if (!params && inputGrad == nullptr) return;
  Tensor noInputGradient;
  ctx.backend().batchNormBackward(input, output_, grad, gamma_, beta_, batchMean_, batchVariance_,
                                  eps_, opApplies() ? activation_.kind() : ActivationKind::IDENTITY,
                                  inputGrad != nullptr ? *inputGrad : noInputGradient,
                                  gammaGradient(params), betaGradient(params));
}

void BatchNormalizationRuntime::backwardParams(DeviceContext& ctx, const Tensor& input,
                                               const Tensor& grad) {
  backward(ctx, input, grad, true, nullptr);
}

void BatchNormalizationRuntime::backwardInput(DeviceContext& ctx, const Tensor& grad,
                                              Tensor& inputGrad) {
  if (input_.empty())
    throw BackendError("BatchNormalization: backward without a training forward pass");
  backward(ctx, input_, grad, false, &inputGrad);
}

}  // namespace

InputType BatchNormalization::resolve(int index, const InputType& input,
                                      const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  const int64_t channels = input.kind == InputType::Kind::FeedForward ? input.size : input.channels;
  if (nOut != 0 && nOut != channels)
    throw ConfigError(fmt::format(
        "{}: nOut is {} but the input {} has {} {}", where(index), nOut, input.toString(), channels,
        input.kind == InputType::Kind::FeedForward ? "features" : "channels"));
  nOut = channels;
  if (!(decay >= 0 && decay <= 1))
    throw ConfigError(fmt::format("{}: decay must be in [0, 1], got {}", where(index), decay));
  if (!(eps > 0) || !std::isfinite(eps))
    throw ConfigError(fmt::format("{}: eps must be finite and > 0, got {}", where(index), eps));
  if (!std::isfinite(gamma) || !std::isfinite(beta))
    throw ConfigError(
        fmt::format("{}: gamma and beta must be finite, got {} and {}", where(index), gamma, beta));
  validateCommon(index);
  return input;
}

std::vector<ParamSpec> BatchNormalization::paramSpecs() const {
  if (lockGammaBeta) return {};
  ParamSpec g{"gamma", Shape{nOut}, false, std::nullopt, 0, 0, static_cast<float>(gamma)};
  ParamSpec b{"beta", Shape{nOut}, false, std::nullopt, 0, 0, static_cast<float>(beta)};
  g.regularized = b.regularized = false;
  return {g, b};
}

std::vector<StateSpec> BatchNormalization::stateSpecs() const {
  return {{"runningStats", Shape{2, nOut}, 0.0f, StateCombine::PooledMeanVariance, 1.0f}};
}

std::unique_ptr<layers::RuntimeLayer> BatchNormalization::instantiate() const {
  return std::make_unique<BatchNormalizationRuntime>(*this);
}

void BatchNormalization::writeFields(LayerFieldWriter& out) const {
  out.number("decay", decay);
  out.number("eps", eps);
  out.number("gamma", gamma);
  out.number("beta", beta);
  out.boolean("lockGammaBeta", lockGammaBeta);
  out.integer("nOut", nOut);
}

void BatchNormalization::readFields(const LayerFieldReader& in) {
  decay = in.number("decay");
  eps = in.number("eps");
  gamma = in.number("gamma");
  beta = in.number("beta");
  lockGammaBeta = in.boolean("lockGammaBeta");
  nOut = in.size("nOut", limits::kMaxValuesPerExample);
}

}  // namespace dl4cpp