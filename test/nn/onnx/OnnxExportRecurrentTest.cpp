// ONNX export of the recurrent layers (nn/onnx/RecurrentExport.h): GravesLSTM with its peepholes,
// SimpleRnn, Bidirectional in every mode around each of them, LastTimeStep, and pooling over time,
// each exported, checked by ONNX's checker, run in ONNX Runtime and compared with dl4cpp's
// output() within 1e-4; imported again, the model computes the same within 1e-6 where the importer
// maps its operators.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <string>

#include "TempDir.h"
#include "nn/layers/SequenceTestUtil.h"
#include "nn/onnx/OnnxExport.h"
#include "nn/onnx/OnnxExportTestUtil.h"
#include "nn/onnx/OnnxRuntimeRunner.h"

using namespace dl4cpp;
using testutil::randomTensor;

namespace {

RnnOutputLayer perStepSoftmax() {
  return RnnOutputLayer::Builder(LossFunction::MCXENT)
      .nOut(3)
      .activation(Activation::SOFTMAX)
      .build();
}

OutputLayer softmaxOut() {
  return OutputLayer::Builder(LossFunction::MCXENT).nOut(3).activation(Activation::SOFTMAX).build();
}

// `layers` over `input` (sequences of 3 features of any length), then `head`.
MultiLayerNetwork network(const std::vector<std::shared_ptr<Layer>>& layers, const Layer& head,
                          const InputType& input = InputType::recurrent(3)) {
  auto list = NeuralNetConfiguration::Builder().seed(17).list();
  for (const auto& l : layers) list.layer(*l);
  list.layer(head).setInputType(input);
  MultiLayerNetwork net(list.build());
  net.init();
  return net;
}

// Exports `net`, runs it in ONNX Runtime and compares with output(); with `roundTrip`, imports
// the file again and compares that too.
void checkExport(MultiLayerNetwork& net, const std::string& what, bool roundTrip,
                 const Tensor& features = randomTensor(Shape{4, 3, 7}, 31, -2, 2)) {
  INFO(what);
  testutil::TempDir dir;
  const auto path = dir / "model.onnx";
  onnx::exportModel(net, path);
  const Tensor expected = net.output(features);
  if (roundTrip) testutil::checkRoundTrip(path, {features}, {expected}, what);
  const auto actual =
      testutil::runInOnnxRuntime(path, {{"input", features}}, {"output"}, dir.path());
  testutil::checkSameOutputs(expected, actual.at(0), what);
}

std::shared_ptr<Layer> graves(int64_t nOut) {
  return GravesLSTM::Builder().nOut(nOut).build().clone();
}
std::shared_ptr<Layer> simple(int64_t nOut, Activation a = Activation::TANH) {
  return SimpleRnn::Builder().nOut(nOut).activation(a).build().clone();
}
std::shared_ptr<Layer> lstm(int64_t nOut) { return LSTM::Builder().nOut(nOut).build().clone(); }

}  // namespace

