// How a network turns a backend's plan into the steps it runs (LayerSteps.h): planned steps run
// in place of the layers they cover, every other layer by itself, each layer exactly once; a plan
// whose steps overlap, come out of order or reach past the network is a BackendError.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <tuple>
#include <utility>
#include <vector>

#include "nn/multilayer/LayerSteps.h"

using namespace dl4cpp;

namespace {

using Layers = std::vector<std::unique_ptr<layers::RuntimeLayer>>;
using Steps = std::vector<std::unique_ptr<NetworkStep>>;

// A dense network of `count` layers, the last an output layer.
Layers denseLayers(int count) {
  auto builder = NeuralNetConfiguration::Builder().list();
  for (int i = 0; i + 1 < count; ++i) builder.layer(DenseLayer::Builder().nOut(4).build());
  builder.layer(OutputLayer::Builder(LossFunction::MSE).nOut(2).build());
  const MultiLayerConfiguration conf = builder.setInputType(InputType::feedForward(3)).build();
  Layers layers;
  for (const auto& layer : conf.layers) layers.push_back(layer->instantiate());
  return layers;
}

// A planned step that only records that it exists.
struct PlannedStep final : NetworkStep {
  using NetworkStep::NetworkStep;
  void forward(DeviceContext&, const LayerTensors&, const ForwardContext&) override {}
  void backward(DeviceContext&, const LayerTensors&, Tensor*) override {}
};

Steps plan(std::initializer_list<std::pair<int, int>> spans) {
  Steps steps;
  for (auto [first, count] : spans) steps.push_back(std::make_unique<PlannedStep>(first, count));
  return steps;
}

// (first, count, planned) of every step.
std::vector<std::tuple<int, int, bool>> shape(const Steps& steps) {
  std::vector<std::tuple<int, int, bool>> result;
  for (const auto& step : steps)
    result.emplace_back(step->first(), step->count(),
                        dynamic_cast<const PlannedStep*>(step.get()) != nullptr);
  return result;
}

}  // namespace

TEST_SUITE("nn/multilayer") {
  TEST_CASE("LayerSteps: planned steps replace the layers they cover, the rest run one by one") {
    const Layers layers = denseLayers(5);
    using Row = std::tuple<int, int, bool>;
    CHECK(shape(completePlan({}, layers)) ==
          std::vector<Row>{
              {0, 1, false}, {1, 1, false}, {2, 1, false}, {3, 1, false}, {4, 1, false}});
    CHECK(shape(completePlan(plan({{1, 2}}), layers)) ==
          std::vector<Row>{{0, 1, false}, {1, 2, true}, {3, 1, false}, {4, 1, false}});
    CHECK(shape(completePlan(plan({{0, 2}, {2, 1}, {4, 1}}), layers)) ==
          std::vector<Row>{{0, 2, true}, {2, 1, true}, {3, 1, false}, {4, 1, true}});
    CHECK(shape(completePlan(plan({{0, 5}}), layers)) == std::vector<Row>{{0, 5, true}});
  }

  TEST_CASE("LayerSteps: a plan with overlapping, unordered, empty or too long steps is refused") {
    const Layers layers = denseLayers(4);
    CHECK_THROWS_AS(completePlan(plan({{0, 2}, {1, 2}}), layers), BackendError);
    CHECK_THROWS_AS(completePlan(plan({{2, 1}, {0, 1}}), layers), BackendError);
    CHECK_THROWS_AS(completePlan(plan({{1, 0}}), layers), BackendError);
    CHECK_THROWS_AS(completePlan(plan({{3, 2}}), layers), BackendError);
    CHECK_THROWS_WITH_AS(completePlan(plan({{-1, 2}}), layers),
                         doctest::Contains("layers -1..0 of a network of 4 layers"), BackendError);
  }

  TEST_CASE("LayerSteps: a sequence's layers are read by the next, the last by the network") {
    const std::vector<LayerDescription> described = describeSequence(denseLayers(3));
    REQUIRE(described.size() == 3);
    CHECK(described[0].readers == std::vector<int>{1});
    CHECK(described[1].readers == std::vector<int>{2});
    CHECK(described[2].readers == std::vector<int>{LayerDescription::kNetwork});
    // Dense layers are nothing a backend recognises.
    for (const auto& d : described) CHECK(d.kind == LayerDescription::Kind::OTHER);
  }
}
