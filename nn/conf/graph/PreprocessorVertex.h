#pragma once
// PreprocessorVertex (DL4J's): an input pre-processor as a vertex of its own, where the graph
// builder would not add it by itself (the builder adds these reshapes before layers already:
// docs/computation-graph.md).
//   .addVertex("toImage", PreprocessorVertex(InputPreProcessor::FeedForwardToCnn, 4, 4, 2), "d")
//   .addVertex("toRows", PreprocessorVertex(InputPreProcessor::CnnToFeedForward), "conv")
// FeedForwardToCnn takes rows of height * width * channels values to (N, channels, height,
// width) images (DL4J's FeedForwardToCnnPreProcessor(inputHeight, inputWidth, numChannels));
// CnnToFeedForward flattens images to rows (DL4J's CnnToFeedForwardPreProcessor). Both keep the
// values in place (C order). ConfigError naming the vertex when the input does not fit.
#include <cstdint>

#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/conf/graph/GraphVertex.h"

namespace dl4cpp {

class PreprocessorVertex : public GraphVertex {
 public:
  PreprocessorVertex() = default;
  explicit PreprocessorVertex(InputPreProcessor preProcessor, int64_t height = 0, int64_t width = 0,
                              int64_t channels = 0)
      : preProcessor(preProcessor), height(height), width(width), channels(channels) {}

  InputPreProcessor preProcessor = InputPreProcessor::CnnToFeedForward;
  int64_t height = 0, width = 0, channels = 0;  // FeedForwardToCnn: the images' shape

  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<PreprocessorVertex>(*this);
  }
  std::string typeName() const override { return "PreprocessorVertex"; }
  InputType outputType(const std::string& name,
                       const std::vector<InputType>& inputs) const override;
  std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

}  // namespace dl4cpp