TEST_SUITE("nn/onnx") {
  TEST_CASE("OnnxExport: GravesLSTM (peepholes) and SimpleRnn match ONNX Runtime") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    MultiLayerNetwork peepholes = network({graves(5), graves(4)}, perStepSoftmax());
    checkExport(peepholes, "GravesLSTM", true);
    MultiLayerNetwork rnn = network(
        {simple(5), simple(4, Activation::RELU), simple(4, Activation::SIGMOID)}, perStepSoftmax());
    checkExport(rnn, "SimpleRnn", true);
  }

  TEST_CASE("OnnxExport: Bidirectional in every mode around every recurrent layer") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    for (auto mode : {Bidirectional::Mode::CONCAT, Bidirectional::Mode::ADD,
                      Bidirectional::Mode::MUL, Bidirectional::Mode::AVERAGE})
      for (const auto& inner : {lstm(4), graves(4), simple(4)}) {
        MultiLayerNetwork net =
            network({std::make_shared<Bidirectional>(mode, *inner), lstm(3)}, perStepSoftmax());
        checkExport(
            net, inner->typeName() + " in Bidirectional " + nameOf(kBidirectionalModeNames, mode),
            true);
      }
  }

  TEST_CASE("OnnxExport: LastTimeStep and pooling over time end a recurrent stack") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    MultiLayerNetwork last =
        network({lstm(5), std::make_shared<LastTimeStep>(*simple(4))}, softmaxOut());
    checkExport(last, "LastTimeStep", true);
    MultiLayerNetwork bidirectionalLast = network(
        {std::make_shared<LastTimeStep>(Bidirectional(Bidirectional::Mode::CONCAT, *lstm(3)))},
        softmaxOut());
    checkExport(bidirectionalLast, "LastTimeStep of a Bidirectional", true);
    for (auto pooling :
         {PoolingType::MAX, PoolingType::AVG, PoolingType::SUM, PoolingType::PNORM}) {
      MultiLayerNetwork pooled = network(
          {lstm(5), GlobalPoolingLayer::Builder(pooling).pnorm(3).build().clone()}, softmaxOut());
      checkExport(pooled, "pooling over time " + toString(pooling), false);
    }
  }

  TEST_CASE("OnnxExport: embeddings of indices and RnnLossLayer match ONNX Runtime") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    // Indices in [0, 6) as floats: (N, 1) rows and (N, 1, T) sequences.
    Tensor rows(Shape{5, 1}), sequences(Shape{4, 1, 7});
    for (int64_t i = 0; i < rows.numel(); ++i) rows.data()[i] = static_cast<float>(i * 7 % 6);
    for (int64_t i = 0; i < sequences.numel(); ++i)
      sequences.data()[i] = static_cast<float>(i * 5 % 6);
    MultiLayerNetwork lookup = network({EmbeddingLayer::Builder()
                                            .nIn(6)
                                            .nOut(4)
                                            .hasBias(true)
                                            .activation(Activation::TANH)
                                            .build()
                                            .clone()},
                                       softmaxOut(), InputType::feedForward(1));
    checkExport(lookup, "EmbeddingLayer", false, rows);
    MultiLayerNetwork text = network(
        {EmbeddingSequenceLayer::Builder().nIn(6).nOut(4).hasBias(true).build().clone(), lstm(3)},
        RnnLossLayer::Builder(LossFunction::MCXENT).activation(Activation::SOFTMAX).build(),
        InputType::recurrent(1));
    checkExport(text, "EmbeddingSequenceLayer, LSTM, RnnLossLayer", false, sequences);
  }

  TEST_CASE("OnnxExport: Convolution1DLayer and Subsampling1DLayer as 1-D Conv and pooling") {
    if (testutil::skippedWithoutOnnxRuntime()) return;
    MultiLayerNetwork same = network({Convolution1DLayer::Builder(3)
                                          .convolutionMode(ConvolutionMode::Same)
                                          .nOut(4)
                                          .activation(Activation::RELU)
                                          .build()
                                          .clone(),
                                      Subsampling1DLayer::Builder(PoolingType::AVG, 2, 1)
                                          .convolutionMode(ConvolutionMode::Same)
                                          .build()
                                          .clone(),
                                      lstm(3)},
                                     perStepSoftmax());
    checkExport(same, "1-D convolution and pooling, Same mode", false);
    MultiLayerNetwork strided =
        network({Convolution1DLayer::Builder(2, 1, 1).dilation(2).nOut(4).build().clone(),
                 Subsampling1DLayer::Builder(PoolingType::MAX, 2, 2).build().clone(),
                 GlobalPoolingLayer::Builder(PoolingType::AVG).build().clone()},
                softmaxOut(), InputType::recurrent(3, 7));
    checkExport(strided, "1-D convolution and pooling, strided, fixed length", false);
  }

  TEST_CASE("OnnxExport: a recurrent layer ONNX cannot express is an error naming the layer") {
    MultiLayerNetwork net = network({simple(3, Activation::HARDTANH)}, perStepSoftmax());
    testutil::TempDir dir;
    CHECK_THROWS_WITH_AS(onnx::exportModel(net, dir / "model.onnx"),
                         doctest::Contains("(SimpleRnn): activation HARDTANH: ONNX's recurrent "
                                           "operators take SIGMOID, TANH, RELU or HARDSIGMOID"),
                         ModelExchangeError);
    MultiLayerNetwork masking = network({MaskZeroLayer(*lstm(3), 0.0).clone()}, perStepSoftmax());
    CHECK_THROWS_WITH_AS(onnx::exportModel(masking, dir / "model.onnx"),
                         doctest::Contains("(MaskZeroLayer): it masks the steps"),
                         ModelExchangeError);
  }

  TEST_CASE("OnnxExport: layers per time step, through DL4J's preprocessors") {
    // LSTM -> dense and batch normalisation per step -> RnnOutputLayer: RnnToFeedForward and
    // FeedForwardToRnn as Transpose + Reshape, N and T taken from the sequences' shape.
    MultiLayerNetwork dense = network(
        {lstm(4), DenseLayer::Builder().nOut(5).activation(Activation::TANH).build().clone(),
         BatchNormalization::Builder().build().clone()},
        perStepSoftmax());
    dense.fit(testutil::randomSequences(4, 3, 7, 3, 2));  // running statistics away from 0 and 1
    checkExport(dense, "dense and batch normalisation per time step", false);
    // Frames of 2x3x2 through a convolution (RnnToCnn, asked for), then CnnToRnn into an LSTM.
    MultiLayerNetwork video(
        NeuralNetConfiguration::Builder()
            .seed(17)
            .list()
            .layer(ConvolutionLayer::Builder(2, 2).nOut(3).activation(Activation::RELU).build())
            .layer(LSTM::Builder().nOut(4).build())
            .layer(perStepSoftmax())
            .inputPreProcessor(0, RnnToCnnPreProcessor{3, 2, 2})
            .setInputType(InputType::recurrent(12))
            .build());
    video.init();
    checkExport(video, "convolutions per frame", false, randomTensor(Shape{3, 12, 5}, 8, -1, 1));
  }
}
