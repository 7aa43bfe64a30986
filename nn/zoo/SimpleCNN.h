#pragma once
// SimpleCNN (DL4J's zoo SimpleCNN, after oarriaga's face_classification simple_CNN): five blocks
// of two convolutions (Same mode, each followed by batch norm; 7x7 16, 5x5 32, 3x3 64, 3x3 128
// channels, ReLU, 2x2 average pooling and dropout 0.5 after each of the first four), the fifth
// block 3x3 256 then 3x3 numClasses, global average pooling and softmax. DL4J ends the list with a
// softmax ActivationLayer, which no network can fit (it has no loss); here the last layer is a
// LossLayer (MCXENT) with the softmax activation: the same outputs and parameters, and trainable.
// Default input {3, 48, 48} and 10 classes; at 7 classes (the reference's emotions) 643,031
// parameters plus 1,472 batch-norm running statistics.
//   MultiLayerNetwork net = SimpleCNN::builder().numClasses(7).build().init();
#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/multilayer/MultiLayerNetwork.h"
#include "nn/zoo/ZooModel.h"

namespace dl4cpp {

class SimpleCNN : public ZooModel<SimpleCNN> {
 public:
  SimpleCNN() : ZooModel(10, {3, 48, 48}, AdaDelta()) {}
  MultiLayerConfiguration conf() const;
  MultiLayerNetwork init() const;
};

}  // namespace dl4cpp
