#pragma once
// SqueezeNet (DL4J's zoo SqueezeNet: Iandola et al., 2016, version 1.1, the Keras model DL4J's
// weights came from): a 3x3/2 convolution of 64 and 3x3/2 max pooling; eight fire modules (a 1x1
// "squeeze" convolution, then 1x1 and 3x3 "expand" convolutions whose outputs a MergeVertex
// concatenates; ReLU after each) of 16/64, 16/64, 32/128, 32/128, 48/192, 48/192, 64/256 and
// 64/256 channels, with 3x3/2 max pooling after the second and the fourth; dropout 0.5, a 1x1
// convolution to one channel per class (ReLU), global average pooling and a loss layer with
// softmax and MCXENT. Default input
// {3, 227, 227} and 1000 classes: 1,235,496 parameters, the published count of SqueezeNet 1.1.
//   ComputationGraph net = SqueezeNet::builder().numClasses(10).inputShape({3, 64,
//   64}).build().init();
#include "nn/conf/graph/ComputationGraphConfiguration.h"
#include "nn/graph/ComputationGraph.h"
#include "nn/zoo/ZooModel.h"

namespace dl4cpp {

class SqueezeNet : public ZooModel<SqueezeNet> {
 public:
  SqueezeNet() : ZooModel(1000, {3, 227, 227}, AdaDelta()) {}
  ComputationGraphConfiguration conf() const;
  ComputationGraph init() const;
};

}  // namespace dl4cpp
