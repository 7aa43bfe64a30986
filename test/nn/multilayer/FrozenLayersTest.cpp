// Frozen layers (Layer::frozen): their parameters and running statistics never change, they run
// in inference mode, their backward pass is not run at all, and their status survives clone(),
// model files and JSON.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>

#include "TempDir.h"
#include "nn/transferlearning/FrozenNetworkTestUtil.h"

using namespace dl4cpp;
using testutil::batches;
using testutil::bitIdentical;
using testutil::range;
using testutil::values;

namespace {

// frozenTestNet()'s layout: layers 0 (dense, 56 parameters) and 1 (batch normalisation, 16) are
// the ones withFrozenLayers(..., 1) freezes; 215 parameters in all. Layer state: layer 1's running
// statistics [0, 16), layer 3's [16, 36).
constexpr int64_t kFrozenParams = 72, kParams = 215, kFrozenState = 16, kState = 36;

std::vector<float> head(const std::vector<float>& v, int64_t n) {
  return {v.begin(), v.begin() + n};
}
std::vector<float> tail(const std::vector<float>& v, int64_t from) {
  return {v.begin() + from, v.end()};
}

// conv 3x3 (IDENTITY: the CPU backend runs it fused with the pooling after it) -> max pool 2x2 ->
// conv 2x2 (RELU) -> max pool 2x2 -> dense 16 -> 8 (TANH) -> softmax 10, on 12x12 images, with
// gradient normalisation (work the profiler charges to each layer with parameters).
MultiLayerConfiguration convNet() {
  return NeuralNetConfiguration::Builder()
      .seed(3)
      .updater(Nesterovs(0.01, 0.9))
      .l2(1e-4)
      .gradientNormalization(GradientNormalization::RenormalizeL2PerLayer)
      .list()
      .layer(ConvolutionLayer::Builder(3, 3).nOut(4).activation(Activation::IDENTITY).build())
      .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build())
      .layer(ConvolutionLayer::Builder(2, 2).nOut(4).activation(Activation::RELU).build())
      .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build())
      .layer(DenseLayer::Builder().nOut(8).activation(Activation::TANH).build())
      .layer(OutputLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD)
                 .nOut(10)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::convolutionalFlat(12, 12, 1))
      .build();
}

DataSet imageBatch(uint64_t seed) {
  Random random(seed);
  Tensor features(Shape{8, 144}), labels(Shape{8, 10});
  for (int64_t i = 0; i < features.numel(); ++i)
    features.data()[i] = static_cast<float>(random.uniform(-1, 1));
  for (int64_t r = 0; r < 8; ++r)
    labels.data()[r * 10 + static_cast<int64_t>(random.nextU64() % 10)] = 1;
  return {features, labels};
}

}  // namespace

