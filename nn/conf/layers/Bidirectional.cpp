#include "nn/conf/layers/Bidirectional.h"

#include "nn/backend/ops/RecurrentOps.h"
#include "nn/conf/NestedLayerFields.h"
#include "nn/conf/layers/BaseWrapperLayer.h"
#include "nn/conf/layers/SequenceSteps.h"
#include "nn/core/Error.h"
#include "nn/layers/RuntimeLayer.h"
#include "nn/layers/ScratchView.h"

namespace dl4cpp {

namespace {

using Mode = Bidirectional::Mode;

DirectionCombine combineOf(Mode mode) {
  switch (mode) {
    case Mode::ADD:
      return DirectionCombine::ADD;
    case Mode::MUL:
      return DirectionCombine::MUL;
    case Mode::AVERAGE:
      return DirectionCombine::AVERAGE;
    default:
      return DirectionCombine::CONCAT;
  }
}

class BidirectionalRuntime : public layers::RuntimeLayer {
 public:
  explicit BidirectionalRuntime(const Bidirectional& conf)
      : mode_(combineOf(conf.mode)),
        fwd_(conf.forwardLayer()->instantiate()),
        bwd_(conf.backwardLayer()->instantiate()),
        fwdParams_(conf.forwardLayer()->paramSpecs().size()),
        fwdState_(conf.forwardLayer()->stateSpecs().size()) {}

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override {
    const auto k = static_cast<std::ptrdiff_t>(fwdParams_);
    fwd_->bindParams({params.begin(), params.begin() + k}, {grads.begin(), grads.begin() + k});
    bwd_->bindParams({params.begin() + k, params.end()}, {grads.begin() + k, grads.end()});
  }
  void bindState(const std::vector<Tensor>& state) override {
    const auto k = static_cast<std::ptrdiff_t>(fwdState_);
    fwd_->bindState({state.begin(), state.begin() + k});
    bwd_->bindState({state.begin() + k, state.end()});
  }
  Shape outputShape(const Shape& input) const override {
    const Shape one = fwd_->outputShape(input);
    return mode_ == DirectionCombine::CONCAT ? Shape{one[0], 2 * one[1], one[2]} : one;
  }

  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    // The backward direction starts at each sequence's end, so there is no state to carry from
    // one piece of a sequence to the next (DL4J refuses both for Bidirectional too).
    if (fwd.recurrentState != ForwardContext::RecurrentStateMode::NONE)
      throw ConfigError(
          "Bidirectional: truncated BPTT and rnnTimeStep need a recurrent state carried forward "
          "in time, which a layer that also reads each sequence backwards does not have");
    const int64_t n = input.dim(0), t = input.dim(2);
    const Tensor* mask =
        fwd.featuresMask != nullptr && !fwd.featuresMask->empty() ? fwd.featuresMask : nullptr;
    if (mask != nullptr && mask->shape() != Shape{n, t})
      throw ShapeError("Bidirectional: the features mask " + mask->shape().toString() +
                       " does not match sequences " + input.shape().toString());
    input_ = input;
    const Shape one = fwd_->outputShape(input.shape());
    yf_ = layers::scratchView(yfStore_, one, input.device());
    yb_ = layers::scratchView(ybStore_, one, input.device());
    ybr_ = layers::scratchView(ybrStore_, one, input.device());
    xr_ = layers::scratchView(xrStore_, input.shape(), input.device());
    fwd_->forward(ctx, input, yf_, fwd);

    mask_ = mask != nullptr ? *mask : Tensor();
    maskR_ = detail::reverseMask(mask_);
    ctx.backend().reverseSteps(input, mask_, xr_);
    ForwardContext reversed = fwd;
    reversed.featuresMask = mask != nullptr ? &maskR_ : nullptr;
    bwd_->forward(ctx, xr_, ybr_, reversed);
    ctx.backend().reverseSteps(ybr_, mask_, yb_);
    ctx.backend().combineDirections(mode_, yf_, yb_, output);
  }

  void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                Tensor* inputGrad) override {
    Tensor dyf = layers::scratchView(dyfStore_, yf_.shape(), grad.device());
    Tensor dyb = layers::scratchView(dybStore_, yf_.shape(), grad.device());
    Tensor dybr = layers::scratchView(dybrStore_, yf_.shape(), grad.device());
    ctx.backend().combineDirectionsBackward(mode_, yf_, yb_, grad, dyf, dyb);
    ctx.backend().reverseSteps(dyb, mask_, dybr);
    fwd_->backwardActivation(ctx, yf_, dyf);
    bwd_->backwardActivation(ctx, ybr_, dybr);
    if (inputGrad == nullptr) {
      fwd_->backward(ctx, input, dyf, params, nullptr);
      bwd_->backward(ctx, xr_, dybr, params, nullptr);
      return;
    }
    // dx = the forward copy's dx + the backward copy's, reversed back.
    Tensor dxf = layers::scratchView(dxfStore_, input.shape(), grad.device());
    Tensor dxr = layers::scratchView(dxrStore_, input.shape(), grad.device());
    Tensor dxb = layers::scratchView(dxbStore_, input.shape(), grad.device());
    fwd_->backward(ctx, input, dyf, params, &dxf);
    bwd_->backward(ctx, xr_, dybr, params, &dxr);
    ctx.backend().reverseSteps(dxr, mask_, dxb);
    ctx.backend().combineDirections(DirectionCombine::ADD, dxf, dxb, *inputGrad);
  }
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override {
    backward(ctx, input, grad, true, nullptr);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    backward(ctx, input_, grad, false, &inputGrad);
  }

