#include "nn/zoo/SimpleCNN.h"

#include "nn/conf/layers/ActivationLayer.h"
#include "nn/conf/layers/BatchNormalization.h"
#include "nn/conf/layers/ConvolutionLayer.h"
#include "nn/conf/layers/DropoutLayer.h"
#include "nn/conf/layers/GlobalPoolingLayer.h"
#include "nn/conf/layers/LossLayer.h"
#include "nn/conf/layers/SubsamplingLayer.h"

namespace dl4cpp {

MultiLayerConfiguration SimpleCNN::conf() const {
  const auto& [channels, height, width] = inputShape_;
  auto list = NeuralNetConfiguration::Builder()
                  .seed(seed_)
                  .activation(Activation::IDENTITY)
                  .weightInit(WeightInit::RELU)
                  .updater(updater_)
                  .convolutionMode(ConvolutionMode::Same)
                  .list();
  auto conv = [&](int64_t k, int64_t nOut) {
    list.layer(ConvolutionLayer::Builder(k, k).nOut(nOut).build());
  };
  // Blocks 1 to 4: conv, BN, conv, BN, ReLU, 2x2 average pooling, dropout.
  constexpr int64_t kKernels[] = {7, 5, 3, 3};
  constexpr int64_t kChannels[] = {16, 32, 64, 128};
  for (int block = 0; block < 4; ++block) {
    conv(kKernels[block], kChannels[block]);
    list.layer(BatchNormalization::Builder().build());
    conv(kKernels[block], kChannels[block]);
    list.layer(BatchNormalization::Builder().build());
    list.layer(ActivationLayer::Builder(Activation::RELU).build());
    list.layer(SubsamplingLayer::Builder(PoolingType::AVG, 2, 2, 2, 2).build());
    list.layer(DropoutLayer::Builder(0.5).build());
  }
  // Block 5: the last convolution has one channel per class, averaged over the image.
  conv(3, 256);
  list.layer(BatchNormalization::Builder().build());
  conv(3, numClasses_);
  list.layer(GlobalPoolingLayer::Builder(PoolingType::AVG).build());
  list.layer(LossLayer::Builder(LossFunction::MCXENT).activation(Activation::SOFTMAX).build());
  return list.setInputType(InputType::convolutional(height, width, channels)).build();
}

MultiLayerNetwork SimpleCNN::init() const {
  MultiLayerNetwork net(conf());
  net.init();
  return net;
}

}  // namespace dl4cpp
