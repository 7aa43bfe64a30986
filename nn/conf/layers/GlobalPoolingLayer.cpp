#include "nn/conf/layers/GlobalPoolingLayer.h"

#include "nn/core/Error.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// The runtime object. No parameters. Keeps views of the last forward pass's input and output (the
// network's buffers, unchanged until the backward pass that follows): MAX and PNORM read them
// backward. Sequences (N, C, T) without a mask run the image op on (N, C, 1, T); with a mask the
// masked pooling op pools over the real steps only.
class GlobalPoolingRuntime : public layers::RuntimeLayer {
 public:
  explicit GlobalPoolingRuntime(const GlobalPoolingLayer& conf)
      : kind_(conf.poolingType),
        pnorm_(static_cast<int>(conf.pnorm)),
        collapse_(conf.collapseDimensions) {}

  Shape outputShape(const Shape& input) const override {
    if (collapse_) return {input[0], input[1]};
    if (input.rank() == 3) return {input[0], input[1], 1};
    return {input[0], input[1], 1, 1};
  }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    input_ =
        input.rank() == 3 ? input.reshape({input.dim(0), input.dim(1), 1, input.dim(2)}) : input;
    output_ = output;
    mask_ = input.rank() == 3 && fwd.featuresMask != nullptr ? *fwd.featuresMask : Tensor();
    if (mask_.empty()) {
      ctx.backend().globalPoolingForward(kind_, pnorm_, input_, output);
      return;
    }
    const int64_t n = input.dim(0), t = input.dim(2);
    if (mask_.shape() != Shape{n, t})
      throw ShapeError("GlobalPoolingLayer: the features mask " + mask_.shape().toString() +
                       " does not match sequences " + input.shape().toString());
    ctx.backend().maskedPoolingForward(kind_, pnorm_, input, mask_, output);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    if (mask_.empty()) {
      ctx.backend().globalPoolingBackward(kind_, pnorm_, input_, output_, grad, inputGrad);
      return;
    }
    const Shape sequences{input_.dim(0), input_.dim(1), input_.dim(3)};
    Tensor dx = inputGrad.reshape(sequences);
    ctx.backend().maskedPoolingBackward(kind_, pnorm_, input_.reshape(sequences), mask_, output_,
                                        grad, dx);
  }

 private:
  PoolingKind kind_;
  int pnorm_;
  bool collapse_;
  Tensor input_, output_;  // input_ as (N, C, H, W): sequences as (N, C, 1, T)
  Tensor mask_;            // the features mask of the last forward pass over sequences, or empty
};

}  // namespace

namespace {
// |x|^pnorm of a float overflows for any |x| > 1 long before this.
constexpr int64_t kMaxPNorm = 1024;
}  // namespace

InputType GlobalPoolingLayer::resolve(int index, const InputType& input,
                                      const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  if (input.kind == InputType::Kind::FeedForward)
    throw ConfigError(where(index) + ": needs images or sequences but receives " +
                      input.toString());
  if (pnorm < 1 || pnorm > kMaxPNorm)
    throw ConfigError(where(index) + ": pnorm must be between 1 and " + std::to_string(kMaxPNorm) +
                      ", got " + std::to_string(pnorm));
  validateCommon(index);
  if (input.kind == InputType::Kind::Recurrent)
    return collapseDimensions ? InputType::feedForward(input.size)
                              : InputType::recurrent(input.size, 1);
  if (collapseDimensions) return InputType::feedForward(input.channels);
  return InputType::convolutional(1, 1, input.channels);
}

std::unique_ptr<layers::RuntimeLayer> GlobalPoolingLayer::instantiate() const {
  return std::make_unique<GlobalPoolingRuntime>(*this);
}

void GlobalPoolingLayer::writeFields(LayerFieldWriter& out) const {
  out.enumValue("poolingType", kPoolingNames, poolingType);
  out.integer("pnorm", pnorm);
  out.boolean("collapseDimensions", collapseDimensions);
}

void GlobalPoolingLayer::readFields(const LayerFieldReader& in) {
  poolingType = in.enumValue("poolingType", kPoolingNames);
  pnorm = in.size("pnorm", kMaxPNorm);
  collapseDimensions = in.boolean("collapseDimensions");
}

}  // namespace dl4cpp