#include "nn/zoo/VGG16.h"

#include "nn/conf/layers/ConvolutionLayer.h"
#include "nn/conf/layers/DenseLayer.h"
#include "nn/conf/layers/OutputLayer.h"
#include "nn/conf/layers/SubsamplingLayer.h"

namespace dl4cpp {

MultiLayerConfiguration VGG16::conf() const {
  const auto& [channels, height, width] = inputShape_;
  auto list = NeuralNetConfiguration::Builder()
                  .seed(seed_)
                  .updater(updater_)
                  .convolutionMode(ConvolutionMode::Same)
                  .list();
  // Configuration D: convolutions per block and their channels.
  constexpr int kConvs[] = {2, 2, 3, 3, 3};
  constexpr int64_t kChannels[] = {64, 128, 256, 512, 512};
  for (int block = 0; block < 5; ++block) {
    for (int c = 0; c < kConvs[block]; ++c)
      list.layer(ConvolutionLayer::Builder(3, 3)
                     .nOut(kChannels[block])
                     .activation(Activation::RELU)
                     .build());
    list.layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build());
  }
  for (int d = 0; d < 2; ++d)
    list.layer(DenseLayer::Builder().nOut(4096).activation(Activation::RELU).build());
  list.layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(numClasses_)
                 .activation(Activation::SOFTMAX)
                 .build());
  return list.setInputType(InputType::convolutional(height, width, channels)).build();
}

MultiLayerNetwork VGG16::init() const {
  MultiLayerNetwork net(conf());
  net.init();
  return net;
}

}  // namespace dl4cpp
