#include "nn/conf/layers/Bidirectional.h"

#include <algorithm>

#include "nn/backend/ops/RecurrentOps.h"
#include "nn/conf/NestedLayerFields.h"
#include "nn/conf/layers/BaseWrapperLayer.h"
#include "nn/conf/layers/SequenceSteps.h"
#include "nn/core/Error.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

using Mode = Bidirectional::Mode;

Tensor viewOf(Tensor& storage, const Shape& shape, Device device) {
  if (storage.numel() < shape.numel()) storage = Tensor(Shape{shape.numel()}, device);
  return storage.view(0, shape);
}

// y = yf (mode) yb at every step; yf, yb (N, H, T), y (N, 2H, T) for CONCAT, else (N, H, T).
void combine(Mode mode, const Tensor& yf, const Tensor& yb, Tensor& y) {
  detail::requireHost(y, "Bidirectional");
  const int64_t n = yf.dim(0), block = yf.dim(1) * yf.dim(2);
  const float *f = yf.data(), *b = yb.data();
  float* out = y.data();
  for (int64_t e = 0; e < n; ++e) {
    const float* fe = f + e * block;
    const float* be = b + e * block;
    if (mode == Mode::CONCAT) {
      float* oe = out + e * 2 * block;
      std::copy(fe, fe + block, oe);
      std::copy(be, be + block, oe + block);
      continue;
    }
    float* oe = out + e * block;
    for (int64_t i = 0; i < block; ++i)
      oe[i] = mode == Mode::ADD   ? fe[i] + be[i]
              : mode == Mode::MUL ? fe[i] * be[i]
                                  : 0.5f * (fe[i] + be[i]);
  }
}

// dyf, dyb = the gradients reaching yf and yb from dy, for combine's y.
void split(Mode mode, const Tensor& yf, const Tensor& yb, const Tensor& dy, Tensor& dyf,
           Tensor& dyb) {
  detail::requireHost(dy, "Bidirectional");
  const int64_t n = yf.dim(0), block = yf.dim(1) * yf.dim(2);
  const float *f = yf.data(), *b = yb.data(), *g = dy.data();
  float *df = dyf.data(), *db = dyb.data();
  for (int64_t e = 0; e < n; ++e) {
    const int64_t o = e * block;
    if (mode == Mode::CONCAT) {
      const float* ge = g + e * 2 * block;
      std::copy(ge, ge + block, df + o);
      std::copy(ge + block, ge + 2 * block, db + o);
      continue;
    }
    const float* ge = g + o;
    for (int64_t i = 0; i < block; ++i) {
      switch (mode) {
        case Mode::ADD:
          df[o + i] = db[o + i] = ge[i];
          break;
        case Mode::MUL:
          df[o + i] = ge[i] * b[o + i];
          db[o + i] = ge[i] * f[o + i];
          break;
        default:
          df[o + i] = db[o + i] = 0.5f * ge[i];
      }
    }
  }
}

class BidirectionalRuntime : public layers::RuntimeLayer {
 public:
  BidirectionalRuntime(const Bidirectional& conf)
      : mode_(conf.mode),
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
    return mode_ == Mode::CONCAT ? Shape{one[0], 2 * one[1], one[2]} : one;
  }

  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    const int64_t n = input.dim(0), t = input.dim(2);
    const Tensor* mask =
        fwd.featuresMask != nullptr && !fwd.featuresMask->empty() ? fwd.featuresMask : nullptr;
    if (mask != nullptr && mask->shape() != Shape{n, t})
      throw ShapeError("Bidirectional: the features mask " + mask->shape().toString() +
                       " does not match sequences " + input.shape().toString());
    input_ = input;
    const Shape one = fwd_->outputShape(input.shape());
    yf_ = viewOf(yfStore_, one, input.device());
    yb_ = viewOf(ybStore_, one, input.device());
    ybr_ = viewOf(ybrStore_, one, input.device());
    xr_ = viewOf(xrStore_, input.shape(), input.device());
    fwd_->forward(ctx, input, yf_, fwd);

    spans_ = detail::stepSpans(mask, n, t);
    maskR_ = mask != nullptr ? detail::reverseMask(*mask, spans_) : Tensor();
    detail::reverseSteps(input, spans_, xr_);
    ForwardContext reversed = fwd;
    reversed.featuresMask = mask != nullptr ? &maskR_ : nullptr;
    bwd_->forward(ctx, xr_, ybr_, reversed);
    detail::reverseSteps(ybr_, spans_, yb_);
    combine(mode_, yf_, yb_, output);
  }

  void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                Tensor* inputGrad) override {
    Tensor dyf = viewOf(dyfStore_, yf_.shape(), grad.device());
    Tensor dyb = viewOf(dybStore_, yf_.shape(), grad.device());
    Tensor dybr = viewOf(dybrStore_, yf_.shape(), grad.device());
    split(mode_, yf_, yb_, grad, dyf, dyb);
    detail::reverseSteps(dyb, spans_, dybr);
    fwd_->backwardActivation(ctx, yf_, dyf);
    bwd_->backwardActivation(ctx, ybr_, dybr);
    fwd_->backward(ctx, input, dyf, params, inputGrad);
    if (inputGrad == nullptr) {
      bwd_->backward(ctx, xr_, dybr, params, nullptr);
      return;
    }
    Tensor dxr = viewOf(dxrStore_, input.shape(), grad.device());
    Tensor dxb = viewOf(dxbStore_, input.shape(), grad.device());
    bwd_->backward(ctx, xr_, dybr, params, &dxr);
    detail::reverseSteps(dxr, spans_, dxb);
    float* dx = inputGrad->data();
    const float* b = dxb.data();
    for (int64_t i = 0; i < inputGrad->numel(); ++i) dx[i] += b[i];
  }
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override {
    backward(ctx, input, grad, true, nullptr);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    backward(ctx, input_, grad, false, &inputGrad);
  }

 private:
  Mode mode_;
  std::unique_ptr<layers::RuntimeLayer> fwd_, bwd_;
  size_t fwdParams_, fwdState_;
  Tensor input_;               // the last forward pass's input (the network keeps it)
  Tensor yf_, yb_, ybr_, xr_;  // (N, H, T) outputs; xr_ the reversed input
  Tensor yfStore_, ybStore_, ybrStore_, xrStore_;
  Tensor dyfStore_, dybStore_, dybrStore_, dxrStore_, dxbStore_;
  detail::StepSpans spans_;  // each sequence's real steps, where it is reversed
  Tensor maskR_;             // the reversed sequences' mask, or empty
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
