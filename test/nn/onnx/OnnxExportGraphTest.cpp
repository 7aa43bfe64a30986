// ONNX export of graphs (nn/onnx/OnnxExport.h): every vertex type, several inputs and outputs,
// a graph saved as a model file, each run in ONNX Runtime against dl4cpp's output() (within
// 1e-4). A vertex type the exporter does not know is a ModelExchangeError naming the vertex.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <string>

#include "TempDir.h"
#include "nn/layers/VertexRuntime.h"
#include "nn/onnx/OnnxExport.h"
#include "nn/onnx/OnnxExportTestUtil.h"
#include "nn/onnx/OnnxImport.h"
#include "nn/onnx/OnnxRuntimeRunner.h"

using namespace dl4cpp;
using testutil::checkSameOutputs;
using testutil::randomTensor;

namespace {

DenseLayer dense(int64_t nOut, Activation a = Activation::TANH) {
  return DenseLayer::Builder().nOut(nOut).activation(a).build();
}

// Two inputs (rows "a", images "b"), every vertex type, three outputs: two layers and a vertex.
ComputationGraphConfiguration everyVertexGraph() {
  return NeuralNetConfiguration::Builder()
      .seed(21)
      .graphBuilder()
      .addInputs("a", "b")
      .setInputTypes(InputType::feedForward(6), InputType::convolutional(4, 4, 2))
      .addLayer("d1", dense(8), "a")
      .addLayer("d2", dense(8, Activation::SIGMOID), "a")
      .addLayer("d3", dense(8, Activation::RELU), "a")
      .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "d1", "d2", "d3")
      .addVertex("sub", ElementWiseVertex(ElementWiseVertex::Op::Subtract), "d1", "d2")
      .addVertex("prod", ElementWiseVertex(ElementWiseVertex::Op::Product), "d1", "d2", "d3")
      .addVertex("avg", ElementWiseVertex(ElementWiseVertex::Op::Average), "d1", "d2", "d3")
      .addVertex("max", ElementWiseVertex(ElementWiseVertex::Op::Max), "d1", "d2", "d3")
      .addVertex("merged", MergeVertex(), "add", "sub", "prod", "avg", "max")
      .addVertex("subset", SubsetVertex(3, 29), "merged")
      .addVertex("scaled", ScaleVertex(0.5), "subset")
      .addVertex("shifted", ShiftVertex(-0.25), "scaled")
      .addVertex("unit", L2NormalizeVertex(), "shifted")
      // rows to images and back: (N, 8) -> (N, 2, 2, 2)
      .addVertex("asImage", ReshapeVertex({-1, 2, 2, 2}), "d1")
      .addLayer("c1",
                ConvolutionLayer::Builder(3, 3)
                    .padding(1, 1)
                    .nOut(3)
                    .activation(Activation::RELU)
                    .build(),
                "b")
      .addLayer("c2", ConvolutionLayer::Builder(2, 2).nOut(2).activation(Activation::TANH).build(),
                "b")
      .addVertex("c2rows", ReshapeVertex({-1, 18}), "c2")
      .addLayer("gp", GlobalPoolingLayer::Builder(PoolingType::MAX).build(), "asImage")
      .addVertex("imageMerge", MergeVertex(), "c1", "b")
      .addVertex("imageUnit", L2NormalizeVertex(1e-3), "imageMerge")
      .addVertex("imageChannels", SubsetVertex(1, 3), "imageUnit")
      .addVertex("rowsOfImage", PreprocessorVertex(InputPreProcessor::CnnToFeedForward),
                 "imageChannels")
      .addVertex("backToImage", PreprocessorVertex(InputPreProcessor::FeedForwardToCnn, 4, 4, 3),
                 "rowsOfImage")
      .addLayer("pool", SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build(),
                "backToImage")
      .addVertex("poolRows", PreprocessorVertex(InputPreProcessor::CnnToFeedForward), "pool")
      .addLayer("out1",
                OutputLayer::Builder(LossFunction::MCXENT)
                    .nOut(4)
                    .activation(Activation::SOFTMAX)
                    .build(),
                "unit", "poolRows", "gp", "c2rows")
      .addLayer(
          "out2",
          OutputLayer::Builder(LossFunction::MSE).nOut(2).activation(Activation::IDENTITY).build(),
          "imageChannels")
      .setOutputs("out1", "out2", "shifted")
      .build();
}

