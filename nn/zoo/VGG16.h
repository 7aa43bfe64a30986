#pragma once
// VGG16 (DL4J's zoo VGG16; Simonyan and Zisserman, 2014, configuration D): thirteen 3x3
// convolutions (ReLU, Same mode) in five blocks of 64, 128, 256, 512, 512 channels, each block
// ending in 2x2 max pooling, then two dense layers of 4096 (ReLU) and a softmax output. Default
// input {3, 224, 224} and 1000 classes: 138,357,544 parameters, the published count.
//   MultiLayerNetwork net = VGG16::builder().numClasses(5).inputShape({3, 64, 64}).build().init();
#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/multilayer/MultiLayerNetwork.h"
#include "nn/zoo/ZooModel.h"

namespace dl4cpp {

class VGG16 : public ZooModel<VGG16> {
 public:
  VGG16() : ZooModel(1000, {3, 224, 224}, Nesterovs(1e-2, 0.9)) {}
  MultiLayerConfiguration conf() const;
  MultiLayerNetwork init() const;
};

}  // namespace dl4cpp
