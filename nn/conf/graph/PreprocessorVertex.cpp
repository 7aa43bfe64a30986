#include "nn/conf/graph/PreprocessorVertex.h"

#include <fmt/format.h>

#include <array>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/graph/VertexLoops.h"

namespace dl4cpp {

namespace {
constexpr std::array<const char*, 2> kPreProcessorNames{"FeedForwardToCnn", "CnnToFeedForward"};
}

InputType PreprocessorVertex::outputType(const std::string& name,
                                         const std::vector<InputType>& inputs) const {
  const InputType& in = inputs.front();
  switch (preProcessor) {
    case InputPreProcessor::FeedForwardToCnn: {
      for (int64_t v : {height, width, channels})
        if (v < 1 || v > limits::kMaxExtent)
          throw ConfigError(fmt::format(
              "{}: FeedForwardToCnn needs height, width and channels in 1..{}, got {}x{}x{}",
              where(name), limits::kMaxExtent, height, width, channels));
      if (in.kind == InputType::Kind::Convolutional || in.flatSize() != height * width * channels)
        throw ConfigError(fmt::format(
            "{}: FeedForwardToCnn makes {}x{}x{} images of rows of {} values; its input is {}",
            where(name), height, width, channels, height * width * channels, in.toString()));
      return InputType::convolutional(height, width, channels);
    }
    case InputPreProcessor::CnnToFeedForward:
      if (in.kind == InputType::Kind::FeedForward)
        throw ConfigError(fmt::format("{}: CnnToFeedForward flattens images; its input is {}",
                                      where(name), in.toString()));
      return InputType::feedForward(in.flatSize());
    case InputPreProcessor::None:
    case InputPreProcessor::RnnToFeedForward:  // inserted before a graph's layers where needed
    case InputPreProcessor::FeedForwardToRnn:
    case InputPreProcessor::CnnToRnn:
    case InputPreProcessor::RnnToCnn:
      break;
  }
  throw ConfigError(fmt::format(
      "{}: the pre-processor must be FeedForwardToCnn or CnnToFeedForward", where(name)));
}

void PreprocessorVertex::writeFields(LayerFieldWriter& out) const {
  out.string("preProcessor",
             preProcessor == InputPreProcessor::FeedForwardToCnn   ? kPreProcessorNames[0]
             : preProcessor == InputPreProcessor::CnnToFeedForward ? kPreProcessorNames[1]
                                                                   : "None");
  if (preProcessor == InputPreProcessor::FeedForwardToCnn) {
    out.integer("height", height);
    out.integer("width", width);
    out.integer("channels", channels);
  }
}

void PreprocessorVertex::readFields(const LayerFieldReader& in) {
  preProcessor = in.choice("preProcessor", kPreProcessorNames) == 0
                     ? InputPreProcessor::FeedForwardToCnn
                     : InputPreProcessor::CnnToFeedForward;
  if (preProcessor == InputPreProcessor::FeedForwardToCnn) {
    height = in.size("height", limits::kMaxExtent);
    width = in.size("width", limits::kMaxExtent);
    channels = in.size("channels", limits::kMaxExtent);
  }
}

std::unique_ptr<layers::VertexRuntime> PreprocessorVertex::instantiate(
    const std::vector<InputType>& /*inputs*/) const {
  return std::make_unique<detail::ReshapeRuntime>();
}

}  // namespace dl4cpp
