#include "nn/conf/layers/EmbeddingSequenceLayer.h"

#include <fmt/format.h>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/layers/EmbeddingRuntime.h"
#include "nn/core/Error.h"

namespace dl4cpp {

InputType EmbeddingSequenceLayer::resolve(int index, const InputType& input,
                                          const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  const std::string at = where(index);
  if (inputLength < 1 || inputLength > limits::kMaxExtent)
    throw ConfigError(fmt::format("{}: inputLength must be between 1 and {}, got {}", at,
                                  limits::kMaxExtent, inputLength));
  int64_t given = 0;  // the input type's length, 0 for any
  if (input.kind == InputType::Kind::Recurrent && input.size == 1) {
    given = input.length;
  } else if (input.kind == InputType::Kind::FeedForward) {
    given = input.size;
  } else {
    throw ConfigError(
        fmt::format("{} takes index sequences, InputType::recurrent(1) ([N, 1, T]) or "
                    "InputType::feedForward(T) ([N, T]), but receives {}",
                    at, input.toString()));
  }
  if (inferInputLength) {
    steps_ = given;
  } else {
    if (given > 0 && given != inputLength)
      throw ConfigError(fmt::format("{}: inputLength is {} but the input {} has {} steps", at,
                                    inputLength, input.toString(), given));
    steps_ = inputLength;
  }
  detail::validateEmbeddingSizes(at, nIn, nOut);
  validateCommon(index);
  where_ = at;
  return InputType::recurrent(nOut, steps_);
}

std::vector<ParamSpec> EmbeddingSequenceLayer::paramSpecs() const {
  std::vector<ParamSpec> specs{
      {"W", Shape{nIn, nOut}, false, weightInit, double(nIn), double(nOut)}};
  if (hasBias)
    specs.push_back({"b", Shape{nOut}, true, std::nullopt, 0, 0, float(biasInit.value_or(0))});
  return specs;
}

std::unique_ptr<layers::RuntimeLayer> EmbeddingSequenceLayer::instantiate() const {
  return std::make_unique<detail::EmbeddingRuntime>(where_, nIn, nOut, hasBias, true, steps_,
                                                    *activation, leakyReluAlpha);
}

void EmbeddingSequenceLayer::writeFields(LayerFieldWriter& out) const {
  FeedForwardLayer::writeFields(out);
  out.integer("inputLength", inputLength);
  out.boolean("inferInputLength", inferInputLength);
}

void EmbeddingSequenceLayer::readFields(const LayerFieldReader& in) {
  FeedForwardLayer::readFields(in);
  inputLength = in.size("inputLength", limits::kMaxExtent);
  inferInputLength = in.boolean("inferInputLength");
}

}  // namespace dl4cpp
