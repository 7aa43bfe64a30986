#pragma once
// Darknet19 (DL4J's zoo Darknet19; Redmon and Farhadi, YOLO9000, 2016): 18 convolutions (Same
// mode, no bias, each followed by batch norm and leaky ReLU with slope 0.1), 3x3 ones doubling the
// channels from 32 to 1024 with 1x1 ones halving them in between, 2x2/2 max pooling after the 1st,
// 2nd, 5th, 8th and 13th; then a 1x1 convolution to one channel per class, global average
// pooling, and a loss layer applying softmax and the negative log-likelihood (DL4J's softmax
// ActivationLayer and LossLayer in one: a LossLayer takes the probabilities of its own activation).
// Default input {3, 224, 224} and 1000 classes: 20,842,376 parameters plus 14,400 batch-norm
// running statistics, 20,856,776 values in all (the count Keras and DL4J report, which includes the
// running statistics).
//   ComputationGraph net = Darknet19::builder().numClasses(10).inputShape({3, 64,
//   64}).build().init();
#include "nn/conf/graph/ComputationGraphConfiguration.h"
#include "nn/graph/ComputationGraph.h"
#include "nn/zoo/ZooModel.h"

namespace dl4cpp {

class Darknet19 : public ZooModel<Darknet19> {
 public:
  Darknet19() : ZooModel(1000, {3, 224, 224}, Nesterovs(1e-3, 0.9)) {}
  ComputationGraphConfiguration conf() const;
  ComputationGraph init() const;
};

}  // namespace dl4cpp
