// Numerical gradient checks (central differences) of every layer, activation and loss, through
// GradientCheckUtil, and a proof that the checker fails on a wrong gradient.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <string>

#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/transferlearning/FrozenNetworkTestUtil.h"

using namespace dl4cpp;

namespace {

// Inputs away from kinks (no exact zeros, no ties) and the labels `loss` takes: one-hot for the
// cross-entropies, -1 or +1 for the hinges, rows summing to 1 for KL_DIVERGENCE, values in (0, 1)
// otherwise.
DataSet randomData(int64_t n, int64_t inputs, int64_t outputs, LossFunction loss, uint64_t seed) {
  Random random(seed);
  Tensor features(Shape{n, inputs});
  for (int64_t i = 0; i < features.numel(); ++i)
    features.data()[i] = static_cast<float>(random.uniform(-1.0, 1.0));
  Tensor labels(Shape{n, outputs});
  for (int64_t r = 0; r < n; ++r) {
    float* row = labels.data() + r * outputs;
    switch (loss) {
      case LossFunction::NEGATIVELOGLIKELIHOOD:
      case LossFunction::MCXENT:
        row[static_cast<int64_t>(random.nextU64() % static_cast<uint64_t>(outputs))] = 1;
        break;
      case LossFunction::HINGE:
      case LossFunction::SQUARED_HINGE:
        for (int64_t c = 0; c < outputs; ++c) row[c] = random.nextDouble() < 0.5 ? -1.0f : 1.0f;
        break;
      case LossFunction::KL_DIVERGENCE: {
        float sum = 0;
        for (int64_t c = 0; c < outputs; ++c) sum += row[c] = float(random.uniform(0.05, 1.0));
        for (int64_t c = 0; c < outputs; ++c) row[c] /= sum;
        break;
      }
      default:
        for (int64_t c = 0; c < outputs; ++c) row[c] = float(random.uniform(0.05, 0.95));
    }
  }
  return {features, labels};
}

// The activation each loss is used with (OutputLayer.h).
Activation lossActivation(LossFunction loss) {
  switch (loss) {
    case LossFunction::NEGATIVELOGLIKELIHOOD:
    case LossFunction::MCXENT:
    case LossFunction::KL_DIVERGENCE:
      return Activation::SOFTMAX;
    case LossFunction::XENT:
      return Activation::SIGMOID;
    default:
      return Activation::IDENTITY;
  }
}

// 3 inputs -> dense (4 units, tanh) -> `output`, initialised.
MultiLayerNetwork beforeOutput(const OutputLayer& output) {
  MultiLayerNetwork model(
      NeuralNetConfiguration::Builder()
          .seed(3)
          .list()
          .layer(DenseLayer::Builder().nIn(3).nOut(4).activation(Activation::TANH).build())
          .layer(output)
          .build());
  model.init();
  return model;
}

void requirePass(MultiLayerNetwork& model, const DataSet& data,
                 const GradientCheckUtil::Options& options = {}) {
  const auto result = GradientCheckUtil::checkGradients(model, data, options);
  INFO(result.report);
  CHECK(result.passed);
  CHECK(result.checked ==
        model.numParams() + (options.checkInputGradient ? data.features.numel() : 0));
}

// The output layer most checks end with: 3 classes, softmax, MCXENT.
OutputLayer softmaxOutput() {
  return OutputLayer::Builder(LossFunction::MCXENT).nOut(3).activation(Activation::SOFTMAX).build();
}

// 4 inputs -> dense (5 units, identity) -> `layer` -> softmaxOutput(), initialised.
MultiLayerNetwork afterDense(const Layer& layer, uint64_t seed) {
  MultiLayerNetwork model(
      NeuralNetConfiguration::Builder()
          .seed(seed)
          .list()
          .layer(DenseLayer::Builder().nOut(5).activation(Activation::IDENTITY).build())
          .layer(layer)
          .layer(softmaxOutput())
          .setInputType(InputType::feedForward(4))
          .build());
  model.init();
  return model;
}

}  // namespace

