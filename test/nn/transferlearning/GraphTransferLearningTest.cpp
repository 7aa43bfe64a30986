// TransferLearning::GraphBuilder: a frozen feature extractor under a new output (kept parameters
// equal, frozen ones unchanged by training), nOutReplace reaching the layers that read the edited
// one (through a merge too), removeVertexKeepConnections, and the errors.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <string>

#include "nn/graph/GraphTestData.h"
#include "nn/tensor/Random.h"

using namespace dl4cpp;
using testing::oneHot;
using testing::randomTensor;

namespace {

DenseLayer dense(int64_t nOut) {
  return DenseLayer::Builder().nOut(nOut).activation(Activation::TANH).build();
}
OutputLayer softmaxOut(int64_t nOut) {
  return OutputLayer::Builder(LossFunction::MCXENT)
      .nOut(nOut)
      .activation(Activation::SOFTMAX)
      .build();
}

// in(4) -> d1(6) -> d2(6) -> add(d1, d2) -> out(3), trained a few steps.
ComputationGraph trainedResidual() {
  ComputationGraph net(
      NeuralNetConfiguration::Builder()
          .seed(7)
          .updater(Adam(1e-2))
          .graphBuilder()
          .addInputs("in")
          .setInputTypes(InputType::feedForward(4))
          .addLayer("d1", dense(6), "in")
          .addLayer("d2", dense(6), "d1")
          .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "d1", "d2")
          .addLayer("out", softmaxOut(3), "add")
          .setOutputs("out")
          .build());
  net.init();
  const DataSet data(randomTensor(Shape{8, 4}, 1), oneHot(8, 3, 2));
  for (int i = 0; i < 5; ++i) net.fit(data);
  return net;
}

// The values of layer vertex `name`'s parameters.
std::vector<float> paramsOf(const ComputationGraph& net, const std::string& name) {
  int64_t offset = 0;
  for (const auto& v : net.getConfiguration().vertices) {
    if (!v.layer) continue;
    if (v.name == name) return net.params().view(offset, Shape{v.layer->numParams()}).toVector();
    offset += v.layer->numParams();
  }
  FAIL("no layer vertex " << name);
  return {};
}

const Layer& layerOf(const ComputationGraph& net, const std::string& name) {
  const auto& conf = net.getConfiguration();
  const int at = conf.vertexIndex(name);
  REQUIRE(at >= 0);
  REQUIRE(conf.vertices[static_cast<size_t>(at)].layer);
  return *conf.vertices[static_cast<size_t>(at)].layer;
}

int64_t nInOf(const ComputationGraph& net, const std::string& name) {
  const std::shared_ptr<Layer> copy = layerOf(net, name).clone();
  return *copy->nInOut()->nIn;
}

template <typename F>
std::string configError(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("no ConfigError");
  return "";
}

}  // namespace

TEST_CASE("TransferLearning::GraphBuilder: a frozen feature extractor under a new output") {
  const ComputationGraph original = trainedResidual();
  ComputationGraph tuned =
      TransferLearning::GraphBuilder(original)
          .fineTuneConfiguration(FineTuneConfiguration::Builder().updater(Sgd(0.5)).build())
          .setFeatureExtractor("add")
          .removeVertexAndConnections("out")
          .addLayer("newOut", softmaxOut(2), "add")
          .setOutputs("newOut")
          .build();
  CHECK(tuned.isInitialized());
  CHECK(tuned.getConfiguration().networkOutputs == std::vector<std::string>{"newOut"});
  CHECK(layerOf(tuned, "d1").frozen);
  CHECK(layerOf(tuned, "d2").frozen);
  CHECK_FALSE(layerOf(tuned, "newOut").frozen);
  CHECK(nInOf(tuned, "newOut") == 6);
  CHECK(tuned.getConfiguration().vertexIndex("out") < 0);
  CHECK(tuned.summary().find("(frozen)") != std::string::npos);
  // Kept layers keep their trained values; the original is untouched.
  CHECK(paramsOf(tuned, "d1") == paramsOf(original, "d1"));
  CHECK(paramsOf(tuned, "d2") == paramsOf(original, "d2"));
  CHECK(tuned.numFrozenParams() == (4 * 6 + 6) + (6 * 6 + 6));

  // Training moves the new output only.
  const std::vector<float> d1 = paramsOf(tuned, "d1"), d2 = paramsOf(tuned, "d2"),
                           head = paramsOf(tuned, "newOut");
  const DataSet data(randomTensor(Shape{8, 4}, 3), oneHot(8, 2, 4));
  for (int i = 0; i < 5; ++i) tuned.fit(data);
  CHECK(paramsOf(tuned, "d1") == d1);
  CHECK(paramsOf(tuned, "d2") == d2);
  CHECK(paramsOf(tuned, "newOut") != head);
}