TEST_SUITE("nn/multilayer") {
  TEST_CASE("Frozen layers: parameters and running statistics stay bit-identical in training") {
    const MultiLayerNetwork original = testutil::pretrainedTestNet();
    MultiLayerNetwork model = testutil::withFrozenLayers(original, 1);
    REQUIRE(model.numFrozenLayers() == 2);
    REQUIRE(model.numFrozenParams() == kFrozenParams);
    REQUIRE(model.numParams() == kParams);
    REQUIRE(model.layerState().numel() == kState);
    const std::vector<float> params = values(model.params()), state = values(model.layerState());

    MultiLayerNetwork trainable = original.clone();  // the same network, nothing frozen
    for (const auto& batch : batches(12, 16, 5)) {
      model.fit(batch);
      trainable.fit(batch);
    }
    CHECK(bitIdentical(range(model.params(), 0, kFrozenParams), head(params, kFrozenParams)));
    CHECK(bitIdentical(range(model.layerState(), 0, kFrozenState), head(state, kFrozenState)));
    // The rest learned, and without freezing the same layers would have moved too.
    CHECK_FALSE(
        bitIdentical(range(model.params(), kFrozenParams, kParams), tail(params, kFrozenParams)));
    CHECK_FALSE(
        bitIdentical(range(model.layerState(), kFrozenState, kState), tail(state, kFrozenState)));
    CHECK_FALSE(
        bitIdentical(range(trainable.params(), 0, kFrozenParams), head(params, kFrozenParams)));
    CHECK_FALSE(
        bitIdentical(range(trainable.layerState(), 0, kFrozenState), head(state, kFrozenState)));

    // Their gradient is never computed (zero, as DL4J reports it) and they have no updater state
    // (Adam: two values per trainable parameter).
    const std::vector<float> gradient = range(model.gradient(), 0, kFrozenParams);
    CHECK(std::all_of(gradient.begin(), gradient.end(), [](float g) { return g == 0; }));
    CHECK(model.updaterState().numel() == 2 * (kParams - kFrozenParams));

    // The score's regularisation term counts the trainable weights only: 0.5 * (l2 + weight
    // decay) * ||W||^2 of layer 2's W [72, 152) and the output layer's W [182, 212).
    const std::vector<float> p = values(model.params());
    double squares = 0;
    for (const auto& [begin, end] : {std::pair{72, 152}, std::pair{182, 212}})
      for (int i = begin; i < end; ++i) squares += double(p[size_t(i)]) * p[size_t(i)];
    CHECK(model.calcRegularizationScore() == doctest::Approx(0.5 * 2e-3 * squares).epsilon(1e-5));
  }

  TEST_CASE("Frozen layers run in inference mode: no dropout, batch norm on running statistics") {
    const MultiLayerNetwork original = testutil::pretrainedTestNet();
    // Everything but the output layer frozen: dense with input dropout, batch norm, dense, batch
    // norm. The output layer behaves alike in both modes.
    MultiLayerNetwork model = testutil::withFrozenLayers(original, 3);
    const Tensor features = batches(1, 16, 9).front().features;
    const std::vector<float> state = values(model.layerState());
    CHECK(
        bitIdentical(values(model.output(features, true)), values(model.output(features, false))));
    CHECK(bitIdentical(values(model.layerState()), state));
    for (const auto& batch : batches(3, 16, 9)) model.fit(batch);
    CHECK(bitIdentical(values(model.layerState()), state));
    // The same layers unfrozen behave differently in training mode.
    MultiLayerNetwork trainable = original.clone();
    CHECK_FALSE(bitIdentical(values(trainable.output(features, true)),
                             values(trainable.output(features, false))));
  }

  TEST_CASE("Frozen layers run no backward pass: the profiler records no gradient or update work") {
    MultiLayerNetwork original(convNet(), Device::cpu(), 1);
    original.init();
    // Layers 0 to 2 frozen; layer 3 (pooling, no parameters) is not, but lies below the lowest
    // trainable layer (4): it needs no gradient either.
    MultiLayerNetwork frozen = testutil::withFrozenLayers(original, 2);
    MultiLayerNetwork trainable = original.clone();
    auto profile = [](MultiLayerNetwork& model) {
      auto profiler = std::make_shared<LayerProfiler>();
      model.setProfiler(profiler);
      for (uint64_t s = 0; s < 3; ++s) model.fit(imageBatch(s));
      return profiler;
    };
    const auto f = profile(frozen), t = profile(trainable);
    auto calls = [](const LayerProfiler& p, int layer, ProfilePhase phase) {
      return p.totals(layer, phase).calls;
    };
    for (int layer = 0; layer <= 3; ++layer) {
      INFO("layer " << layer);
      // Forward as ever (each pooling runs inside its convolution's fused step).
      if (layer != 1 && layer != 3) CHECK(calls(*f, layer, ProfilePhase::FORWARD) > 0);
      // No gradient, gradient normalisation, regularisation or updater work (OTHER: the
      // normalisation's scaling).
      for (ProfilePhase phase :
           {ProfilePhase::ACTIVATION_BACKWARD, ProfilePhase::BACKWARD_DATA,
            ProfilePhase::BACKWARD_WEIGHTS, ProfilePhase::UPDATER, ProfilePhase::OTHER})
        CHECK(calls(*f, layer, phase) == 0);
    }
    // Without freezing, the same layers have backward and normalisation work (the first
    // pooling's is charged to the convolution it runs fused with; the second, below a layer
    // that takes an input gradient, runs its own backward op).
    CHECK(calls(*t, 0, ProfilePhase::BACKWARD_WEIGHTS) > 0);
    CHECK(calls(*t, 0, ProfilePhase::OTHER) > 0);
    CHECK(calls(*t, 2, ProfilePhase::BACKWARD_WEIGHTS) > 0);
    CHECK(calls(*t, 2, ProfilePhase::BACKWARD_DATA) > 0);
    CHECK(calls(*t, 3, ProfilePhase::BACKWARD_DATA) > 0);
    // The lowest trainable layer computes its parameter gradients but no input gradient; above
    // it, everything runs as without freezing.
    CHECK(calls(*f, 4, ProfilePhase::BACKWARD_WEIGHTS) > 0);
    CHECK(calls(*f, 4, ProfilePhase::BACKWARD_DATA) == 0);
    CHECK(calls(*t, 4, ProfilePhase::BACKWARD_DATA) > 0);
    for (int layer = 4; layer <= 5; ++layer)
      for (ProfilePhase phase : {ProfilePhase::BACKWARD_WEIGHTS, ProfilePhase::UPDATER})
        CHECK(calls(*f, layer, phase) == calls(*t, layer, phase));
  }

  TEST_CASE("Frozen layers pass no gradient: asking for the input gradient is a ConfigError") {
    MultiLayerNetwork model = testutil::withFrozenLayers(testutil::pretrainedTestNet(), 1);
    const std::vector<float> params = values(model.params());
    const DataSet batch = batches(1, 4, 2).front();
    CHECK_THROWS_WITH_AS(model.computeGradientAndScore(batch, true),
                         doctest::Contains("layers 0 to 1 are frozen"), ConfigError);
    CHECK(bitIdentical(values(model.params()), params));
    CHECK_NOTHROW(model.computeGradientAndScore(batch, false));
  }

  TEST_CASE(
      "Frozen status survives clone(), model files and JSON, and files without it load trainable") {
    MultiLayerNetwork model = testutil::withFrozenLayers(testutil::pretrainedTestNet(), 1);
    for (const auto& batch : batches(2, 16, 4)) model.fit(batch);
    const std::vector<float> frozenParams = range(model.params(), 0, kFrozenParams);

    const std::string json = model.getConfiguration().toJson();
    CHECK(json.find("\"frozen\": true") != std::string::npos);
    CHECK(MultiLayerConfiguration::fromJson(json) == model.getConfiguration());
    // A file without updater state (whose size would tell frozen layers apart) loads frozen too.
    testutil::TempDir dir;
    model.save(dir / "no-updater.dl4cpp", false);
    CHECK(MultiLayerNetwork::load(dir / "no-updater.dl4cpp").numFrozenLayers() == 2);

    model.save(dir / "frozen.dl4cpp");
    MultiLayerNetwork loaded = MultiLayerNetwork::load(dir / "frozen.dl4cpp");
    MultiLayerNetwork cloned = model.clone();
    for (MultiLayerNetwork* copy : {&loaded, &cloned}) {
      CHECK(copy->getConfiguration() == model.getConfiguration());
      CHECK(copy->numFrozenLayers() == 2);
      CHECK(bitIdentical(values(copy->params()), values(model.params())));
      CHECK(bitIdentical(values(copy->updaterState()), values(model.updaterState())));
      CHECK(bitIdentical(values(copy->layerState()), values(model.layerState())));
      for (const auto& batch : batches(3, 16, 8)) copy->fit(batch);
      CHECK(bitIdentical(range(copy->params(), 0, kFrozenParams), frozenParams));
    }

    // A configuration written before frozen layers existed has no such field: every layer trains.
    const std::string old =
        std::regex_replace(json, std::regex("\\s*\"frozen\": (true|false),"), "");
    REQUIRE(old.find("frozen") == std::string::npos);
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(old);
    CHECK(std::none_of(parsed.layers.begin(), parsed.layers.end(),
                       [](const auto& layer) { return layer->frozen; }));
    MultiLayerNetwork unfrozen(parsed);
    unfrozen.init();
    CHECK(unfrozen.numFrozenLayers() == 0);
  }
}