 private:
  DirectionCombine mode_;
  std::unique_ptr<layers::RuntimeLayer> fwd_, bwd_;
  size_t fwdParams_, fwdState_;
  Tensor input_;               // the last forward pass's input (the network keeps it)
  Tensor yf_, yb_, ybr_, xr_;  // (N, H, T) outputs; xr_ the reversed input
  Tensor yfStore_, ybStore_, ybrStore_, xrStore_;
  Tensor dyfStore_, dybStore_, dybrStore_, dxfStore_, dxrStore_, dxbStore_;
  Tensor mask_;   // the features mask of the last forward pass (N, T), or empty
  Tensor maskR_;  // the reversed sequences' mask, or empty
};

}  // namespace

Bidirectional::Bidirectional(const Bidirectional& other)
    : Layer(other),
      mode(other.mode),
      fwd_(other.fwd_ ? other.fwd_->clone() : nullptr),
      bwd_(other.bwd_ ? other.bwd_->clone() : nullptr) {}

Bidirectional& Bidirectional::operator=(const Bidirectional& other) {
  if (this == &other) return *this;
  Layer::operator=(other);
  mode = other.mode;
  fwd_ = other.fwd_ ? other.fwd_->clone() : nullptr;
  bwd_ = other.bwd_ ? other.bwd_->clone() : nullptr;
  return *this;
}

Bidirectional Bidirectional::Builder::build() const {
  if (!layer_) throw ConfigError("Bidirectional::Builder: no rnnLayer given");
  return Bidirectional(mode_, *layer_);
}

InputType Bidirectional::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  if (!fwd_ || !bwd_) throw ConfigError(where(index) + ": no recurrent layer to wrap");
  if (input.kind != InputType::Kind::Recurrent)
    throw ConfigError(where(index) + " needs sequences but receives " + input.toString() +
                      "; set the input type with InputType::recurrent(size)");
  if (!fwd_->consumesSequences() || fwd_->typeName() != bwd_->typeName())
    throw ConfigError(where(index) + " wraps one recurrent layer (LSTM, SimpleRnn, ...), not " +
                      fwd_->typeName());
  const InputType out = fwd_->resolve(index, input, defaults);
  checkWrappable(where(index), fwd_.get(), out);
  const InputType outB = bwd_->resolve(index, input, defaults);
  if (outB.size != out.size)
    throw ConfigError(where(index) + ": the backward layer delivers " + outB.toString() +
                      " but the forward layer " + out.toString());
  adoptCommonFields(*this, *fwd_);
  return InputType::recurrent(mode == Mode::CONCAT ? 2 * out.size : out.size, out.length);
}

std::unique_ptr<layers::RuntimeLayer> Bidirectional::instantiate() const {
  return std::make_unique<BidirectionalRuntime>(*this);
}

std::vector<ParamSpec> Bidirectional::paramSpecs() const {
  std::vector<ParamSpec> specs;
  if (!fwd_ || !bwd_) return specs;
  for (ParamSpec s : fwd_->paramSpecs()) {
    s.name = "f" + s.name;
    specs.push_back(std::move(s));
  }
  for (ParamSpec s : bwd_->paramSpecs()) {
    s.name = "b" + s.name;
    specs.push_back(std::move(s));
  }
  return specs;
}

std::vector<StateSpec> Bidirectional::stateSpecs() const {
  std::vector<StateSpec> specs;
  if (!fwd_ || !bwd_) return specs;
  for (StateSpec s : fwd_->stateSpecs()) {
    s.name = "f" + s.name;
    specs.push_back(std::move(s));
  }
  for (StateSpec s : bwd_->stateSpecs()) {
    s.name = "b" + s.name;
    specs.push_back(std::move(s));
  }
  return specs;
}

void Bidirectional::writeFields(LayerFieldWriter& out) const {
  if (!fwd_ || !bwd_) throw ConfigError("Bidirectional: no recurrent layer to write");
  out.enumValue("mode", kBidirectionalModeNames, mode);
  writeNestedLayer(out, "fwd", *fwd_);
  writeNestedLayer(out, "bwd", *bwd_);
}

void Bidirectional::readFields(const LayerFieldReader& in) {
  mode = in.enumValue("mode", kBidirectionalModeNames);
  fwd_ = readNestedLayer(in, "fwd");
  bwd_ = readNestedLayer(in, "bwd");
}

void Bidirectional::clearInferredSizes() {
  if (fwd_) fwd_->clearInferredSizes();
  if (bwd_) bwd_->clearInferredSizes();
}

}  // namespace dl4cpp
