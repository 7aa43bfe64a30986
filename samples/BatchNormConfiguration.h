#pragma once
// The network of MATLAB's custom parallel-training example, in DL4J's terms:
// conv 5x5x20 -> BN -> ReLU -> conv 3x3x20 pad 1 -> BN -> ReLU -> conv 3x3x20 pad 1 -> BN -> ReLU
// -> fully connected softmax output, for 28x28 grey images and 10 classes. The convolutions have
// no activation; each batch normalisation applies the ReLU (DL4J's idiom: the BN layer's
// activation). Shared by the sample and the benchmarks.
#include <dl4cpp/dl4cpp.h>

#include "SoftmaxOutput.h"

namespace samples {

inline dl4cpp::MultiLayerConfiguration batchNormConfiguration(uint64_t seed = 123) {
  using namespace dl4cpp;
  auto conv = [](int64_t k, int64_t pad) {
    return ConvolutionLayer::Builder(k, k)
        .stride(1, 1)
        .padding(pad, pad)
        .nOut(20)
        .activation(Activation::IDENTITY)
        .build();
  };
  auto bnRelu = [] { return BatchNormalization::Builder().activation(Activation::RELU).build(); };
  return NeuralNetConfiguration::Builder()
      .seed(seed)
      .weightInit(WeightInit::RELU)
      .updater(Adam(1e-3))
      .list()
      .layer(conv(5, 0))
      .layer(bnRelu())
      .layer(conv(3, 1))
      .layer(bnRelu())
      .layer(conv(3, 1))
      .layer(bnRelu())
      .layer(xavierSoftmaxOutput())
      .setInputType(InputType::convolutionalFlat(28, 28, 1))
      .build();
}

}  // namespace samples
