// The CPU backend's plan (ConvolutionPoolingStep.h): which layers it runs as one fused step, and
// that the step computes the same bits as its two layers run one by one as the network runs any
// layer (SingleLayerStep), with and without an input gradient, on 1 and 2 threads.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "../BackendTestUtil.h"
#include "../PlannedStepTestUtil.h"
#include "CpuIsaTestUtil.h"
#include "LenetConfiguration.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/multilayer/LayerSteps.h"

using namespace dl4cpp;
using testutil::filled;
using testutil::runsAt;

namespace {

using Layers = std::vector<std::unique_ptr<layers::RuntimeLayer>>;

ConvolutionLayer convolution(Activation activation, int64_t nOut = 4) {
  return ConvolutionLayer::Builder(3, 3).nOut(nOut).activation(activation).build();
}

SubsamplingLayer pooling(PoolingType kind) {
  return SubsamplingLayer::Builder(kind, 2, 2, 2, 2).build();
}

OutputLayer output() {
  return OutputLayer::Builder(LossFunction::MCXENT).nOut(3).activation(Activation::SOFTMAX).build();
}

// The runtime layers of a resolved configuration (12x12x2 inputs unless given), parameters
// unbound: planning reads what the layers compute, not their values.
template <typename... Confs>
Layers layersOf(const Confs&... confs) {
  auto builder = NeuralNetConfiguration::Builder().seed(3).list();
  (builder.layer(confs), ...);
  const MultiLayerConfiguration conf =
      builder.setInputType(InputType::convolutionalFlat(12, 12, 2)).build();
  Layers layers;
  for (const auto& layer : conf.layers) layers.push_back(layer->instantiate());
  return layers;
}

// The planned steps' spans, as (first, last) pairs.
std::vector<std::pair<int, int>> plannedSpans(const std::vector<LayerDescription>& described) {
  cpu::CpuBackend backend;
  std::vector<std::pair<int, int>> spans;
  for (const auto& step : backend.planSteps(described))
    spans.emplace_back(step->first(), step->last());
  return spans;
}

std::vector<std::pair<int, int>> plannedSpans(const Layers& layers) {
  return plannedSpans(describeSequence(layers));
}

using Spans = std::vector<std::pair<int, int>>;

// A convolution + MAX pooling pair run as the CPU plan's step or as two single-layer steps, on its
// own parameter and gradient buffers: LeNet's 5x5 shape, or a VGG-style 3x3 convolution with
// padding 1 (on the 3x3 Winograd kernels at avx2).
struct PairRun {
  std::vector<float> pooled, dw, db, inputGradient;
  bool convOutputUntouched = false;
};

struct Pair {
  Activation activation = Activation::IDENTITY;
  bool vgg = false;
};

PairRun runPair(const Pair& pair, bool planned, bool wantInputGradient, int threads) {
  const int64_t kernel = pair.vgg ? 3 : 5, pad = pair.vgg ? 1 : 0, inChannels = pair.vgg ? 8 : 2;
  const int64_t outChannels = pair.vgg ? 16 : 6, size = 16, convSize = size - kernel + 1 + 2 * pad;
  const MultiLayerConfiguration conf =
      NeuralNetConfiguration::Builder()
          .list()
          .layer(ConvolutionLayer::Builder(kernel, kernel)
                     .padding(pad, pad)
                     .nOut(outChannels)
                     .activation(pair.activation)
                     .build())
          .layer(pooling(PoolingType::MAX))
          .layer(output())
          .setInputType(InputType::convolutionalFlat(size, size, inChannels))
          .build();
  DeviceContext ctx(Device::cpu(), threads);
  ctx.bindToCurrentThread();
  testutil::SteppedLayers pairLayers = testutil::steppedLayers(conf, 2, ctx, planned);  // the pair
  std::vector<std::unique_ptr<NetworkStep>>& steps = pairLayers.steps;
  REQUIRE(steps.size() == (planned ? 1u : 2u));

  constexpr int64_t kBatch = 3;
  const Shape convShape{kBatch, outChannels, convSize, convSize};
  const Shape pooledShape{kBatch, outChannels, convSize / 2, convSize / 2};
  std::vector<Tensor> inputs{filled(Shape{kBatch, inChannels, size, size}, 7), Tensor(convShape)};
  std::vector<Tensor> outputs{inputs[1], Tensor(pooledShape)};
  std::vector<Tensor> gradients{Tensor(convShape), filled(pooledShape, 8)};
  const LayerTensors t{inputs, outputs, gradients};
  outputs[0].fill(NAN);
  const std::vector<float> pooledGradient = gradients[1].toVector();
  Tensor inputGradient(inputs[0].shape());
  for (auto& step : steps) step->forward(ctx, t, ForwardContext{true, 0});
  const std::vector<float> convOutput = outputs[0].toVector();
  // Backward as the network runs it: the pooling step writes the convolution's output gradient,
  // the first step an input gradient only when one is wanted.
  for (size_t s = steps.size(); s-- > 0;) {
    Tensor* target = steps[s]->first() > 0 ? &gradients[0]
                     : wantInputGradient   ? &inputGradient
                                           : nullptr;
    steps[s]->backward(ctx, t, target);
  }
  CHECK(gradients[1].toVector() == pooledGradient);  // the step's input is left as it was given
  return {outputs[1].toVector(), pairLayers.grads[1].toVector(), pairLayers.grads[0].toVector(),
          inputGradient.toVector(),
          std::all_of(convOutput.begin(), convOutput.end(), [](float v) { return std::isnan(v); })};
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("CPU plan: LeNet's two convolution + MAX pooling pairs each become one step") {
    const MultiLayerConfiguration conf = samples::lenetConfiguration();
    Layers layers;
    for (const auto& layer : conf.layers) layers.push_back(layer->instantiate());
    CHECK(plannedSpans(layers) == Spans{{0, 1}, {2, 3}});
  }

  TEST_CASE("CPU plan: a convolution (identity) + MAX pooling pair anywhere is fused") {
    CHECK(plannedSpans(layersOf(convolution(Activation::IDENTITY), pooling(PoolingType::MAX),
                                output())) == Spans{{0, 1}});
    // (The first convolution, with RELU, is a step of its own: ConvolutionActivationStep.h.)
    CHECK(plannedSpans(layersOf(convolution(Activation::RELU), convolution(Activation::IDENTITY),
                                pooling(PoolingType::MAX), output())) == Spans{{0, 0}, {1, 2}});
  }

  TEST_CASE("CPU plan: a convolution with RELU or LEAKYRELU + MAX pooling is fused") {
    CHECK(plannedSpans(layersOf(convolution(Activation::RELU), pooling(PoolingType::MAX),
                                output())) == Spans{{0, 1}});
    CHECK(plannedSpans(layersOf(convolution(Activation::LEAKYRELU), pooling(PoolingType::MAX),
                                output())) == Spans{{0, 1}});
  }

  TEST_CASE("CPU plan: no fusion with another activation, AVG pooling, or no pooling after") {
    for (const auto& [activation, name] : kActivationNames) {  // the step computes no other
      const std::string kindName = name;
      CAPTURE(kindName);
      if (activation != Activation::IDENTITY && activation != Activation::RELU &&
          activation != Activation::LEAKYRELU)
        CHECK(plannedSpans(layersOf(convolution(activation), pooling(PoolingType::MAX), output()))
                  .empty());
    }
    CHECK(plannedSpans(
              layersOf(convolution(Activation::IDENTITY), pooling(PoolingType::AVG), output()))
              .empty());
    CHECK(plannedSpans(layersOf(convolution(Activation::IDENTITY),
                                convolution(Activation::IDENTITY), output()))
              .empty());
    CHECK(plannedSpans(
              layersOf(pooling(PoolingType::MAX), convolution(Activation::IDENTITY), output()))
              .empty());
  }

  TEST_CASE("CPU plan: overlapping pooling windows fuse with the identity only") {
    const SubsamplingLayer overlapping =
        SubsamplingLayer::Builder(PoolingType::MAX, 3, 3, 2, 2).build();
    CHECK(plannedSpans(layersOf(convolution(Activation::IDENTITY), overlapping, output())) ==
          Spans{{0, 1}});
    CHECK(plannedSpans(layersOf(convolution(Activation::RELU), overlapping, output())) ==
          Spans{{0, 0}});  // the convolution alone (ConvolutionActivationStep.h)
  }

  TEST_CASE("CPU plan: no fusion when another layer or the network reads the convolution") {
    const Layers layers =
        layersOf(convolution(Activation::IDENTITY), pooling(PoolingType::MAX), output());
    std::vector<LayerDescription> described = describeSequence(layers);
    REQUIRE(plannedSpans(described) == Spans{{0, 1}});
    described[0].readers = {1, 2};
    CHECK(plannedSpans(described).empty());
    described[0].readers = {1, LayerDescription::kNetwork};
    CHECK(plannedSpans(described).empty());
  }

  TEST_CASE("CPU plan: the fused step equals its two layers run one by one, bit for bit") {
    for (const Pair& pair : {Pair{}, Pair{Activation::RELU}, Pair{Activation::LEAKYRELU},
                             Pair{Activation::IDENTITY, true}, Pair{Activation::RELU, true}})
      for (int threads : {1, 2})
        for (bool inputGradient : {false, true}) {
          INFO(toString(pair.activation) << (pair.vgg ? " 3x3" : " 5x5") << ", threads " << threads
                                         << ", input gradient " << inputGradient);
          const PairRun layerByLayer = runPair(pair, false, inputGradient, threads);
          const PairRun fused = runPair(pair, true, inputGradient, threads);
          CHECK(fused.pooled == layerByLayer.pooled);
          CHECK(fused.dw == layerByLayer.dw);
          CHECK(fused.db == layerByLayer.db);
          CHECK(fused.inputGradient == layerByLayer.inputGradient);
          CHECK_FALSE(layerByLayer.convOutputUntouched);
          // The fused kernel ran: the convolution's output was never written (the 3x3 shape, 8 ->
          // 16 channels, does not fill oneDNN's 16-channel blocks, so it fuses on dl4cpp's Winograd
          // kernels at avx2 and avx512; at baseline its step runs the layers' ops).
          if (!pair.vgg)
            CHECK(fused.convOutputUntouched);
          else
            CHECK(fused.convOutputUntouched == runsAt(CpuIsa::Avx2));
        }
  }
}
