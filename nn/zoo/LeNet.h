#pragma once
// LeNet (DL4J's zoo LeNet): two 5x5 convolutions (20 and 50 channels, ReLU, Same mode) each
// followed by 2x2 max pooling, a dense layer of 500 (ReLU) and a softmax output. Default input
// {1, 28, 28} and 10 classes: 1,256,080 parameters.
//   MultiLayerNetwork net = LeNet::builder().numClasses(10).build().init();
#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/multilayer/MultiLayerNetwork.h"
#include "nn/zoo/ZooModel.h"

namespace dl4cpp {

class LeNet : public ZooModel<LeNet> {
 public:
  LeNet() : ZooModel(10, {1, 28, 28}, Adam(1e-3)) {}
  MultiLayerConfiguration conf() const;
  // The network, initialised from the seed (no pretrained weights: see ZooModel.h).
  MultiLayerNetwork init() const;
};

}  // namespace dl4cpp
