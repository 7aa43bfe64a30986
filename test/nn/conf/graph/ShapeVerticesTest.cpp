// ReshapeVertex and PreprocessorVertex: output types and their errors, forward values, gradient
// checks in a graph (failing when the vertex's backward is wrong), and the JSON round trip.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <string>

#include "nn/graph/GraphTestData.h"
#include "nn/layers/VertexRuntime.h"
#include "nn/tensor/Random.h"

using namespace dl4cpp;
using testing::oneHot;
using testing::randomTensor;

namespace {

// rows of 32 -> dense 32 -> (reshape) 2x4x4 images -> 3x3 conv, 3 channels -> (pre-processor)
// rows of 48 -> softmax 3; the dense layer's gradient passes through both vertices.
ComputationGraphConfiguration shapeGraph(const GraphVertex& toImage, const GraphVertex& toRows) {
  return NeuralNetConfiguration::Builder()
      .seed(5)
      .updater(Sgd(0.1))
      .graphBuilder()
      .addInputs("in")
      .setInputTypes(InputType::feedForward(8))
      .addLayer("d", DenseLayer::Builder().nOut(32).activation(Activation::TANH).build(), "in")
      .addVertex("toImage", toImage, "d")
      .addLayer("conv",
                ConvolutionLayer::Builder(3, 3)
                    .nOut(3)
                    .padding(1, 1)
                    .activation(Activation::TANH)
                    .build(),
                "toImage")
      .addVertex("toRows", toRows, "conv")
      .addLayer("out",
                OutputLayer::Builder(LossFunction::MCXENT)
                    .nOut(3)
                    .activation(Activation::SOFTMAX)
                    .build(),
                "toRows")
      .setOutputs("out")
      .build();
}

GradientCheckUtil::Result check(const ComputationGraphConfiguration& conf) {
  ComputationGraph net(conf);
  net.init();
  const MultiDataSet data(DataSet(randomTensor(Shape{3, 8}, 1), oneHot(3, 3, 2)));
  GradientCheckUtil::Options options;
  options.maxChecksPerTensor = 40;
  return GradientCheckUtil::checkGradients(net, data, options);
}

void refuseBuild(const GraphVertex& vertex, const InputType& input, const std::string& part) {
  try {
    (void)NeuralNetConfiguration::Builder()
        .graphBuilder()
        .addInputs("in")
        .setInputTypes(input)
        .addVertex("v", vertex, "in")
        .addLayer("out",
                  OutputLayer::Builder(LossFunction::MSE)
                      .nOut(1)
                      .activation(Activation::IDENTITY)
                      .build(),
                  "v")
        .setOutputs("out")
        .build();
    FAIL("build() accepted it");
  } catch (const ConfigError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("vertex \"v\"") != std::string::npos);
    CHECK(std::string(e.what()).find(part) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("ReshapeVertex and PreprocessorVertex: types, values and errors") {
  const auto conf = shapeGraph(ReshapeVertex({-1, 2, 4, 4}),
                               PreprocessorVertex(InputPreProcessor::CnnToFeedForward));
  const auto& toImage = conf.vertices[static_cast<size_t>(conf.vertexIndex("toImage"))];
  CHECK(toImage.outputType.toString() == InputType::convolutional(4, 4, 2).toString());
  const auto& toRows = conf.vertices[static_cast<size_t>(conf.vertexIndex("toRows"))];
  CHECK(toRows.outputType.toString() == InputType::feedForward(48).toString());

  // The same graph with the reshapes the other way round: equal outputs, as both keep the
  // values in place.
  const auto other = shapeGraph(PreprocessorVertex(InputPreProcessor::FeedForwardToCnn, 4, 4, 2),
                                ReshapeVertex({-1, 48}));
  ComputationGraph a(conf), b(other);
  a.init();
  b.init();
  const Tensor x = randomTensor(Shape{5, 8}, 9);
  CHECK(a.outputSingle(x).toVector() == b.outputSingle(x).toVector());

  refuseBuild(ReshapeVertex({-1, 3, 3}), InputType::feedForward(9), "rank 2");
  refuseBuild(ReshapeVertex({4, 9}), InputType::feedForward(9), "batch dimension must be -1");
  refuseBuild(ReshapeVertex({-1, 10}), InputType::feedForward(9), "holds 10 values");
  refuseBuild(ReshapeVertex({-1, 0, 3, 3}), InputType::feedForward(0 + 9), "dimension 1");
  refuseBuild(PreprocessorVertex(InputPreProcessor::FeedForwardToCnn, 2, 2, 2),
              InputType::feedForward(9), "rows of 8 values");
  refuseBuild(PreprocessorVertex(InputPreProcessor::CnnToFeedForward), InputType::feedForward(9),
              "flattens images");
  refuseBuild(PreprocessorVertex(InputPreProcessor::None), InputType::feedForward(9),
              "FeedForwardToCnn or CnnToFeedForward");
}

TEST_CASE("ReshapeVertex and PreprocessorVertex: gradient checks, failing on a wrong gradient") {
  const auto good = check(shapeGraph(ReshapeVertex({-1, 2, 4, 4}),
                                     PreprocessorVertex(InputPreProcessor::CnnToFeedForward)));
  INFO(good.report);
  CHECK(good.passed);
  const auto good2 = check(shapeGraph(
      PreprocessorVertex(InputPreProcessor::FeedForwardToCnn, 4, 4, 2), ReshapeVertex({-1, 48})));
  INFO(good2.report);
  CHECK(good2.passed);
  const auto badReshape =
      check(shapeGraph(testing::CorruptedVertex<ReshapeVertex>(std::vector<int64_t>{-1, 2, 4, 4}),
                       PreprocessorVertex(InputPreProcessor::CnnToFeedForward)));
  CHECK_FALSE(badReshape.passed);
  const auto badPreprocessor =
      check(shapeGraph(ReshapeVertex({-1, 2, 4, 4}), testing::CorruptedVertex<PreprocessorVertex>(
                                                         InputPreProcessor::CnnToFeedForward)));
  CHECK_FALSE(badPreprocessor.passed);
}

TEST_CASE("ReshapeVertex and PreprocessorVertex: JSON round trip") {
  for (const auto& conf :
       {shapeGraph(ReshapeVertex({-1, 2, 4, 4}),
                   PreprocessorVertex(InputPreProcessor::CnnToFeedForward)),
        shapeGraph(PreprocessorVertex(InputPreProcessor::FeedForwardToCnn, 4, 4, 2),
                   ReshapeVertex({-1, 48}))}) {
    const std::string json = conf.toJson();
    const ComputationGraphConfiguration back = ComputationGraphConfiguration::fromJson(json);
    CHECK(back == conf);
    CHECK(back.toJson() == json);
  }
  std::string json = shapeGraph(ReshapeVertex({-1, 2, 4, 4}),
                                PreprocessorVertex(InputPreProcessor::CnnToFeedForward))
                         .toJson();
  const size_t at = json.find("\"CnnToFeedForward\"");
  REQUIRE(at != std::string::npos);
  json.replace(at, 18, "\"Sideways\"");
  CHECK_THROWS_AS((void)ComputationGraphConfiguration::fromJson(json), ConfigError);
}
