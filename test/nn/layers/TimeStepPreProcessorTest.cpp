// DL4J's preprocessors between sequences and layers that work per time step: RnnToFeedForward and
// FeedForwardToRnn inserted by setInputType around feed-forward layers inside a recurrent stack,
// RnnToCnn asked for (video frames through convolutions) and CnnToRnn inserted after it. A layer
// per time step computes exactly what it computes on the same rows; gradient checks through both
// reorderings, masked, fail on a wrong gradient; graphs insert them as networks do; what does not
// fit is a typed error naming the layer.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>

#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;
using testutil::perStepSoftmax;

namespace {

DenseLayer tanhDense(int64_t nOut) {
  return DenseLayer::Builder().nOut(nOut).activation(Activation::TANH).build();
}

// LSTM(4) -> `perStep` -> RnnOutputLayer(3) on sequences of 3 features.
MultiLayerConfiguration lstmAround(const Layer& perStep, int64_t length = 0) {
  return NeuralNetConfiguration::Builder()
      .seed(31)
      .list()
      .layer(LSTM::Builder().nOut(4).build())
      .layer(perStep)
      .layer(perStepSoftmax(3))
      .setInputType(InputType::recurrent(3, length))
      .build();
}

MultiLayerNetwork initialized(const MultiLayerConfiguration& conf) {
  MultiLayerNetwork net(conf);
  net.init();
  return net;
}

// Three sequences of 3 features and 6 steps, example 1 two steps shorter, masked.
DataSet padded(uint64_t seed) {
  DataSet d = testutil::randomSequences(3, 3, 6, 3, seed);
  Tensor mask(Shape{3, 6});
  mask.fill(1);
  for (int64_t s = 4; s < 6; ++s) mask.data()[6 + s] = 0;
  d.featuresMask = mask;
  d.labelsMask = mask.clone();
  return d;
}

// `sequences` (N, C, T) as rows (N*T, C), example by example.
Tensor rowsOf(const Tensor& sequences) {
  const int64_t n = sequences.dim(0), c = sequences.dim(1), t = sequences.dim(2);
  Tensor rows(Shape{n * t, c});
  for (int64_t e = 0; e < n; ++e)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t s = 0; s < t; ++s)
        rows.data()[(e * t + s) * c + k] = sequences.data()[(e * c + k) * t + s];
  return rows;
}

}  // namespace

