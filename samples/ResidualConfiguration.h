#pragma once
// A small ResNet-style network for 28x28 grey images and 10 classes, as a ComputationGraph:
//   stem:  conv 3x3x16 -> BN -> ReLU                                          (16, 28, 28)
//   res1:  conv 3x3x16 -> BN -> ReLU -> conv 3x3x16 -> BN, + input, ReLU      (16, 28, 28)
//   res2:  the same with 32 channels, the first conv stride 2, and a 1x1/2
//          convolution + BN as the shortcut (the shapes change)               (32, 14, 14)
//   res3:  likewise, 64 channels                                              (64, 7, 7)
//   global average pooling -> softmax output (negative log-likelihood)
// Convolutions have no bias (the BN after each has its own shift) and no activation; a BN applies
// the ReLU where one follows directly (DL4J's idiom), an ActivationLayer after each residual add.
// 3x3 convolutions pad 1 and 1x1 ones pad 0 (Truncate mode), as torch's Conv2d(padding=1) does,
// so the libtorch peer computes the same function. He-normal weights (WeightInit::RELU), the
// output XAVIER; Adam(1e-3). Shared by the sample (samples/parallel_resnet_fashion.cpp) and the
// peer benchmark (bench/peers, --network resnet).
#include <dl4cpp/dl4cpp.h>

#include <string>

#include "SoftmaxOutput.h"

namespace samples {

// `input`: InputType::convolutional(28, 28, 1) for images (N, 1, 28, 28), convolutionalFlat for
// rows of 784 pixels (MnistDataSetIterator).
inline dl4cpp::ComputationGraphConfiguration residualConfiguration(
    uint64_t seed = 123,
    const dl4cpp::InputType& input = dl4cpp::InputType::convolutional(28, 28, 1)) {
  using namespace dl4cpp;
  auto b = NeuralNetConfiguration::Builder()
               .seed(seed)
               .weightInit(WeightInit::RELU)
               .updater(Adam(1e-3))
               .convolutionMode(ConvolutionMode::Truncate)
               .graphBuilder();
  b.addInputs("input").setInputTypes(input);
  // conv k x k (stride s, pad k / 2) then BN (with ReLU when `relu`); returns the BN's name.
  auto convBn = [&b](const std::string& name, const std::string& from, int64_t k, int64_t s,
                     int64_t nOut, bool relu) {
    b.addLayer(name,
               ConvolutionLayer::Builder(k, k)
                   .stride(s, s)
                   .padding(k / 2, k / 2)
                   .nOut(nOut)
                   .hasBias(false)
                   .activation(Activation::IDENTITY)
                   .build(),
               from);
    b.addLayer(name + "_bn",
               BatchNormalization::Builder()
                   .activation(relu ? Activation::RELU : Activation::IDENTITY)
                   .build(),
               name);
    return name + "_bn";
  };
  auto residualBlock = [&](const std::string& name, const std::string& from, int64_t nOut,
                           int64_t stride) {
    std::string x = convBn(name + "_a", from, 3, stride, nOut, true);
    x = convBn(name + "_b", x, 3, 1, nOut, false);
    const std::string shortcut =
        stride == 1 ? from : convBn(name + "_proj", from, 1, stride, nOut, false);
    b.addVertex(name + "_add", ElementWiseVertex(ElementWiseVertex::Op::Add), x, shortcut);
    b.addLayer(name + "_relu", ActivationLayer::Builder(Activation::RELU).build(), name + "_add");
    return name + "_relu";
  };
  std::string x = convBn("stem", "input", 3, 1, 16, true);
  x = residualBlock("res1", x, 16, 1);
  x = residualBlock("res2", x, 32, 2);
  x = residualBlock("res3", x, 64, 2);
  b.addLayer("avg_pool", GlobalPoolingLayer::Builder(PoolingType::AVG).build(), x);
  b.addLayer("output", xavierSoftmaxOutput(), "avg_pool");
  b.setOutputs("output");
  return b.build();
}

}  // namespace samples
