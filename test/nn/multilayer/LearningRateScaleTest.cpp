// MultiLayerNetwork's learning-rate multiplier (what ParallelWrapper's scaling sets on its
// replicas) and getLearningRate().
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cstring>

using namespace dl4cpp;

namespace {

MultiLayerNetwork denseNet(const UpdaterParams& updater) {
  MultiLayerNetwork model(
      NeuralNetConfiguration::Builder()
          .seed(4)
          .updater(updater)
          .list()
          .layer(DenseLayer::Builder().nIn(5).nOut(8).activation(Activation::TANH).build())
          .layer(ActivationLayer::Builder().activation(Activation::RELU).build())
          .layer(OutputLayer::Builder(LossFunction::MCXENT)
                     .nOut(3)
                     .activation(Activation::SOFTMAX)
                     .build())
          .build());
  model.init();
  return model;
}

DataSet batch() {
  Tensor f(Shape{6, 5}), l(Shape{6, 3});
  for (int64_t i = 0; i < f.numel(); ++i)
    f.data()[i] = static_cast<float>((i * 7) % 11) / 11.0f - 0.4f;
  for (int64_t r = 0; r < 6; ++r) l.data()[r * 3 + r % 3] = 1;
  return {f, l};
}

bool sameParams(const MultiLayerNetwork& a, const MultiLayerNetwork& b) {
  const auto x = a.params().toVector(), y = b.params().toVector();
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE(
      "MultiLayerNetwork: learningRateScale multiplies the rate on every step, never compounding") {
    MultiLayerNetwork scaled = denseNet(Sgd(0.05));
    MultiLayerNetwork doubled = denseNet(Sgd(0.05 * 2.0));
    MultiLayerNetwork plain = denseNet(Sgd(0.05));
    scaled.setLearningRateScale(2.0);
    for (int i = 0; i < 4; ++i)
      for (MultiLayerNetwork* m : {&scaled, &doubled, &plain}) m->fit(batch());
    CHECK(sameParams(scaled, doubled));
    CHECK_FALSE(sameParams(scaled, plain));
    CHECK(scaled.clone().learningRateScale() == 2.0);
  }

  TEST_CASE(
      "MultiLayerNetwork: getLearningRate is the schedule's value at the counts, times the scale") {
    MultiLayerNetwork model =
        denseNet(Nesterovs(StepSchedule(ScheduleType::ITERATION, 0.1, 0.5, 2), 0.9));
    CHECK(*model.getLearningRate(0) == doctest::Approx(0.1));
    model.setIterationCount(5);  // floor(5 / 2) = 2 drops
    CHECK(*model.getLearningRate(0) == doctest::Approx(0.025));
    model.setLearningRateScale(4);
    CHECK(*model.getLearningRate(2) == doctest::Approx(0.1));
    CHECK_FALSE(model.getLearningRate(1).has_value());  // an activation layer has no parameters
    CHECK_THROWS_WITH_AS(model.getLearningRate(3), doctest::Contains("no layer 3"), ConfigError);
    CHECK_THROWS_WITH_AS(model.getLearningRate(-1), doctest::Contains("no layer -1"), ConfigError);
  }

  TEST_CASE("MultiLayerNetwork: a frozen layer has no learning rate, and the scale leaves it be") {
    MultiLayerNetwork scaled =
        TransferLearning::Builder(denseNet(Sgd(0.05))).setFeatureExtractor(0).build();
    MultiLayerNetwork doubled =
        TransferLearning::Builder(denseNet(Sgd(0.05)))
            .fineTuneConfiguration(FineTuneConfiguration::Builder().updater(Sgd(0.1)).build())
            .setFeatureExtractor(0)
            .build();
    scaled.setLearningRateScale(2.0);
    CHECK_FALSE(scaled.getLearningRate(0).has_value());
    CHECK(*scaled.getLearningRate(2) == doctest::Approx(0.1));
    REQUIRE(scaled.numFrozenParams() > 0);
    const auto frozenPart = [&] {
      auto p = scaled.params().toVector();
      p.resize(static_cast<size_t>(scaled.numFrozenParams()));
      return p;
    };
    const auto frozenBefore = frozenPart();
    for (int i = 0; i < 3; ++i)
      for (MultiLayerNetwork* m : {&scaled, &doubled}) m->fit(batch());
    CHECK(sameParams(scaled, doubled));
    CHECK(frozenPart() == frozenBefore);
  }

  TEST_CASE(
      "MultiLayerNetwork: a learning-rate scale that is not finite and positive is a ConfigError") {
    MultiLayerNetwork model = denseNet(Sgd(0.1));
    for (double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::quiet_NaN()}) {
      CAPTURE(bad);
      CHECK_THROWS_WITH_AS(model.setLearningRateScale(bad), doctest::Contains("scale"),
                           ConfigError);
    }
    CHECK(model.learningRateScale() == 1.0);
  }
}
