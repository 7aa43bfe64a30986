#pragma once
// AlexNet (DL4J's zoo AlexNet: Krizhevsky et al., 2012, without the two-GPU grouping, with the
// Caffe bvlc_alexnet initialisation): 11x11/4 convolution of 96, local response normalisation,
// 3x3/2 max pooling; 5x5 convolution of 256 (padding 2), 3x3/2 max pooling, local response
// normalisation; 3x3 convolutions of 384, 384 and 256, 3x3/2 max pooling; dense layers of 4096
// and 4096 (dropout 0.5 on the second's input) and a softmax output; ReLU throughout, l2 5e-4,
// per-layer L2 gradient renormalisation. Default input {3, 224, 224} and 1000 classes:
// 62,378,344 parameters, the count of the ungrouped AlexNet.
//   MultiLayerNetwork net = AlexNet::builder().numClasses(5).inputShape({3, 64,
//   64}).build().init();
#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/multilayer/MultiLayerNetwork.h"
#include "nn/zoo/ZooModel.h"

namespace dl4cpp {

class AlexNet : public ZooModel<AlexNet> {
 public:
  AlexNet() : ZooModel(1000, {3, 224, 224}, Nesterovs(1e-2, 0.9)) {}
  MultiLayerConfiguration conf() const;
  MultiLayerNetwork init() const;
};

}  // namespace dl4cpp
