#pragma once
// ResNet50 (DL4J's zoo ResNet50; He et al., 2015, the Keras layout DL4J follows): a 7x7/2
// convolution (after zero padding of 3), batch norm, ReLU and 3x3/2 max pooling; then 16
// bottleneck blocks (1x1, 3x3, 1x1 convolutions, each with batch norm) in four stages of 3, 4, 6
// and 3 blocks of 256, 512, 1024 and 2048 channels, each stage opening with a projection shortcut
// (stride 2 from the second stage on) and continuing with identity shortcuts; global average
// pooling and a softmax output. Default input {3, 224, 224} and 1000 classes: 25,583,592
// parameters plus 53,120 batch-norm running statistics (layer state), 25,636,712 values in all,
// the published count (which counts the running statistics, as DL4J and Keras do).
//   ComputationGraph net = ResNet50::builder().numClasses(10).inputShape({3, 64,
//   64}).build().init();
#include "nn/conf/graph/ComputationGraphConfiguration.h"
#include "nn/graph/ComputationGraph.h"
#include "nn/zoo/ZooModel.h"

namespace dl4cpp {

class ResNet50 : public ZooModel<ResNet50> {
 public:
  ResNet50() : ZooModel(1000, {3, 224, 224}, Nesterovs(1e-1, 0.9)) {}
  ComputationGraphConfiguration conf() const;
  ComputationGraph init() const;
};

}  // namespace dl4cpp
