#include "nn/conf/layers/GlobalPoolingLayer.h"

#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// The runtime object. No parameters. Keeps views of the last forward pass's input and output (the
// network's buffers, unchanged until the backward pass that follows): MAX and PNORM read them
// backward.
class GlobalPoolingRuntime : public layers::RuntimeLayer {
 public:
  explicit GlobalPoolingRuntime(const GlobalPoolingLayer& conf)
      : kind_(conf.poolingType),
        pnorm_(static_cast<int>(conf.pnorm)),
        collapse_(conf.collapseDimensions) {}

  Shape outputShape(const Shape& input) const override {
    if (collapse_) return {input[0], input[1]};
    return {input[0], input[1], 1, 1};
  }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext&) override {
    ctx.backend().globalPoolingForward(kind_, pnorm_, input, output);
    input_ = input;
    output_ = output;
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().globalPoolingBackward(kind_, pnorm_, input_, output_, grad, inputGrad);
  }

 private:
  PoolingKind kind_;
  int pnorm_;
  bool collapse_;
  Tensor input_, output_;
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
    throw ConfigError(where(index) + ": needs image input but receives " + input.toString());
  if (pnorm < 1 || pnorm > kMaxPNorm)
    throw ConfigError(where(index) + ": pnorm must be between 1 and " + std::to_string(kMaxPNorm) +
                      ", got " + std::to_string(pnorm));
  validateCommon(index);
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