#include "nn/zoo/LeNet.h"

#include "nn/conf/layers/ConvolutionLayer.h"
#include "nn/conf/layers/DenseLayer.h"
#include "nn/conf/layers/OutputLayer.h"
#include "nn/conf/layers/SubsamplingLayer.h"

namespace dl4cpp {

MultiLayerConfiguration LeNet::conf() const {
  const auto& [channels, height, width] = inputShape_;
  auto pool = [] { return SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build(); };
  return NeuralNetConfiguration::Builder()
      .seed(seed_)
      .updater(updater_)
      .convolutionMode(ConvolutionMode::Same)
      .list()
      .layer(ConvolutionLayer::Builder(5, 5).nOut(20).activation(Activation::RELU).build())
      .layer(pool())
      .layer(ConvolutionLayer::Builder(5, 5).nOut(50).activation(Activation::RELU).build())
      .layer(pool())
      .layer(DenseLayer::Builder().nOut(500).activation(Activation::RELU).build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(numClasses_)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::convolutional(height, width, channels))
      .build();
}

MultiLayerNetwork LeNet::init() const {
  MultiLayerNetwork net(conf());
  net.init();
  return net;
}

}  // namespace dl4cpp
