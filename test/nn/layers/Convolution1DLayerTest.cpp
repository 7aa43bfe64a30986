// Convolution1DLayer and Subsampling1DLayer: the 2-D layers on (N, C, T, 1), exactly; gradient
// checks with and without masks (each failing on a wrong gradient through GradientCheckUtil's
// own tests); padded sequences answer as alone; the length rules as typed errors; JSON and the
// registry.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;
using testutil::perStepSoftmax;

namespace {

MultiLayerNetwork initialized(const MultiLayerConfiguration& conf) {
  MultiLayerNetwork net(conf);
  net.init();
  return net;
}

// Sequences of 3 features and `steps`, example 1 two steps shorter (its padding 7.0), masked.
DataSet padded(int64_t steps, uint64_t seed) {
  DataSet d = testutil::randomSequences(3, 3, steps, 3, seed);
  Tensor mask(Shape{3, steps});
  mask.fill(1);
  for (int64_t s = steps - 2; s < steps; ++s) {
    mask.data()[steps + s] = 0;
    for (int64_t k = 0; k < 3; ++k) d.features.data()[(3 + k) * steps + s] = 7.0f;
  }
  d.featuresMask = mask;
  d.labelsMask = mask.clone();
  return d;
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("Convolution1DLayer and Subsampling1DLayer compute the 2-D layers on (N, C, T, 1)") {
    auto builder = [] { return NeuralNetConfiguration::Builder().seed(3); };
    MultiLayerNetwork oneD = initialized(
        builder()
            .list()
            .layer(
                Convolution1DLayer::Builder(3, 1, 1).nOut(4).activation(Activation::TANH).build())
            .layer(Subsampling1DLayer::Builder(PoolingType::MAX, 2, 2).build())
            .layer(GlobalPoolingLayer::Builder(PoolingType::AVG).build())
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(2)
                       .activation(Activation::SOFTMAX)
                       .build())
            .setInputType(InputType::recurrent(3, 8))
            .build());
    MultiLayerNetwork twoD =
        initialized(builder()
                        .list()
                        .layer(ConvolutionLayer::Builder(3, 1, 1, 1, 1, 0)
                                   .nOut(4)
                                   .activation(Activation::TANH)
                                   .build())
                        .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 1, 2, 1).build())
                        .layer(GlobalPoolingLayer::Builder(PoolingType::AVG).build())
                        .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                   .nOut(2)
                                   .activation(Activation::SOFTMAX)
                                   .build())
                        .setInputType(InputType::convolutional(8, 1, 3))
                        .build());
    REQUIRE(oneD.params().toVector() == twoD.params().toVector());
    CHECK(oneD.getConfiguration().layerOutputTypes[0].toString() ==
          InputType::recurrent(4, 8).toString());
    CHECK(oneD.getConfiguration().layerOutputTypes[1].toString() ==
          InputType::recurrent(4, 4).toString());
    const Tensor x = testutil::randomSequences(5, 3, 8, 2, 11).features;
    CHECK(oneD.output(x).toVector() == twoD.output(x.reshape(Shape{5, 3, 8, 1})).toVector());
    const DataSet batch(x, Tensor::fromVector(Shape{5, 2}, {1, 0, 0, 1, 1, 0, 0, 1, 1, 0}));
    oneD.fit(batch);
    twoD.fit(DataSet(x.reshape(Shape{5, 3, 8, 1}), batch.labels));
    CHECK(oneD.params().toVector() == twoD.params().toVector());
  }

  TEST_CASE(
      "Convolution1DLayer: gradient checks, fixed length and masked sequences of any length") {
    MultiLayerNetwork fixed = initialized(
        NeuralNetConfiguration::Builder()
            .seed(5)
            .list()
            .layer(Convolution1DLayer::Builder(3).nOut(4).activation(Activation::TANH).build())
            .layer(Subsampling1DLayer::Builder(PoolingType::AVG, 2, 2).build())
            .layer(LSTM::Builder().nOut(3).build())
            .layer(perStepSoftmax())
            .setInputType(InputType::recurrent(3, 8))
            .build());
    const auto plain = GradientCheckUtil::checkGradients(fixed, [] {
      DataSet d = testutil::randomSequences(2, 3, 8, 3, 4);
      return DataSet(d.features, testutil::randomSequences(2, 3, 3, 3, 5).labels);
    }());
    INFO(plain.report);
    CHECK(plain.passed);

    MultiLayerNetwork any = initialized(
        NeuralNetConfiguration::Builder()
            .seed(6)
            .convolutionMode(ConvolutionMode::Same)
            .list()
            .layer(Convolution1DLayer::Builder(3).nOut(4).activation(Activation::TANH).build())
            .layer(Subsampling1DLayer::Builder(PoolingType::MAX, 2, 1).build())
            .layer(LSTM::Builder().nOut(3).build())
            .layer(perStepSoftmax())
            .setInputType(InputType::recurrent(3))
            .build());
    const auto masked = GradientCheckUtil::checkGradients(any, padded(6, 7));
    INFO(masked.report);
    CHECK(masked.passed);
  }

  TEST_CASE("Convolution1DLayer: a padded sequence answers as it does alone") {
    MultiLayerNetwork net = initialized(NeuralNetConfiguration::Builder()
                                            .seed(8)
                                            .list()
                                            .layer(Convolution1DLayer::Builder(3)
                                                       .convolutionMode(ConvolutionMode::Same)
                                                       .nOut(4)
                                                       .activation(Activation::RELU)
                                                       .build())
                                            .layer(LSTM::Builder().nOut(3).build())
                                            .layer(perStepSoftmax())
                                            .setInputType(InputType::recurrent(3))
                                            .build());
    const DataSet batch = padded(7, 9);
    const Tensor out = net.output(batch.features, false, batch.featuresMask);
    Tensor alone(Shape{1, 3, 5});
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t s = 0; s < 5; ++s)
        alone.data()[k * 5 + s] = batch.features.data()[(3 + k) * 7 + s];
    const Tensor single = net.output(alone);
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t s = 0; s < 5; ++s)
        CHECK(out.data()[(3 + c) * 7 + s] ==
              doctest::Approx(single.data()[c * 5 + s]).epsilon(1e-5));
  }

  TEST_CASE("Convolution1DLayer and Subsampling1DLayer: what does not fit is a typed error") {
    auto build = [](const Layer& layer, const InputType& input) {
      return NeuralNetConfiguration::Builder()
          .list()
          .layer(layer)
          .layer(perStepSoftmax())
          .setInputType(input)
          .build();
    };
    const auto conv = Convolution1DLayer::Builder(3).nOut(2).build();
    CHECK_THROWS_WITH_AS(build(conv, InputType::feedForward(4)),
                         doctest::Contains("needs sequences but receives FeedForward(4)"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(build(conv, InputType::recurrent(4)),
                         doctest::Contains("sequences of any length need a window that keeps"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(
        build(Subsampling1DLayer::Builder(PoolingType::MAX, 2, 2).build(), InputType::recurrent(4)),
        doctest::Contains("sequences of any length need a window that keeps"), ConfigError);
    CHECK_THROWS_AS(
        build(Convolution1DLayer::Builder(9).nOut(2).build(), InputType::recurrent(4, 5)),
        ConfigError);  // the kernel does not fit
    // A fixed length that changes cannot follow a mask.
    MultiLayerNetwork shrinking = initialized(build(conv, InputType::recurrent(3, 6)));
    const DataSet batch = padded(6, 3);
    CHECK_THROWS_WITH_AS(shrinking.output(batch.features, false, batch.featuresMask),
                         doctest::Contains("turns sequences of 6 steps into 4"), ShapeError);
  }

  TEST_CASE("Convolution1DLayer and Subsampling1DLayer: JSON and model files round-trip") {
    const auto conf = NeuralNetConfiguration::Builder()
                          .seed(2)
                          .list()
                          .layer(Convolution1DLayer::Builder(2, 1)
                                     .dilation(2)
                                     .convolutionMode(ConvolutionMode::Same)
                                     .nOut(3)
                                     .build())
                          .layer(Subsampling1DLayer::Builder(PoolingType::AVG, 3, 1)
                                     .convolutionMode(ConvolutionMode::Same)
                                     .build())
                          .layer(perStepSoftmax(2))
                          .setInputType(InputType::recurrent(4))
                          .build();
    const auto restored = MultiLayerConfiguration::fromJson(conf.toJson());
    CHECK(restored == conf);
    CHECK(restored.layers[0]->typeName() == "Convolution1DLayer");
    CHECK(restored.layers[1]->typeName() == "Subsampling1DLayer");
    MultiLayerNetwork a = initialized(conf), b = initialized(restored);
    const Tensor x = testutil::randomSequences(2, 4, 5, 2, 3).features;
    CHECK(a.output(x).toVector() == b.output(x).toVector());
  }
}