// A vertex type the exporter does not know.
class CopyVertex : public GraphVertex {
 public:
  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<CopyVertex>(*this);
  }
  std::string typeName() const override { return "CopyVertex"; }
  InputType outputType(const std::string&, const std::vector<InputType>& in) const override {
    return in.front();
  }
  std::unique_ptr<layers::VertexRuntime> instantiate(const std::vector<InputType>&) const override {
    struct Runtime : layers::VertexRuntime {
      void forward(DeviceContext&, std::span<const Tensor> in, Tensor& out, bool) override {
        out.copyFrom(in[0]);
      }
      void backward(DeviceContext&, std::span<const Tensor>, const Tensor&, const Tensor& grad,
                    std::span<Tensor> inGrads) override {
        inGrads[0].copyFrom(grad);
      }
    };
    return std::make_unique<Runtime>();
  }
};

}  // namespace

TEST_SUITE("nn/onnx") {
  TEST_CASE("OnnxExport: a graph of every vertex type with two inputs and three outputs") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    ComputationGraph graph(everyVertexGraph());
    graph.init();
    const Tensor a = randomTensor(Shape{5, 6}, 31), b = randomTensor(Shape{5, 2, 4, 4}, 32);
    testutil::TempDir dir;
    onnx::exportModel(graph, dir / "graph.onnx");
    const std::vector<Tensor> expected = graph.output({a, b});
    // Slice (SubsetVertex) and ReduceL2 (L2NormalizeVertex) have no import: refused, named.
    CHECK_THROWS_WITH_AS(onnx::importModel(dir / "graph.onnx"), doctest::Contains("(Slice)"),
                         ModelExchangeError);
    const std::vector<Tensor> actual = testutil::runInOnnxRuntime(
        dir / "graph.onnx", {{"a", a}, {"b", b}}, {"out1", "out2", "shifted"}, dir.path());
    REQUIRE(actual.size() == 3);
    checkSameOutputs(expected[0], actual[0], "out1", true);
    checkSameOutputs(expected[1], actual[1], "out2");
    checkSameOutputs(expected[2], actual[2], "shifted");
  }

  TEST_CASE("OnnxExport: a trained graph's model file exports as the graph computes") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    ComputationGraph graph(
        NeuralNetConfiguration::Builder()
            .seed(22)
            .updater(Adam(1e-2))
            .graphBuilder()
            .addInputs("in")
            .setInputTypes(InputType::convolutionalFlat(5, 5, 1))
            .addLayer("conv",
                      ConvolutionLayer::Builder(3, 3).nOut(4).activation(Activation::RELU).build(),
                      "in")
            .addLayer("bn", BatchNormalization::Builder().activation(Activation::IDENTITY).build(),
                      "conv")
            .addLayer(
                "skip",
                ConvolutionLayer::Builder(3, 3).nOut(4).activation(Activation::IDENTITY).build(),
                "in")
            .addVertex("residual", ElementWiseVertex(ElementWiseVertex::Op::Add), "bn", "skip")
            .addLayer("out",
                      OutputLayer::Builder(LossFunction::MCXENT)
                          .nOut(3)
                          .activation(Activation::SOFTMAX)
                          .build(),
                      "residual")
            .setOutputs("out")
            .build());
    graph.init();
    const Tensor features = randomTensor(Shape{8, 25}, 33);
    const DataSet batch(features, testutil::oneHot(8, 3, 34));
    for (int i = 0; i < 10; ++i) graph.fit(batch);
    testutil::TempDir dir;
    ModelSerializer::writeModel(graph, dir / "graph.dl4cpp", false);
    onnx::exportModelFile(dir / "graph.dl4cpp", dir / "graph.onnx");
    const Tensor expected = graph.outputSingle(features);
    testutil::checkRoundTrip(dir / "graph.onnx", {features}, {expected}, "trained residual graph");
    const auto actual =
        testutil::runInOnnxRuntime(dir / "graph.onnx", {{"in", features}}, {"out"}, dir.path());
    checkSameOutputs(expected, actual.at(0), "trained residual graph", true);
  }

  TEST_CASE("OnnxExport: shared layers over stacked inputs (StackVertex, UnstackVertex)") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    ComputationGraph graph(
        NeuralNetConfiguration::Builder()
            .seed(8)
            .graphBuilder()
            .addInputs("left", "right")
            .setInputTypes(InputType::feedForward(5), InputType::feedForward(5))
            .addVertex("stack", StackVertex(), "left", "right")
            .addLayer("shared", dense(4), "stack")
            .addVertex("l", UnstackVertex(0, 2), "shared")
            .addVertex("r", UnstackVertex(1, 2), "shared")
            .addVertex("diff", ElementWiseVertex(ElementWiseVertex::Op::Subtract), "l", "r")
            .addLayer("out",
                      OutputLayer::Builder(LossFunction::MSE)
                          .nOut(2)
                          .activation(Activation::IDENTITY)
                          .build(),
                      "diff")
            .setOutputs("out")
            .build());
    graph.init();
    testutil::TempDir dir;
    onnx::exportModel(graph, dir / "siamese.onnx");
    for (int64_t n : {1, 3, 6}) {  // the split follows each batch's size
      const Tensor left = randomTensor(Shape{n, 5}, 40 + n), right = randomTensor(Shape{n, 5}, 50);
      const auto actual = testutil::runInOnnxRuntime(
          dir / "siamese.onnx", {{"left", left}, {"right", right}}, {"out"}, dir.path());
      checkSameOutputs(graph.output({left, right})[0], actual.at(0),
                       "siamese, batch " + std::to_string(n));
    }
  }

  TEST_CASE("OnnxExport: a graph of sequences with merge, subset and a residual add") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    ComputationGraph graph(
        NeuralNetConfiguration::Builder()
            .seed(12)
            .graphBuilder()
            .addInputs("in")
            .setInputTypes(InputType::recurrent(3))
            .addLayer("lstm1", LSTM::Builder().nOut(4).build(), "in")
            .addLayer("lstm2", LSTM::Builder().nOut(4).build(), "lstm1")
            .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "lstm1", "lstm2")
            .addVertex("sub", SubsetVertex(1, 2), "add")
            .addVertex("merge", MergeVertex(), "add", "sub")
            .addLayer("out",
                      RnnOutputLayer::Builder(LossFunction::MCXENT)
                          .nOut(3)
                          .activation(Activation::SOFTMAX)
                          .build(),
                      "merge")
            .setOutputs("out")
            .build());
    graph.init();
    testutil::TempDir dir;
    onnx::exportModel(graph, dir / "sequences.onnx");
    const Tensor x = randomTensor(Shape{3, 3, 6}, 61, -2, 2);
    const auto actual =
        testutil::runInOnnxRuntime(dir / "sequences.onnx", {{"in", x}}, {"out"}, dir.path());
    checkSameOutputs(graph.outputSingle(x), actual.at(0), "sequences");
  }

  TEST_CASE("OnnxExport: a vertex type ONNX export does not know is an error naming it") {
    ComputationGraph graph(
        NeuralNetConfiguration::Builder()
            .graphBuilder()
            .addInputs("in")
            .setInputTypes(InputType::feedForward(3))
            .addVertex("copy", CopyVertex(), "in")
            .addLayer("out", OutputLayer::Builder(LossFunction::MSE).nOut(2).build(), "copy")
            .setOutputs("out")
            .build());
    graph.init();
    testutil::TempDir dir;
    CHECK_THROWS_WITH_AS(onnx::exportModel(graph, dir / "graph.onnx"),
                         doctest::Contains("vertex \"copy\" (CopyVertex)"), ModelExchangeError);
    CHECK_FALSE(std::filesystem::exists(dir / "graph.onnx"));
  }
}