TEST_CASE("TransferLearning::GraphBuilder: nOutReplace resizes the layers that read the layer") {
  const ComputationGraph original = trainedResidual();
  // d2 feeds the add with d1: both must change together, so the add refuses a lone d2.
  const std::string mismatch = configError([&] {
    (void)TransferLearning::GraphBuilder(original).nOutReplace("d2", 9, WeightInit::XAVIER).build();
  });
  CHECK(mismatch.find("vertex \"add\"") != std::string::npos);

  // d1 feeds d2 and the add; through the add, the output takes 9 inputs too.
  ComputationGraph wider = TransferLearning::GraphBuilder(original)
                               .nOutReplace("d1", 9, WeightInit::XAVIER)
                               .nOutReplace("d2", 9, WeightInit::XAVIER)
                               .build();
  CHECK(nInOf(wider, "d2") == 9);
  CHECK(nInOf(wider, "out") == 9);
  CHECK(wider.numParams() == (4 * 9 + 9) + (9 * 9 + 9) + (9 * 3 + 3));

  // Through a merge: a(3) and b(4) merged into the output; widening a widens the output's nIn and
  // re-initialises it, b keeps its values.
  ComputationGraph merged(NeuralNetConfiguration::Builder()
                              .seed(1)
                              .graphBuilder()
                              .addInputs("in")
                              .setInputTypes(InputType::feedForward(4))
                              .addLayer("a", dense(3), "in")
                              .addLayer("b", dense(4), "in")
                              .addLayer("out", softmaxOut(2), "a", "b")
                              .setOutputs("out")
                              .build());
  merged.init();
  ComputationGraph edited = TransferLearning::GraphBuilder(merged)
                                .nOutReplace("a", 5, WeightInit::XAVIER, WeightInit::ZERO)
                                .build();
  CHECK(nInOf(edited, "out") == 9);
  CHECK(paramsOf(edited, "b") == paramsOf(merged, "b"));
  for (float v : paramsOf(edited, "out")) CHECK(v == 0.0f);  // schemeNext, biases 0 too

  // removeVertexKeepConnections: a new vertex under the old name takes its place.
  ComputationGraph replaced = TransferLearning::GraphBuilder(original)
                                  .removeVertexKeepConnections("out")
                                  .addLayer("out", softmaxOut(5), "add")
                                  .build();
  CHECK(replaced.getConfiguration().networkOutputs == std::vector<std::string>{"out"});
  CHECK(replaced.outputSingle(randomTensor(Shape{2, 4}, 5)).shape() == Shape{2, 5});
  CHECK(paramsOf(replaced, "d2") == paramsOf(original, "d2"));
}

TEST_CASE("TransferLearning::GraphBuilder: errors name the vertex") {
  const ComputationGraph original = trainedResidual();
  using TG = TransferLearning::GraphBuilder;
  ComputationGraph fresh(original.getConfiguration());
  CHECK(configError([&] { TG{fresh}; }).find("initialised") != std::string::npos);
  CHECK(configError([&] {
          TG(original).removeVertexAndConnections("nope");
        }).find("removeVertexAndConnections(\"nope\")") != std::string::npos);
  CHECK(configError([&] {
          TG(original).nOutReplace("add", 3, WeightInit::XAVIER);
        }).find("vertex \"add\" (ElementWiseVertex) has no nOut") != std::string::npos);
  CHECK(configError([&] {
          (void)TG(original).setFeatureExtractor("nope").build();
        }).find("setFeatureExtractor(\"nope\")") != std::string::npos);
  // Removing d2 with its connections leaves the add with one input.
  CHECK(configError([&] {
          (void)TG(original).removeVertexAndConnections("d2").build();
        }).find("vertex \"add\"") != std::string::npos);
  // A frozen layer keeps trained parameters.
  CHECK(configError([&] {
          (void)TG(original)
              .setFeatureExtractor("d2")
              .nOutReplace("d1", 9, WeightInit::XAVIER)
              .nOutReplace("d2", 9, WeightInit::XAVIER)
              .build();
        }).find("is frozen") != std::string::npos);
}
