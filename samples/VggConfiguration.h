#pragma once
// A VGG-style network for 28x28 grey images and 10 classes (issue 17's general network for the
// peer benchmark): 3x3 convolutions with padding 1 in pairs, each pair followed by 2x2/2 MAX
// pooling, then a dense layer:
//   conv 3x3x32 pad 1 ReLU -> conv 3x3x32 pad 1 ReLU -> max pool 2x2/2      (28x28 -> 14x14)
//   -> conv 3x3x64 pad 1 ReLU -> conv 3x3x64 pad 1 ReLU -> max pool 2x2/2   (14x14 -> 7x7)
//   -> dense 256 ReLU -> softmax output 10
// He-normal initialisation (WeightInit::RELU) with the output layer XAVIER, Adam(1e-3). Shared by
// the peer benchmark and the per-layer breakdown.
#include <dl4cpp/dl4cpp.h>

#include "SoftmaxOutput.h"

namespace samples {

inline dl4cpp::MultiLayerConfiguration vggConfiguration(uint64_t seed = 123) {
  using namespace dl4cpp;
  auto conv = [](int64_t channels) {
    return ConvolutionLayer::Builder(3, 3)
        .stride(1, 1)
        .padding(1, 1)
        .nOut(channels)
        .activation(Activation::RELU)
        .build();
  };
  auto pool = [] {
    return SubsamplingLayer::Builder(PoolingType::MAX).kernelSize(2, 2).stride(2, 2).build();
  };
  return NeuralNetConfiguration::Builder()
      .seed(seed)
      .weightInit(WeightInit::RELU)
      .updater(Adam(1e-3))
      .list()
      .layer(conv(32))
      .layer(conv(32))
      .layer(pool())
      .layer(conv(64))
      .layer(conv(64))
      .layer(pool())
      .layer(DenseLayer::Builder().activation(Activation::RELU).nOut(256).build())
      .layer(xavierSoftmaxOutput())
      .setInputType(InputType::convolutionalFlat(28, 28, 1))
      .build();
}

}  // namespace samples
