// StackVertex and UnstackVertex: output types and example counts, forward values, a siamese graph
// (one dense layer on both inputs) with gradient checks that fail when either vertex's backward
// is wrong, training, typed errors, and the JSON round trip.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>

#include "nn/graph/GraphTestData.h"
#include "nn/layers/VertexRuntime.h"
#include "nn/tensor/Random.h"

using namespace dl4cpp;
using testing::oneHot;
using testing::randomTensor;

namespace {

DenseLayer dense(int64_t nOut) {
  return DenseLayer::Builder().nOut(nOut).activation(Activation::TANH).build();
}

// Two inputs, each through its own dense layer, stacked, one shared dense layer on both, unstacked
// and subtracted, then softmax.
ComputationGraphConfiguration siamese(const GraphVertex& stack, const GraphVertex& unstackLeft) {
  return NeuralNetConfiguration::Builder()
      .seed(3)
      .updater(Sgd(0.1))
      .graphBuilder()
      .addInputs("a", "b")
      .setInputTypes(InputType::feedForward(4), InputType::feedForward(4))
      .addLayer("da", dense(5), "a")
      .addLayer("db", dense(5), "b")
      .addVertex("stack", stack, "da", "db")
      .addLayer("shared", dense(6), "stack")
      .addVertex("left", unstackLeft, "shared")
      .addVertex("right", UnstackVertex(1, 2), "shared")
      .addVertex("diff", ElementWiseVertex(ElementWiseVertex::Op::Subtract), "left", "right")
      .addLayer("out",
                OutputLayer::Builder(LossFunction::MCXENT)
                    .nOut(3)
                    .activation(Activation::SOFTMAX)
                    .build(),
                "diff")
      .setOutputs("out")
      .build();
}

MultiDataSet siameseData(int64_t n, uint64_t seed) {
  return MultiDataSet({randomTensor(Shape{n, 4}, seed), randomTensor(Shape{n, 4}, seed + 1)},
                      {oneHot(n, 3, seed + 2)});
}

GradientCheckUtil::Result check(const ComputationGraphConfiguration& conf) {
  ComputationGraph net(conf);
  net.init();
  return GradientCheckUtil::checkGradients(net, siameseData(3, 7), GradientCheckUtil::Options{});
}

template <typename Error>
void refuse(const std::function<void()>& f, const std::string& part1, const std::string& part2) {
  try {
    f();
    FAIL("accepted");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(part1) != std::string::npos);
    CHECK(std::string(e.what()).find(part2) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("StackVertex and UnstackVertex: types, example counts and values") {
  const auto conf =
      NeuralNetConfiguration::Builder()
          .graphBuilder()
          .addInputs("a", "b", "c")
          .setInputTypes(InputType::convolutional(2, 2, 1), InputType::convolutional(2, 2, 1),
                         InputType::convolutional(2, 2, 1))
          .addVertex("stack", StackVertex(), "a", "b", "c")
          .addVertex("second", UnstackVertex(1, 3), "stack")
          .addVertex("third", UnstackVertex(2, 3), "stack")
          .setOutputs("stack", "second", "third")
          .build();
  const auto& stack = conf.vertices[static_cast<size_t>(conf.vertexIndex("stack"))];
  CHECK(stack.outputType.toString() == InputType::convolutional(2, 2, 1).toString());
  CHECK(stack.batchMultiplier == 3);
  CHECK(stack.batchDivisor == 1);
  const auto& second = conf.vertices[static_cast<size_t>(conf.vertexIndex("second"))];
  CHECK(second.batchMultiplier == 1);
  CHECK(second.batchDivisor == 1);

  ComputationGraph net(conf);
  net.init();
  const Tensor a = randomTensor(Shape{2, 1, 2, 2}, 1), b = randomTensor(Shape{2, 1, 2, 2}, 2),
               c = randomTensor(Shape{2, 1, 2, 2}, 3);
  const std::vector<Tensor> out = net.output({a, b, c});
  REQUIRE(out.size() == 3);
  CHECK(out[0].shape() == Shape{6, 1, 2, 2});
  std::vector<float> joined = a.toVector();
  for (const Tensor& t : {b, c}) {
    const std::vector<float> v = t.toVector();
    joined.insert(joined.end(), v.begin(), v.end());
  }
  CHECK(out[0].toVector() == joined);
  CHECK(out[1].shape() == Shape{2, 1, 2, 2});
  CHECK(out[1].toVector() == b.toVector());
  CHECK(out[2].toVector() == c.toVector());
}

TEST_CASE("StackVertex and UnstackVertex: a siamese graph shares its layer between both inputs") {
  const auto conf = siamese(StackVertex(), UnstackVertex(0, 2));
  CHECK(conf.vertices[static_cast<size_t>(conf.vertexIndex("shared"))].batchMultiplier == 2);
  ComputationGraph net(conf);
  net.init();
  // One layer on the stack of two inputs: the same example on both sides gives the same halves
  // (their difference is zero), swapping the inputs swaps the halves, and each half depends on
  // its own input only. (Row order may change the kernel's rounding: compared to 1e-6.)
  const Tensor x = randomTensor(Shape{4, 4}, 11), y = randomTensor(Shape{4, 4}, 12);
  ComputationGraph probe(
      NeuralNetConfiguration::Builder()
          .seed(3)
          .graphBuilder()
          .addInputs("a", "b")
          .setInputTypes(InputType::feedForward(4), InputType::feedForward(4))
          .addVertex("stack", StackVertex(), "a", "b")
          .addLayer("shared", dense(6), "stack")
          .addVertex("left", UnstackVertex(0, 2), "shared")
          .addVertex("right", UnstackVertex(1, 2), "shared")
          .addVertex("diff", ElementWiseVertex(ElementWiseVertex::Op::Subtract), "left", "right")
          .setOutputs("diff", "left")
          .build());
  probe.init();
  const std::vector<Tensor> same = probe.output({x, x});
  for (float v : same[0].toVector()) CHECK(std::abs(v) < 1e-6f);
  const std::vector<Tensor> xy = probe.output({x, y}), yx = probe.output({y, x});
  const std::vector<float> d1 = xy[0].toVector(), d2 = yx[0].toVector();
  REQUIRE(d1.size() == d2.size());
  for (size_t i = 0; i < d1.size(); ++i) CHECK(std::abs(d1[i] + d2[i]) < 1e-6f);
  const std::vector<float> leftXY = xy[1].toVector(), leftXX = same[1].toVector();
  for (size_t i = 0; i < leftXY.size(); ++i) CHECK(std::abs(leftXY[i] - leftXX[i]) < 1e-6f);

  // Training on the stacked batch learns and repeats bit for bit.
  const MultiDataSet data = siameseData(8, 21);
  const double before = net.score(data);
  for (int i = 0; i < 30; ++i) net.fit(data);
  CHECK(net.score(data) < before);
  ComputationGraph again(conf);
  again.init();
  for (int i = 0; i < 30; ++i) again.fit(data);
  CHECK(again.params().toVector() == net.params().toVector());
}

TEST_CASE("StackVertex and UnstackVertex: gradient checks, failing on a wrong gradient") {
  const auto good = check(siamese(StackVertex(), UnstackVertex(0, 2)));
  INFO(good.report);
  CHECK(good.passed);
  CHECK(good.checked > 0);
  CHECK_FALSE(check(siamese(testing::CorruptedVertex<StackVertex>(), UnstackVertex(0, 2))).passed);
  CHECK_FALSE(check(siamese(StackVertex(), testing::CorruptedVertex<UnstackVertex>(0, 2))).passed);
}

TEST_CASE("StackVertex and UnstackVertex: typed errors") {
  auto builder = [] {
    return NeuralNetConfiguration::Builder().graphBuilder().addInputs("a", "b").setInputTypes(
        InputType::feedForward(4), InputType::feedForward(5));
  };
  refuse<ConfigError>(
      [&] { (void)builder().addVertex("s", StackVertex(), "a", "b").setOutputs("s").build(); },
      "vertex \"s\" (StackVertex)", "same shape");
  refuse<ConfigError>(
      [&] {
        (void)builder()
            .addVertex("u", UnstackVertex(2, 2), "a")
            .addVertex("m", MergeVertex(), "u", "b")
            .setOutputs("m")
            .build();
      },
      "vertex \"u\" (UnstackVertex)", "0 <= from < stackSize");
  refuse<ConfigError>(
      [&] {
        (void)builder()
            .addVertex("s", StackVertex(), "a", "a")
            .addVertex("m", MergeVertex(), "s", "b")
            .setOutputs("m")
            .build();
      },
      "vertex \"m\" (MergeVertex)", "input 0 (\"s\") has 2N and input 1 (\"b\") has N");

  // A minibatch the unstack cannot split evenly.
  ComputationGraph net(NeuralNetConfiguration::Builder()
                           .graphBuilder()
                           .addInputs("a")
                           .setInputTypes(InputType::feedForward(4))
                           .addVertex("half", UnstackVertex(0, 2), "a")
                           .setOutputs("half")
                           .build());
  net.init();
  CHECK(net.outputSingle(randomTensor(Shape{4, 4}, 1)).shape() == Shape{2, 4});
  refuse<ShapeError>(
      [&] {
        (void)net.outputSingle(randomTensor(Shape{3, 4}, 1));
      },
      "vertex \"half\"", "minibatch of 3");
}

TEST_CASE("StackVertex and UnstackVertex: JSON round trip") {
  const auto conf = siamese(StackVertex(), UnstackVertex(0, 2));
  const std::string json = conf.toJson();
  const ComputationGraphConfiguration back = ComputationGraphConfiguration::fromJson(json);
  CHECK(back == conf);
  CHECK(back.toJson() == json);
  CHECK(back.vertices[static_cast<size_t>(back.vertexIndex("shared"))].batchMultiplier == 2);
  std::string bad = json;
  const size_t at = bad.find("\"stackSize\": 2");
  REQUIRE(at != std::string::npos);
  bad.replace(at, 14, "\"stackSize\": -2");
  CHECK_THROWS_AS((void)ComputationGraphConfiguration::fromJson(bad), ConfigError);
}
