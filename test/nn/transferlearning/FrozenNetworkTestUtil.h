#pragma once
// A small trained network and a copy of it with frozen layers, for the tests of frozen layers and
// transfer learning. The network carries every training setting that would move a parameter or a
// running statistic if a frozen layer took it (Adam, l2, weight decay, gradient normalisation,
// dropout, batch normalisation), so that "bit-identical" means something.
#include <dl4cpp/dl4cpp.h>

#include "nn/util/ModelFileTestUtil.h"
#include "parallel/ParallelTestUtil.h"

namespace testutil {

// Dense 6 -> 8 (TANH, input dropout 0.8) -> batch normalisation -> dense 8 -> 10 (TANH) -> batch
// normalisation -> softmax 3 (MCXENT), for testutil::batches' data.
inline dl4cpp::MultiLayerConfiguration frozenTestNet() {
  using namespace dl4cpp;
  return NeuralNetConfiguration::Builder()
      .seed(21)
      .updater(Adam(0.05))
      .l2(1e-3)
      .weightDecay(1e-3)
      .gradientNormalization(GradientNormalization::RenormalizeL2PerLayer)
      .list()
      .layer(DenseLayer::Builder().nIn(6).nOut(8).activation(Activation::TANH).dropOut(0.8).build())
      .layer(BatchNormalization::Builder().build())
      .layer(DenseLayer::Builder().nOut(10).activation(Activation::TANH).build())
      .layer(BatchNormalization::Builder().build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .build();
}

// frozenTestNet() after `steps` minibatches of 16 (its running statistics away from 0 and 1).
inline dl4cpp::MultiLayerNetwork pretrainedTestNet(int steps = 5) {
  dl4cpp::MultiLayerNetwork model(frozenTestNet(), dl4cpp::Device::cpu(), 1);
  model.init();
  for (const auto& batch : batches(steps, 16, 41)) model.fit(batch);
  return model;
}

// `original` with layers 0 to `lastFrozen` frozen, nothing else changed.
inline dl4cpp::MultiLayerNetwork withFrozenLayers(const dl4cpp::MultiLayerNetwork& original,
                                                  int lastFrozen) {
  return dl4cpp::TransferLearning::Builder(original).setFeatureExtractor(lastFrozen).build();
}

// Values [begin, end) of `t`.
inline std::vector<float> range(const dl4cpp::Tensor& t, int64_t begin, int64_t end) {
  const std::vector<float> all = t.toVector();
  return {all.begin() + begin, all.begin() + end};
}

}  // namespace testutil
