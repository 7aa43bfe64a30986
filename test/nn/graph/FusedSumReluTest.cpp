// A residual sum read only by a ReLU layer runs fused with it (ComputationGraph.cpp): the sum
// writes the ReLU's output and takes its gradient, piece by piece. Against the same graph with a
// LEAKYRELU of slope 0 in the ReLU's place (the same function, which the graph does not fuse; it
// gives -0 where the ReLU gives 0, and -0 == 0): the same outputs, score and parameters, bit for
// bit, over several steps, on maps larger than one piece. The profiler shows which one ran fused:
// the fused ReLU layer runs no op of its own.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <string>

#include "nn/graph/GraphTestData.h"

using namespace dl4cpp;
using testing::oneHot;
using testing::randomTensor;

namespace {

// input (3, 48, 48) -> conv a; sum1 = input + a (the input needs no gradient: only the sum's
// second input gets one) -> relu1; conv b (relu1); sum2 = relu1 + b (relu1 feeds both) -> relu2
// -> average pooling -> softmax. 48 x 48 x 3 x 32 examples: 221,184 values, two pieces.
ComputationGraphConfiguration residualGraph(bool leakyTwin) {
  const auto relu = [leakyTwin] {
    return leakyTwin ? ActivationLayer::Builder(Activation::LEAKYRELU).leakyReluAlpha(0).build()
                     : ActivationLayer::Builder(Activation::RELU).build();
  };
  const auto conv = [] {
    return ConvolutionLayer::Builder(3, 3)
        .padding(1, 1)
        .nOut(3)
        .activation(Activation::IDENTITY)
        .build();
  };
  auto b = NeuralNetConfiguration::Builder()
               .seed(17)
               .updater(Sgd(0.05))
               .convolutionMode(ConvolutionMode::Truncate)
               .graphBuilder();
  b.addInputs("input").setInputTypes(InputType::convolutional(48, 48, 3));
  b.addLayer("a", conv(), "input");
  b.addVertex("sum1", ElementWiseVertex(ElementWiseVertex::Op::Add), "input", "a");
  b.addLayer("relu1", relu(), "sum1");
  b.addLayer("b", conv(), "relu1");
  b.addVertex("sum2", ElementWiseVertex(ElementWiseVertex::Op::Add), "relu1", "b");
  b.addLayer("relu2", relu(), "sum2");
  b.addLayer("pool", GlobalPoolingLayer::Builder(PoolingType::AVG).build(), "relu2");
  b.addLayer(
      "out",
      OutputLayer::Builder(LossFunction::MCXENT).nOut(4).activation(Activation::SOFTMAX).build(),
      "pool");
  b.setOutputs("out");
  return b.build();
}

}  // namespace

TEST_SUITE("nn/graph") {
  TEST_CASE("ComputationGraph: a sum read by a ReLU runs fused, to the bits of the two") {
    ComputationGraph fused(residualGraph(false)), twin(residualGraph(true));
    fused.init();
    twin.init();
    REQUIRE(fused.params().toVector() == twin.params().toVector());
    auto fusedProfile = std::make_shared<LayerProfiler>();
    auto twinProfile = std::make_shared<LayerProfiler>();
    fused.setProfiler(fusedProfile);
    twin.setProfiler(twinProfile);
    const DataSet batch(randomTensor(Shape{32, 3, 48, 48}, 3), oneHot(32, 4, 5));
    CHECK(fused.outputSingle(batch.features).toVector() ==
          twin.outputSingle(batch.features).toVector());
    for (int step = 0; step < 3; ++step) {
      CAPTURE(step);
      fused.fit(batch);
      twin.fit(batch);
      CHECK(fused.score() == twin.score());
      CHECK(fused.params().toVector() == twin.params().toVector());
    }
    CHECK(fused.outputSingle(batch.features).toVector() ==
          twin.outputSingle(batch.features).toVector());
    // Layers as layerNames() numbers them: a 0, relu1 1, b 2, relu2 3.
    for (int relu : {1, 3}) {
      CAPTURE(relu);
      CHECK(fusedProfile->totals(relu, ProfilePhase::ACTIVATION_FORWARD).calls == 0);
      CHECK(fusedProfile->totals(relu, ProfilePhase::ACTIVATION_BACKWARD).calls == 0);
      CHECK(twinProfile->totals(relu, ProfilePhase::ACTIVATION_FORWARD).calls > 0);
      CHECK(twinProfile->totals(relu, ProfilePhase::ACTIVATION_BACKWARD).calls > 0);
    }
  }
}
