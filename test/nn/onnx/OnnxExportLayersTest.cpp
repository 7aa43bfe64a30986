// ONNX export of networks (nn/onnx/OnnxExport.h): every layer type, activation, convolution mode
// and the flat image input, each exported, checked by ONNX's checker and run in ONNX Runtime,
// whose outputs must equal dl4cpp's output() within 1e-4. Layers ONNX cannot express are a
// ModelExchangeError naming the layer.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <string>

#include "TempDir.h"
#include "nn/onnx/OnnxExport.h"
#include "nn/onnx/OnnxExportTestUtil.h"
#include "nn/onnx/OnnxRuntimeRunner.h"

using namespace dl4cpp;
using testutil::checkSameOutputs;
using testutil::randomTensor;

namespace {

// Exports `net`, runs the file in ONNX Runtime on `features` and compares with output(); imports
// the file again and compares that too (the round trip).
void checkInOnnxRuntime(MultiLayerNetwork& net, const Tensor& features, const std::string& what,
                        bool sameClasses = false) {
  testutil::TempDir dir;
  const auto path = dir / "model.onnx";
  onnx::exportModel(net, path);
  const Tensor expected = net.output(features);
  testutil::checkRoundTrip(path, {features}, {expected}, what);
  const auto actual =
      testutil::runInOnnxRuntime(path, {{"input", features}}, {"output"}, dir.path());
  checkSameOutputs(expected, actual.at(0), what, sameClasses);
}

// A few SGD steps on random data, so that parameters and batch normalisation's running
// statistics are not what init() made them.
void trainBriefly(MultiLayerNetwork& net, const Tensor& features, int64_t classes) {
  const DataSet batch(features, testutil::oneHot(features.shape()[0], classes, 7));
  for (int i = 0; i < 5; ++i) net.fit(batch);
}

// A DenseLayer under another type name: a layer type the exporter does not know.
class RenamedDense : public DenseLayer {
 public:
  std::shared_ptr<Layer> clone() const override { return std::make_shared<RenamedDense>(*this); }
  std::string typeName() const override { return "RenamedDense"; }
};

// Two LSTMs (the second with RELU and HARDSIGMOID gates) and a per-step softmax output over
// sequences of 3 features, of any length (0) or a fixed one.
MultiLayerNetwork lstmNetwork(int64_t length) {
  MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                            .seed(9)
                            .list()
                            .layer(LSTM::Builder().nOut(5).biasInit(0.2).build())
                            .layer(LSTM::Builder()
                                       .nOut(4)
                                       .activation(Activation::RELU)
                                       .gateActivationFunction(Activation::HARDSIGMOID)
                                       .build())
                            .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                                       .nOut(3)
                                       .activation(Activation::SOFTMAX)
                                       .build())
                            .setInputType(InputType::recurrent(3, length))
                            .build());
  net.init();
  return net;
}

}  // namespace