TEST_SUITE("nn/gradientcheck") {
  TEST_CASE("GradientCheck: dense layer with every activation") {
    for (const auto& [act, name] : kActivationNames) {
      const std::string kindName = name;
      INFO("activation " << kindName);
      auto conf = NeuralNetConfiguration::Builder()
                      .seed(42)
                      .updater(Sgd(0.1))
                      .list()
                      .layer(DenseLayer::Builder().nIn(4).nOut(5).activation(act).build())
                      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                 .nOut(3)
                                 .activation(Activation::SOFTMAX)
                                 .build())
                      .build();
      MultiLayerNetwork model(conf);
      model.init();
      requirePass(model, randomData(3, 4, 3, LossFunction::MCXENT, 7));
    }
  }

  TEST_CASE("GradientCheck: activations that read their input, in convolution and output layers") {
    // Each layer keeps its pre-activation for the backward pass (layers::LayerActivation); the
    // output layer's loss reads it too.
    for (Activation act :
         {Activation::GELU, Activation::GELU_PRECISE, Activation::SWISH, Activation::SOFTPLUS}) {
      INFO("activation " << toString(act));
      auto conf =
          NeuralNetConfiguration::Builder()
              .seed(8)
              .list()
              .layer(ConvolutionLayer::Builder(3, 3).nOut(3).activation(act).build())
              .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build())
              .layer(OutputLayer::Builder(LossFunction::MSE).nOut(3).activation(act).build())
              .setInputType(InputType::convolutionalFlat(6, 6, 2))
              .build();
      MultiLayerNetwork model(conf);
      model.init();
      GradientCheckUtil::Options options;
      options.epsilon = 1e-3;  // MAX pooling's arg-max flips sooner than the default step allows
      requirePass(model, randomData(2, 6 * 6 * 2, 3, LossFunction::MSE, 19), options);
    }
  }

  TEST_CASE("GradientCheck: ActivationLayer with every activation, on rows and on images") {
    for (const auto& [act, name] : kActivationNames) {
      const std::string kindName = name;
      INFO("activation " << kindName);
      MultiLayerNetwork model = afterDense(ActivationLayer::Builder(act).build(), 12);
      requirePass(model, randomData(3, 4, 3, LossFunction::MCXENT, 23));
    }
    // First on images (the network's input gradient through it), then between a convolution and
    // its pooling.
    auto conf =
        NeuralNetConfiguration::Builder()
            .seed(13)
            .list()
            .layer(ActivationLayer::Builder(Activation::SOFTMAX).build())
            .layer(ConvolutionLayer::Builder(2, 2).nOut(3).activation(Activation::IDENTITY).build())
            .layer(ActivationLayer::Builder(Activation::GELU).build())
            .layer(ActivationLayer::Builder(Activation::LOGSOFTMAX).build())
            .layer(SubsamplingLayer::Builder(PoolingType::AVG, 2, 2, 2, 2).build())
            .layer(softmaxOutput())
            .setInputType(InputType::convolutional(5, 5, 2))
            .build();
    MultiLayerNetwork model(conf);
    model.init();
    requirePass(model, randomData(2, 5 * 5 * 2, 3, LossFunction::MCXENT, 29));
  }

  TEST_CASE("GradientCheck: every loss of the output layer") {
    for (const auto& [loss, name] : kLossNames) {
      const std::string lossName = name;
      INFO("loss " << lossName);
      MultiLayerNetwork model =
          beforeOutput(OutputLayer::Builder(loss).nOut(3).activation(lossActivation(loss)).build());
      requirePass(model, randomData(4, 3, 3, loss, 11));
    }
  }

  TEST_CASE("GradientCheck: the checks of the new losses fail when the loss gradient is wrong") {
    for (LossFunction loss :
         {LossFunction::MEAN_ABSOLUTE_ERROR, LossFunction::L1, LossFunction::L2,
          LossFunction::HINGE, LossFunction::SQUARED_HINGE, LossFunction::KL_DIVERGENCE}) {
      INFO("loss " << toString(loss));
      const OutputLayer output =
          OutputLayer::Builder(loss).nOut(3).activation(lossActivation(loss)).build();
      const DataSet data = randomData(4, 3, 3, loss, 11);
      MultiLayerNetwork bad = beforeOutput(testing::corruptLossGradients(output));
      const auto result = GradientCheckUtil::checkGradients(bad, data);
      CHECK_FALSE(result.passed);
      CHECK(result.failed >= 20);  // of the 31 parameters and 12 inputs (tiny gradients may pass)
    }
  }

  TEST_CASE("GradientCheck: convolution (Truncate, Same, stride 2) and both poolings") {
    for (ConvolutionMode mode : {ConvolutionMode::Truncate, ConvolutionMode::Same}) {
      for (PoolingType pooling : {PoolingType::MAX, PoolingType::AVG}) {
        INFO("mode " << toString(mode) << ", pooling " << toString(pooling));
        auto conf =
            NeuralNetConfiguration::Builder()
                .seed(5)
                .convolutionMode(mode)
                .list()
                .layer(ConvolutionLayer::Builder(3, 3).nOut(3).activation(Activation::TANH).build())
                .layer(SubsamplingLayer::Builder(pooling, 2, 2, 2, 2).build())
                .layer(ConvolutionLayer::Builder(2, 2, 2, 2)
                           .nOut(2)
                           .activation(Activation::SIGMOID)
                           .build())
                .layer(OutputLayer::Builder(LossFunction::MCXENT)
                           .nOut(3)
                           .activation(Activation::SOFTMAX)
                           .build())
                .setInputType(InputType::convolutionalFlat(7, 7, 2))
                .build();
        MultiLayerNetwork model(conf);
        model.init();
        // MAX: a smaller step than the default, as three stacked windows make its arg-max flip
        // sooner (a step of 3e-3 crosses a kink on this data).
        GradientCheckUtil::Options options;
        if (pooling == PoolingType::MAX) options.epsilon = 1e-3;
        requirePass(model, randomData(2, 7 * 7 * 2, 3, LossFunction::MCXENT, 13), options);
      }
    }
  }

  TEST_CASE("GradientCheck: identity convolutions feeding MAX pooling (fused pairs)") {
    // Both convolutions run their pooling layer inside their own forward pass. The first one's
    // weight gradient comes from the pooled gradient directly when no input gradient is asked
    // for, and through the pooling layer's backward pass when one is; the second's always does.
    // 11x11 inputs: the first convolution's 9x9 output takes the weight-gradient kernel for few
    // input channels, which is the one the CPU backend fuses (8-wide rows would take another).
    for (bool inputGradient : {false, true}) {
      INFO("input gradient " << inputGradient);
      auto conf =
          NeuralNetConfiguration::Builder()
              .seed(21)
              .list()
              .layer(
                  ConvolutionLayer::Builder(3, 3).nOut(3).activation(Activation::IDENTITY).build())
              .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build())
              .layer(
                  ConvolutionLayer::Builder(2, 2).nOut(4).activation(Activation::IDENTITY).build())
              .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build())
              .layer(OutputLayer::Builder(LossFunction::MCXENT)
                         .nOut(3)
                         .activation(Activation::SOFTMAX)
                         .build())
              .setInputType(InputType::convolutionalFlat(11, 11, 1))
              .build();
      MultiLayerNetwork model(conf);
      model.init();
      GradientCheckUtil::Options options;
      // MAX pooling's arg-max flips sooner than the default step allows.
      options.epsilon = 1e-3;
      options.checkInputGradient = inputGradient;
      requirePass(model, randomData(2, 11 * 11, 3, LossFunction::MCXENT, 29), options);
    }
  }

  TEST_CASE("GradientCheck: convolutions with many input channels (channels-last kernels)") {
    auto conf =
        NeuralNetConfiguration::Builder()
            .seed(9)
            .list()
            .layer(ConvolutionLayer::Builder(3, 3).nOut(10).activation(Activation::TANH).build())
            .layer(SubsamplingLayer::Builder(PoolingType::AVG, 2, 2, 2, 2).build())
            .layer(ConvolutionLayer::Builder(2, 2).nOut(3).activation(Activation::SIGMOID).build())
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(3)
                       .activation(Activation::SOFTMAX)
                       .build())
            .setInputType(InputType::convolutionalFlat(6, 6, 9))
            .build();
    MultiLayerNetwork model(conf);
    model.init();
    requirePass(model, randomData(2, 6 * 6 * 9, 3, LossFunction::MCXENT, 17));
  }

  TEST_CASE("GradientCheck: the checker fails on a deliberately wrong gradient") {
    const auto network = [](const Layer& hidden) {
      MultiLayerNetwork model(NeuralNetConfiguration::Builder()
                                  .seed(42)
                                  .list()
                                  .layer(hidden)
                                  .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                             .nOut(3)
                                             .activation(Activation::SOFTMAX)
                                             .build())
                                  .setInputType(InputType::feedForward(4))
                                  .build());
      model.init();
      return model;
    };
    const auto dense = DenseLayer::Builder().nIn(4).nOut(5).activation(Activation::TANH).build();
    const DataSet data = randomData(3, 4, 3, LossFunction::MCXENT, 7);

    MultiLayerNetwork good = network(dense);
    CHECK(GradientCheckUtil::checkGradients(good, data).passed);

    MultiLayerNetwork bad = network(testing::corruptGradients(dense));
    const auto result = GradientCheckUtil::checkGradients(bad, data);
    CHECK_FALSE(result.passed);
    CHECK(result.failed >= 20);  // the 25 parameters and 12 inputs (tiny gradients may pass)
    CHECK(result.report.find("FAILED") != std::string::npos);
  }

  TEST_CASE("GradientCheck: ActivationLayer (GELU) passes, and fails with a wrong gradient") {
    const auto gelu = ActivationLayer::Builder(Activation::GELU).build();
    const DataSet data = randomData(3, 4, 3, LossFunction::MCXENT, 31);
    MultiLayerNetwork good = afterDense(gelu, 14);
    requirePass(good, data);
    MultiLayerNetwork bad = afterDense(testing::corruptGradients(gelu), 14);
    const auto result = GradientCheckUtil::checkGradients(bad, data);
    CHECK_FALSE(result.passed);
    CHECK(result.failed >= 20);  // the dense layer's 25 parameters and the 12 inputs
  }

  TEST_CASE("GradientCheck: the trainable layers above frozen ones (no gradient reaches below)") {
    // Frozen dense (with dropout) and batch normalisation, in inference mode; trainable dense,
    // batch normalisation and output above them.
    MultiLayerNetwork model = testutil::withFrozenLayers(testutil::pretrainedTestNet(), 1);
    const DataSet data = randomData(5, 6, 3, LossFunction::MCXENT, 17);
    GradientCheckUtil::Options options;
    options.checkInputGradient = false;
    const auto result = GradientCheckUtil::checkGradients(model, data, options);
    INFO(result.report);
    CHECK(result.passed);
    CHECK(result.checked == model.numParams() - model.numFrozenParams());
    // There is no input gradient to check through frozen layers.
    CHECK_THROWS_AS(GradientCheckUtil::checkGradients(model, data), ConfigError);
  }
}
