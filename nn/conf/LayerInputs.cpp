#include "nn/conf/LayerInputs.h"

#include <fmt/format.h>

#include <tuple>
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
  if (type.timeDistributed && (type.length < 0 || type.length > limits::kMaxExtent))
    fail(fmt::format("length must be between 0 and {}", limits::kMaxExtent));
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

namespace {

// `perExample` as the rows or images of `of`'s time steps where `of` is (timeDistributed).
InputType perStepLike(const InputType& of, const InputType& perExample) {
  return of.timeDistributed ? InputType::perTimeStep(perExample, of.length) : perExample;
}

}  // namespace

InputPreProcessor preProcessorFor(const Layer& layer, InputType& current,
                                  const std::string& where) {
  // Rows or images per time step go back to sequences before a layer that reads sequences (and,
  // for rows, before one that takes sequences but no rows: pooling over time).
  if (current.timeDistributed &&
      (layer.consumesSequences() || (current.kind == InputType::Kind::FeedForward &&
                                     layer.acceptsSequences() && !layer.acceptsRowsOrImages()))) {
    const bool images = current.kind == InputType::Kind::Convolutional;
    current = InputType::recurrent(current.flatSize(), current.length);
    return images ? InputPreProcessor::CnnToRnn : InputPreProcessor::FeedForwardToRnn;
  }
  if (layer.consumesSequences()) {
    if (current.kind != InputType::Kind::Recurrent)
      throw ConfigError(where + " needs sequences but receives " + current.toString() +
                        "; set the input type with InputType::recurrent(size)");
    return InputPreProcessor::None;
  }
  if (current.kind == InputType::Kind::Recurrent && layer.acceptsSequences())
    return InputPreProcessor::None;
  if (current.kind == InputType::Kind::Recurrent) {
    if (layer.consumesImages())
      throw ConfigError(where + " needs images but receives " + current.toString() +
                        "; to give it each time step as an image, add "
                        "inputPreProcessor(index, RnnToCnnPreProcessor(height, width, channels))");
    current = InputType::perTimeStep(InputType::feedForward(current.size), current.length);
    return InputPreProcessor::RnnToFeedForward;
  }
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
    current = perStepLike(current, InputType::feedForward(current.flatSize()));
    return InputPreProcessor::CnnToFeedForward;
  }
  return InputPreProcessor::None;
}

InputPreProcessor rnnToCnn(const Layer& layer, const RnnToCnnPreProcessor& images,
                           InputType& current, const std::string& where) {
  if (!layer.consumesImages() && !layer.acceptsRowsOrImages())
    throw ConfigError(where + ": an RnnToCnnPreProcessor gives images, which it does not read");
  const auto [h, w, c] = std::tuple{images.inputHeight, images.inputWidth, images.numChannels};
  if (h <= 0 || w <= 0 || c <= 0 || h > limits::kMaxExtent || w > limits::kMaxExtent ||
      c > limits::kMaxExtent)
    throw ConfigError(fmt::format(
        "{}: RnnToCnnPreProcessor({}, {}, {}): height, width and channels must be between 1 and {}",
        where, h, w, c, limits::kMaxExtent));
  if (current.kind != InputType::Kind::Recurrent || current.size != h * w * c)
    throw ConfigError(fmt::format(
        "{}: RnnToCnnPreProcessor({}, {}, {}) needs sequences of {} features, but receives {}",
        where, h, w, c, h * w * c, current.toString()));
  current = InputType::perTimeStep(InputType::convolutional(h, w, c), current.length);
  return InputPreProcessor::RnnToCnn;
}

void checkTruncatedBpttLengths(int64_t forwardLength, int64_t backwardLength) {
  if (forwardLength <= 0 || forwardLength > limits::kMaxExtent)
    throw ConfigError(fmt::format("tBPTTForwardLength must be between 1 and {}, got {}",
                                  limits::kMaxExtent, forwardLength));
  if (backwardLength <= 0 || backwardLength > forwardLength)
    throw ConfigError(
        fmt::format("tBPTTBackwardLength must be between 1 and tBPTTForwardLength ({}), got {}",
                    forwardLength, backwardLength));
}

InputType layerOutputType(const InputType& input, const InputType& output) {
  return output.kind == InputType::Kind::Recurrent ? output : perStepLike(input, output);
}

}  // namespace dl4cpp