TEST_SUITE("nn/onnx") {
  TEST_CASE("OnnxExport: every activation in a dense layer matches ONNX Runtime") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    const Tensor features = randomTensor(Shape{7, 6}, 11, -4, 4);
    for (const auto& [a, name] : kActivationNames) {
      MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                                .seed(3)
                                .list()
                                .layer(DenseLayer::Builder()
                                           .nIn(6)
                                           .nOut(9)
                                           .activation(a)
                                           .leakyReluAlpha(0.2)
                                           .biasInit(0.3)
                                           .build())
                                .layer(OutputLayer::Builder(LossFunction::MSE)
                                           .nOut(3)
                                           .activation(Activation::IDENTITY)
                                           .build())
                                .build());
      net.init();
      checkInOnnxRuntime(net, features, "activation " + toString(a));
    }
  }

  TEST_CASE("OnnxExport: convolution and pooling in every mode from flat images") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    MultiLayerNetwork net(
        NeuralNetConfiguration::Builder()
            .seed(5)
            .weightInit(WeightInit::RELU)
            .list()
            // Truncate with padding and stride 2: 9 -> 5
            .layer(ConvolutionLayer::Builder(3, 3, 2, 2, 1, 1)
                       .nOut(4)
                       .activation(Activation::RELU)
                       .build())
            // Same with dilation and no bias: 5 -> 5
            .layer(ConvolutionLayer::Builder(3, 3)
                       .dilation(2, 2)
                       .convolutionMode(ConvolutionMode::Same)
                       .hasBias(false)
                       .nOut(5)
                       .activation(Activation::TANH)
                       .build())
            // Same with stride 2 over 5: asymmetric padding, 5 -> 3
            .layer(SubsamplingLayer::Builder(PoolingType::MAX, 3, 3, 2, 2)
                       .convolutionMode(ConvolutionMode::Same)
                       .build())
            // AVG with padding: the divisor counts only values inside the input, 3 -> 4
            .layer(SubsamplingLayer::Builder(PoolingType::AVG, 2, 2, 1, 1).padding(1, 1).build())
            // Strict: windows tile 4 exactly
            .layer(ConvolutionLayer::Builder(2, 2, 2, 2)
                       .convolutionMode(ConvolutionMode::Strict)
                       .nOut(3)
                       .activation(Activation::ELU)
                       .build())
            .layer(SubsamplingLayer::Builder(PoolingType::AVG, 2, 2, 1, 1)
                       .convolutionMode(ConvolutionMode::Same)
                       .build())
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(4)
                       .activation(Activation::SOFTMAX)
                       .build())
            .setInputType(InputType::convolutionalFlat(9, 9, 2))
            .build());
    net.init();
    const Tensor features = randomTensor(Shape{5, 162}, 12);
    trainBriefly(net, features, 4);
    checkInOnnxRuntime(net, features, "convolution and pooling", true);
  }

  TEST_CASE(
      "OnnxExport: batch normalisation with running statistics and LRN and dropout and padding "
      "and softmax over channels") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    MultiLayerNetwork net(
        NeuralNetConfiguration::Builder()
            .seed(9)
            .activation(Activation::IDENTITY)
            .list()
            .layer(BatchNormalization::Builder().activation(Activation::TANH).build())
            .layer(LocalResponseNormalization::Builder(1.5, 3, 0.2, 0.6).build())
            .layer(DropoutLayer::Builder(0.5).build())
            .layer(ZeroPaddingLayer::Builder(1, 0, 2, 1).build())
            .layer(ConvolutionLayer::Builder(3, 3).nOut(6).dropOut(0.8).build())
            .layer(ActivationLayer::Builder(Activation::SOFTMAX).build())
            .layer(GlobalPoolingLayer::Builder(PoolingType::AVG).build())
            .layer(BatchNormalization::Builder(1.5, -0.5, true).build())
            .layer(DenseLayer::Builder().nOut(5).activation(Activation::RELU).build())
            .layer(BatchNormalization::Builder().eps(1e-3).build())
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(3)
                       .activation(Activation::SOFTMAX)
                       .build())
            .setInputType(InputType::convolutional(6, 5, 4))
            .build());
    net.init();
    const Tensor features = randomTensor(Shape{6, 4, 6, 5}, 13, -2, 3);
    trainBriefly(net, features, 3);
    checkInOnnxRuntime(net, features, "normalisation layers", true);
  }

  TEST_CASE("OnnxExport: global pooling of every type collapsed or not and a loss layer") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    const Tensor features = randomTensor(Shape{4, 3, 5, 4}, 14, 0.1, 2);
    for (PoolingType type :
         {PoolingType::MAX, PoolingType::AVG, PoolingType::SUM, PoolingType::PNORM})
      for (bool collapse : {true, false}) {
        MultiLayerNetwork net(
            NeuralNetConfiguration::Builder()
                .seed(10)
                .list()
                .layer(ConvolutionLayer::Builder(2, 2)
                           .nOut(3)
                           .activation(Activation::SOFTPLUS)
                           .build())
                .layer(
                    GlobalPoolingLayer::Builder(type).pnorm(3).collapseDimensions(collapse).build())
                .layer(
                    LossLayer::Builder(LossFunction::MSE).activation(Activation::SIGMOID).build())
                .setInputType(InputType::convolutional(5, 4, 3))
                .build());
        net.init();
        checkInOnnxRuntime(
            net, features,
            "global " + toString(type) + (collapse ? ", collapsed" : ", not collapsed"));
      }
  }

  TEST_CASE("OnnxExport: a layer type ONNX export does not know is an error naming it") {
    MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                              .list()
                              .layer(DenseLayer::Builder().nIn(4).nOut(3).build())
                              .layer([] {
                                RenamedDense d;
                                d.name = "mine";
                                d.nOut = 2;
                                return d;
                              }())
                              .layer(OutputLayer::Builder(LossFunction::MSE).nOut(2).build())
                              .build());
    testutil::TempDir dir;
    CHECK_THROWS_AS(onnx::exportModel(net, dir / "model.onnx"), ConfigError);  // not initialised
    net.init();
    CHECK_THROWS_WITH_AS(onnx::exportModel(net, dir / "model.onnx"),
                         doctest::Contains("layer \"mine\" (RenamedDense)"), ModelExchangeError);
    CHECK_FALSE(std::filesystem::exists(dir / "model.onnx"));
  }

  TEST_CASE("OnnxExport: LSTM and RnnOutputLayer over sequences match ONNX Runtime") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    for (int64_t length : {int64_t{0}, int64_t{6}}) {
      MultiLayerNetwork net = lstmNetwork(length);
      // (N, nIn, T): the exported model transposes to ONNX's (T, N, nIn) and back.
      const Tensor features = randomTensor(Shape{4, 3, 6}, 21, -2, 2);
      testutil::TempDir dir;
      const auto path = dir / "model.onnx";
      onnx::exportModel(net, path);
      const auto actual =
          testutil::runInOnnxRuntime(path, {{"input", features}}, {"output"}, dir.path());
      checkSameOutputs(net.output(features), actual.at(0),
                       "LSTM, length " + std::to_string(length));
    }
  }

  TEST_CASE("OnnxExport: LSTM and RnnOutputLayer round-trip through the importer") {
    for (int64_t length : {int64_t{0}, int64_t{6}}) {
      MultiLayerNetwork net = lstmNetwork(length);
      const Tensor features = randomTensor(Shape{4, 3, 6}, 21, -2, 2);
      testutil::TempDir dir;
      const auto path = dir / "model.onnx";
      onnx::exportModel(net, path);
      testutil::checkRoundTrip(path, {features}, {net.output(features)},
                               "LSTM, length " + std::to_string(length));
    }
  }

  TEST_CASE("OnnxExport: an LSTM activation ONNX's LSTM has not is an error naming the layer") {
    MultiLayerNetwork net(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(LSTM::Builder().nOut(2).activation(Activation::HARDTANH).build())
            .layer(RnnOutputLayer::Builder(LossFunction::MSE).nOut(1).build())
            .setInputType(InputType::recurrent(2))
            .build());
    net.init();
    testutil::TempDir dir;
    CHECK_THROWS_WITH_AS(
        onnx::exportModel(net, dir / "model.onnx"),
        doctest::Contains("(LSTM): activation HARDTANH: ONNX's recurrent operators take"),
        ModelExchangeError);
  }
}