TEST_SUITE("TimeStepPreProcessor") {
  TEST_CASE("Preprocessors: setInputType inserts DL4J's around layers inside a recurrent stack") {
    const MultiLayerConfiguration conf = lstmAround(tanhDense(5), 7);
    REQUIRE(conf.preProcessors.size() == 3);
    CHECK((conf.preProcessors[0] == InputPreProcessor::None));
    CHECK((conf.preProcessors[1] == InputPreProcessor::RnnToFeedForward));
    CHECK((conf.preProcessors[2] == InputPreProcessor::FeedForwardToRnn));
    CHECK(conf.layerInputTypes[1].toString() == "FeedForward(4) per time step of 7");
    CHECK(conf.layerOutputTypes[1].toString() == "FeedForward(5) per time step of 7");
    CHECK(conf.layerInputTypes[2].toString() == "Recurrent(5, 7)");
    CHECK(conf.outputType.toString() == "Recurrent(3, 7)");
    CHECK(conf.layerInputTypes[1].shape(2, 7) == Shape{14, 4});
    CHECK(conf.summary().find("per time step") != std::string::npos);
    CHECK(MultiLayerConfiguration::fromJson(conf.toJson()) == conf);

    // Pooling over time takes the rows back as sequences; LastTimeStep too.
    const MultiLayerConfiguration pooled =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(LSTM::Builder().nOut(4).build())
            .layer(tanhDense(5))
            .layer(GlobalPoolingLayer::Builder(PoolingType::MAX).build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::recurrent(3))
            .build();
    CHECK((pooled.preProcessors[2] == InputPreProcessor::FeedForwardToRnn));
    CHECK(pooled.outputType.toString() == "FeedForward(2)");
  }

  TEST_CASE("Preprocessors: a dense layer per time step computes what it computes on rows") {
    // Dense -> RnnOutputLayer on sequences against Dense -> OutputLayer on their steps as rows,
    // with the same parameters: the same outputs, and gradients T times the rows' (a sequence's
    // loss sums its steps; the rows' loss is a mean over N*T rows).
    MultiLayerNetwork steps = initialized(NeuralNetConfiguration::Builder()
                                              .seed(3)
                                              .list()
                                              .layer(tanhDense(4))
                                              .layer(perStepSoftmax(2))
                                              .setInputType(InputType::recurrent(3))
                                              .build());
    MultiLayerNetwork rows = initialized(NeuralNetConfiguration::Builder()
                                             .seed(4)
                                             .list()
                                             .layer(tanhDense(4))
                                             .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                                        .nOut(2)
                                                        .activation(Activation::SOFTMAX)
                                                        .build())
                                             .setInputType(InputType::feedForward(3))
                                             .build());
    rows.setParams(steps.params());
    const DataSet seq = testutil::randomSequences(3, 3, 5, 2, 9);
    CHECK(rowsOf(steps.output(seq.features)).toVector() ==
          rows.output(rowsOf(seq.features)).toVector());

    const double seqLoss = steps.computeGradientAndScore(seq);
    const double rowLoss =
        rows.computeGradientAndScore(DataSet(rowsOf(seq.features), rowsOf(seq.labels)));
    CHECK(seqLoss == doctest::Approx(5 * rowLoss).epsilon(1e-5));
    const std::vector<float> gs = steps.gradient().toVector(), gr = rows.gradient().toVector();
    REQUIRE(gs.size() == gr.size());
    for (size_t i = 0; i < gs.size(); ++i) CHECK(gs[i] == doctest::Approx(5 * gr[i]).epsilon(1e-4));
  }

  TEST_CASE("Preprocessors: gradient checks through layers per time step, masked") {
    for (const bool withNormalization : {false, true}) {
      CAPTURE(withNormalization);
      const std::shared_ptr<Layer> perStep =
          withNormalization ? BatchNormalization::Builder().build().clone() : tanhDense(5).clone();
      const DataSet data = padded(5);
      GradientCheckUtil::Options options;
      if (withNormalization) {  // as BatchNormalizationTest: smooth outputs, float32 loss rounding
        options.epsilon = 1e-2;
        options.maxRelativeError = 2e-2;
      }
      MultiLayerNetwork good = initialized(lstmAround(*perStep));
      const auto passed = GradientCheckUtil::checkGradients(good, data, options);
      INFO(passed.report);
      CHECK(passed.passed);
      CHECK(passed.checked == good.numParams() + data.features.numel());

      MultiLayerNetwork bad = initialized(lstmAround(testing::corruptGradients(*perStep)));
      const auto failed = GradientCheckUtil::checkGradients(bad, data, options);
      CHECK_FALSE(failed.passed);
      CHECK(failed.failed > 0);
    }
  }

  TEST_CASE("RnnToCnnPreProcessor: convolutions per frame, then an LSTM through CnnToRnn") {
    // Sequences of 2-channel 4x3 frames (24 features per step).
    auto video = [](const Layer& convolution) {
      return NeuralNetConfiguration::Builder()
          .seed(8)
          .list()
          .layer(convolution)
          .layer(SubsamplingLayer::Builder(PoolingType::MAX).kernelSize(2, 2).stride(1, 1).build())
          .layer(LSTM::Builder().nOut(3).build())
          .layer(perStepSoftmax(2))
          .inputPreProcessor(0, RnnToCnnPreProcessor{4, 3, 2})
          .setInputType(InputType::recurrent(24))
          .build();
    };
    const ConvolutionLayer conv =
        ConvolutionLayer::Builder(2, 2).nOut(3).activation(Activation::TANH).build();
    const MultiLayerConfiguration conf = video(conv);
    CHECK((conf.preProcessors[0] == InputPreProcessor::RnnToCnn));
    CHECK(conf.layerInputTypes[0].toString() == "Convolutional(4x3x2) per time step");
    CHECK(conf.layerOutputTypes[1].toString() == "Convolutional(2x1x3) per time step");
    CHECK((conf.preProcessors[2] == InputPreProcessor::CnnToRnn));
    CHECK(conf.layerInputTypes[2].toString() == "Recurrent(6)");
    CHECK(MultiLayerConfiguration::fromJson(conf.toJson()) == conf);

    // Frame by frame, the convolution sees what a network of images sees: a linear output per
    // step of the sequences against one per image, with the same parameters.
    auto linearOutput = [](auto builder) {
      return builder.nOut(2)
          .activation(Activation::IDENTITY)
          .lossFunction(LossFunction::MSE)
          .build();
    };
    MultiLayerNetwork frames = initialized(NeuralNetConfiguration::Builder()
                                               .seed(2)
                                               .list()
                                               .layer(conv)
                                               .layer(linearOutput(RnnOutputLayer::Builder()))
                                               .inputPreProcessor(0, RnnToCnnPreProcessor{4, 3, 2})
                                               .setInputType(InputType::recurrent(24))
                                               .build());
    MultiLayerNetwork images = initialized(NeuralNetConfiguration::Builder()
                                               .seed(3)
                                               .list()
                                               .layer(conv)
                                               .layer(linearOutput(OutputLayer::Builder()))
                                               .setInputType(InputType::convolutional(4, 3, 2))
                                               .build());
    images.setParams(frames.params());
    const DataSet data = testutil::randomSequences(2, 24, 3, 2, 6);
    const std::vector<float> perStep = rowsOf(frames.output(data.features)).toVector();
    const std::vector<float> perImage =
        images.output(rowsOf(data.features).reshape(Shape{6, 2, 4, 3})).toVector();
    REQUIRE(perStep.size() == perImage.size());
    for (size_t i = 0; i < perStep.size(); ++i)
      CHECK(perStep[i] == doctest::Approx(perImage[i]).epsilon(1e-5));

    MultiLayerNetwork video8 = initialized(conf);
    const auto passed = GradientCheckUtil::checkGradients(video8, data);
    INFO(passed.report);
    CHECK(passed.passed);
    MultiLayerNetwork bad = initialized(video(testing::corruptGradients(conv)));
    CHECK_FALSE(GradientCheckUtil::checkGradients(bad, data).passed);
  }

  TEST_CASE("Preprocessors: transfer learning keeps an RnnToCnnPreProcessor and truncated BPTT") {
    MultiLayerNetwork original =
        initialized(NeuralNetConfiguration::Builder()
                        .list()
                        .layer(ConvolutionLayer::Builder(2, 2).nOut(3).build())
                        .layer(LSTM::Builder().nOut(4).build())
                        .layer(perStepSoftmax(2))
                        .inputPreProcessor(0, RnnToCnnPreProcessor{4, 3, 2})
                        .setInputType(InputType::recurrent(24))
                        .backpropType(BackpropType::TruncatedBPTT)
                        .tBPTTLength(3)
                        .build());
    MultiLayerNetwork tuned = TransferLearning::Builder(original)
                                  .setFeatureExtractor(0)
                                  .removeOutputLayer()
                                  .addLayer(perStepSoftmax(5))
                                  .build();
    const MultiLayerConfiguration& conf = tuned.getConfiguration();
    CHECK((conf.preProcessors[0] == InputPreProcessor::RnnToCnn));
    CHECK(conf.layerInputTypes[0].toString() == "Convolutional(4x3x2) per time step");
    CHECK((conf.backpropType == BackpropType::TruncatedBPTT));
    CHECK(conf.tbpttFwdLength == 3);
    tuned.fit(testutil::randomSequences(2, 24, 7, 5, 3));
  }

  TEST_CASE("Preprocessors: in a graph, as in a network") {
    const ComputationGraphConfiguration conf =
        NeuralNetConfiguration::Builder()
            .seed(31)
            .graphBuilder()
            .addInputs("in")
            .setInputTypes(InputType::recurrent(3))
            .addLayer("lstm", LSTM::Builder().nOut(4).build(), "in")
            .addLayer("dense", tanhDense(5), "lstm")
            .addLayer("out", perStepSoftmax(3), "dense")
            .setOutputs("out")
            .build();
    CHECK((conf.vertices[1].preProcessor == InputPreProcessor::RnnToFeedForward));
    CHECK((conf.vertices[2].preProcessor == InputPreProcessor::FeedForwardToRnn));
    CHECK(ComputationGraphConfiguration::fromJson(conf.toJson()).toJson() == conf.toJson());

    ComputationGraph graph(conf);
    graph.init();
    MultiLayerNetwork net = initialized(lstmAround(tanhDense(5)));
    graph.setParams(net.params());
    const DataSet data = padded(2);
    CHECK(graph.outputSingle(data.features, false, data.featuresMask).toVector() ==
          net.output(data.features, false, data.featuresMask).toVector());
    for (int i = 0; i < 3; ++i) {
      net.fit(data);
      graph.fit(MultiDataSet(data));
    }
    CHECK(graph.params().toVector() == net.params().toVector());
    const auto check = GradientCheckUtil::checkGradients(graph, MultiDataSet(data));
    INFO(check.report);
    CHECK(check.passed);
  }

  TEST_CASE("Preprocessors: what does not fit is a typed error naming the layer") {
    auto lstmThen = [](const Layer& next) {
      return NeuralNetConfiguration::Builder()
          .list()
          .layer(LSTM::Builder().nOut(4).build())
          .layer(next)
          .setInputType(InputType::recurrent(3));
    };
    // A network that ends in rows per time step has no labels to match.
    testutil::expectConfigError(
        lstmThen(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build()),
        {"layer 1 (OutputLayer)", "one output per time step", "RnnOutputLayer", "LastTimeStep"});
    // Convolutions receive sequences only through an RnnToCnnPreProcessor.
    auto convThen = NeuralNetConfiguration::Builder()
                        .list()
                        .layer(ConvolutionLayer::Builder(2, 2).nOut(3).build())
                        .layer(perStepSoftmax(2))
                        .setInputType(InputType::recurrent(24));
    testutil::expectConfigError(convThen, {"layer 0 (ConvolutionLayer)", "RnnToCnnPreProcessor"});
    testutil::expectConfigError(convThen.inputPreProcessor(0, RnnToCnnPreProcessor{5, 3, 2}),
                                {"layer 0 (ConvolutionLayer)", "30 features", "Recurrent(24)"});
    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(tanhDense(3))
                                    .layer(perStepSoftmax(2))
                                    .inputPreProcessor(0, RnnToCnnPreProcessor{4, 3, 2})
                                    .setInputType(InputType::recurrent(24)),
                                {"layer 0 (DenseLayer)", "does not read"});
    testutil::expectConfigError(convThen.inputPreProcessor(5, RnnToCnnPreProcessor{4, 3, 2}),
                                {"inputPreProcessor(5", "2 layers"});
    // A recurrent layer still refuses rows that are not per time step.
    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(tanhDense(4))
                                    .layer(LSTM::Builder().nOut(2).build())
                                    .layer(perStepSoftmax(2))
                                    .setInputType(InputType::feedForward(3)),
                                {"layer 1 (LSTM)", "needs sequences", "FeedForward(4)"});
    // A graph vertex takes rows per time step only where all its inputs are.
    CHECK_THROWS_WITH_AS(
        NeuralNetConfiguration::Builder()
            .graphBuilder()
            .addInputs("seq", "rows")
            .setInputTypes(InputType::recurrent(3), InputType::feedForward(5))
            .addLayer("lstm", LSTM::Builder().nOut(4).build(), "seq")
            .addLayer("dense", tanhDense(5), "lstm")
            .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "dense", "rows")
            .addLayer("out", perStepSoftmax(2), "add")
            .setOutputs("out")
            .build(),
        doctest::Contains("\"add\""), ConfigError);
  }
}
