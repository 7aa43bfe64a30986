// The CPU backend's plan for a convolution with RELU or LEAKYRELU that no pooling fuses with
// (ConvolutionActivationStep.h): which layers it plans, and that the step computes the same bits
// as the layer run by itself (SingleLayerStep): output, parameter gradients and input gradient,
// with and without an input gradient, on 1 and 2 threads, on the kernels each shape runs on (3x3
// Winograd, the direct kernels, im2col + sgemm for a first layer, whose weight gradient then
// takes f' image by image).
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "../BackendTestUtil.h"
#include "../PlannedStepTestUtil.h"
#include "CpuIsaTestUtil.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/multilayer/LayerSteps.h"

using namespace dl4cpp;
using testutil::filled;

namespace {

using Layers = std::vector<std::unique_ptr<layers::RuntimeLayer>>;

struct Shape2d {
  int64_t inChannels, size, outChannels, kernel, pad;
};

struct Run {
  std::vector<float> output, dw, db, inputGradient;
};

MultiLayerConfiguration configuration(const Shape2d& s, Activation activation) {
  return NeuralNetConfiguration::Builder()
      .list()
      .layer(ConvolutionLayer::Builder(s.kernel, s.kernel)
                 .padding(s.pad, s.pad)
                 .nOut(s.outChannels)
                 .activation(activation)
                 .leakyReluAlpha(0.1)
                 .build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::convolutionalFlat(s.size, s.size, s.inChannels))
      .build();
}

// The convolution alone, planned (its CPU step) or as a single-layer step, on its own buffers.
Run runConvolution(const Shape2d& s, Activation activation, bool planned, bool wantInputGradient,
                   int threads) {
  const MultiLayerConfiguration conf = configuration(s, activation);
  // The output layer too, though only the convolution's step runs: the network's last layer gets
  // a gradient already through its activation.
  DeviceContext ctx(Device::cpu(), threads);
  ctx.bindToCurrentThread();
  testutil::SteppedLayers stepped = testutil::steppedLayers(conf, conf.layers.size(), ctx, planned);
  std::vector<std::unique_ptr<NetworkStep>>& steps = stepped.steps;
  REQUIRE(steps.size() == 2u);

  constexpr int64_t kBatch = 3;
  const int64_t outSize = s.size - s.kernel + 1 + 2 * s.pad;
  const Shape outShape{kBatch, s.outChannels, outSize, outSize};
  std::vector<Tensor> inputs{filled(Shape{kBatch, s.inChannels, s.size, s.size}, 7)};
  std::vector<Tensor> outputs{Tensor(outShape)};
  std::vector<Tensor> gradients{filled(outShape, 8)};
  const LayerTensors t{inputs, outputs, gradients};
  Tensor inputGradient(inputs[0].shape());
  steps[0]->forward(ctx, t, ForwardContext{true, 0});
  steps[0]->backward(ctx, t, wantInputGradient ? &inputGradient : nullptr);
  return {outputs[0].toVector(), stepped.grads[1].toVector(), stepped.grads[0].toVector(),
          inputGradient.toVector()};
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("CPU plan: a convolution with RELU or LEAKYRELU and no pooling after is a step") {
    for (Activation activation : {Activation::RELU, Activation::LEAKYRELU}) {
      const MultiLayerConfiguration conf = configuration({2, 12, 4, 3, 1}, activation);
      Layers layers;
      for (const auto& layer : conf.layers) layers.push_back(layer->instantiate());
      cpu::CpuBackend backend;
      const auto steps = backend.planSteps(describeSequence(layers));
      REQUIRE(steps.size() == 1u);
      CHECK(steps[0]->first() == 0);
      CHECK(steps[0]->count() == 1);
    }
    // Other activations (the identity included: nothing to fuse) are not planned.
    for (Activation activation : {Activation::IDENTITY, Activation::TANH, Activation::RELU6}) {
      const MultiLayerConfiguration conf = configuration({2, 12, 4, 3, 1}, activation);
      Layers layers;
      for (const auto& layer : conf.layers) layers.push_back(layer->instantiate());
      cpu::CpuBackend backend;
      CHECK(backend.planSteps(describeSequence(layers)).empty());
    }
  }

  TEST_CASE("CPU plan: the convolution + activation step equals the layer by itself, bit for bit") {
    // A VGG-style 3x3 with padding 1 (3x3 Winograd at avx2), a first layer's single input channel
    // (im2col + sgemm, and its weight gradient image by image below avx512), and 5x5 without
    // padding on 8-wide rows (the direct forward kernel at avx2 and avx512).
    const Shape2d shapes[] = {{8, 12, 16, 3, 1}, {1, 12, 6, 3, 1}, {2, 12, 6, 5, 0}};
    for (const Shape2d& s : shapes)
      for (Activation activation : {Activation::RELU, Activation::LEAKYRELU})
        for (int threads : {1, 2})
          for (bool inputGradient : {false, true}) {
            INFO(s.inChannels << " -> " << s.outChannels << " " << s.kernel << "x" << s.kernel
                              << ", " << toString(activation) << ", threads " << threads
                              << ", input gradient " << inputGradient);
            const Run layer = runConvolution(s, activation, false, inputGradient, threads);
            const Run step = runConvolution(s, activation, true, inputGradient, threads);
            CHECK(step.output == layer.output);
            CHECK(step.dw == layer.dw);
            CHECK(step.db == layer.db);
            CHECK(step.inputGradient == layer.inputGradient);
          }
  }
}
