#include <dl4cpp/nn/conf/layers/GlobalPoolingLayer.h>
#include <dl4cpp/nn/layers/GlobalPoolingLayer.h>

namespace dl4cpp {

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
  return std::make_unique<layers::GlobalPoolingLayer>(*this);
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
