#include "nn/conf/LayerInputs.h"

#include <fmt/format.h>

#include <utility>

#include "nn/conf/ConfigurationLimits.h"

namespace dl4cpp {

void checkInputTypeSizes(const InputType& type, const std::string& what) {
  auto fail = [&](const std::string& problem) {
    throw ConfigError(fmt::format("{} {}: {}", what, type.toString(), problem));
  };
  if (type.kind == InputType::Kind::Recurrent) {
    if (type.size < 0 || type.size > limits::kMaxExtent || type.length < 0 ||
        type.length > limits::kMaxExtent)
      fail(fmt::format("size and length must be between 0 and {}", limits::kMaxExtent));
    return;
  }
  if (type.kind == InputType::Kind::FeedForward) {
    if (type.size < 0 || type.size > limits::kMaxValuesPerExample)
      fail(fmt::format("size must be between 0 and {}", limits::kMaxValuesPerExample));
    return;
  }
  for (const auto& [name, extent] :
       {std::pair{"height", type.height}, std::pair{"width", type.width},
        std::pair{"channels", type.channels}})
    if (extent < 0 || extent > limits::kMaxExtent)
      fail(fmt::format("{} must be between 0 and {}", name, limits::kMaxExtent));
  if (type.flatSize() > limits::kMaxValuesPerExample)  // each factor <= 2^20: no overflow
    fail(fmt::format("more than {} values per example", limits::kMaxValuesPerExample));
}

InputPreProcessor preProcessorFor(const Layer& layer, InputType& current,
                                  const std::string& where) {
  if (layer.consumesSequences()) {
    if (current.kind != InputType::Kind::Recurrent)
      throw ConfigError(where + " needs sequences but receives " + current.toString() +
                        "; set the input type with InputType::recurrent(size)");
    return InputPreProcessor::None;
  }
  if (current.kind == InputType::Kind::Recurrent && layer.acceptsSequences())
    return InputPreProcessor::None;
  if (current.kind == InputType::Kind::Recurrent)
    throw ConfigError(where + " takes no sequences but receives " + current.toString() +
                      "; end a recurrent stack with RnnOutputLayer, or wrap its last recurrent "
                      "layer in LastTimeStep to pass one vector per sequence on");
  if (layer.acceptsRowsOrImages()) {
    if (current.kind == InputType::Kind::ConvolutionalFlat) {
      current = InputType::convolutional(current.height, current.width, current.channels);
      return InputPreProcessor::FeedForwardToCnn;
    }
    return InputPreProcessor::None;
  }
  if (layer.consumesImages() && current.kind != InputType::Kind::Convolutional) {
    if (current.kind == InputType::Kind::FeedForward)
      throw ConfigError(where + " needs images but receives " + current.toString() +
                        "; set the input type with InputType::convolutionalFlat(h, w, c)");
    current = InputType::convolutional(current.height, current.width, current.channels);
    return InputPreProcessor::FeedForwardToCnn;
  }
  if (!layer.consumesImages() && current.kind != InputType::Kind::FeedForward) {
    current = InputType::feedForward(current.flatSize());
    return InputPreProcessor::CnnToFeedForward;
  }
  return InputPreProcessor::None;
}

}  // namespace dl4cpp
