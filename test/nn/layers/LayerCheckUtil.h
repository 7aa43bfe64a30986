#pragma once
// Helpers for the tests of layers that networks put between others: configuration errors, random
// image data, and the gradient check of a layer in a small network, shown to fail when the
// layer's gradients are 10% wrong (test/nn/gradientcheck/CorruptedGradientLayer.h).
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>

#include "nn/gradientcheck/CorruptedGradientLayer.h"

namespace testutil {

// The message of the ConfigError that building `list` throws (a test failure if none).
inline std::string configErrorOf(const dl4cpp::NeuralNetConfiguration::ListBuilder& list) {
  try {
    list.build();
  } catch (const dl4cpp::ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError");
  return {};
}

// Checks that building `list` throws a ConfigError whose message holds every one of `needles`.
inline void expectConfigError(const dl4cpp::NeuralNetConfiguration::ListBuilder& list,
                              std::initializer_list<std::string> needles) {
  const std::string message = configErrorOf(list);
  INFO("message: " << message);
  for (const std::string& needle : needles) {
    CAPTURE(needle);
    CHECK(message.find(needle) != std::string::npos);
  }
}

// n examples of `input`'s values uniform in [-1, 1) (no exact zeros, ties unlikely) with one-hot
// labels over `classes`.
inline dl4cpp::DataSet randomImages(int64_t n, const dl4cpp::InputType& input, int64_t classes,
                                    uint64_t seed) {
  dl4cpp::Random random(seed);
  dl4cpp::Tensor features(dl4cpp::Shape{n, input.flatSize()});
  for (int64_t i = 0; i < features.numel(); ++i)
    features.data()[i] = static_cast<float>(random.uniform(-1.0, 1.0));
  dl4cpp::Tensor labels(dl4cpp::Shape{n, classes});
  for (int64_t r = 0; r < n; ++r)
    labels.data()[r * classes +
                  static_cast<int64_t>(random.nextU64() % static_cast<uint64_t>(classes))] = 1;
  return {features, labels};
}

// input -> `layer` -> softmax OutputLayer over 3 classes, initialised.
inline dl4cpp::MultiLayerNetwork networkAround(const dl4cpp::Layer& layer,
                                               const dl4cpp::InputType& input) {
  using namespace dl4cpp;
  MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                            .seed(12)
                            .activation(Activation::TANH)
                            .list()
                            .layer(layer)
                            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                       .nOut(3)
                                       .activation(Activation::SOFTMAX)
                                       .build())
                            .setInputType(input)
                            .build());
  net.init();
  return net;
}

// The gradient check of `layer` in networkAround() on two examples: passes on every parameter and
// input, and fails on at least `minFailures` inputs (those whose gradient is not tiny) when the
// layer's gradients are corrupted.
inline void checkGradientsAndCorruption(const dl4cpp::Layer& layer, const dl4cpp::InputType& input,
                                        int64_t minFailures, uint64_t seed,
                                        const dl4cpp::GradientCheckUtil::Options& options = {}) {
  using namespace dl4cpp;
  const DataSet data = randomImages(2, input, 3, seed);
  MultiLayerNetwork good = networkAround(layer, input);
  const auto passed = GradientCheckUtil::checkGradients(good, data, options);
  INFO(passed.report);
  CHECK(passed.passed);
  CHECK(passed.checked == good.numParams() + data.features.numel());

  MultiLayerNetwork bad = networkAround(testing::corruptGradients(layer), input);
  const auto failed = GradientCheckUtil::checkGradients(bad, data, options);
  CHECK_FALSE(failed.passed);
  CHECK(failed.failed >= minFailures);
}

}  // namespace testutil
