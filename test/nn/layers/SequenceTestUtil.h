#pragma once
// Helpers for the tests of the sequence layers: random sequences with per-step one-hot labels,
// and a small network around a recurrent layer ending in an RnnOutputLayer.
#include <dl4cpp/dl4cpp.h>

#include <cstdint>

#include "nn/tensor/Random.h"

namespace testutil {

// n sequences (n, features, steps) uniform in [-1, 1) with one-hot labels (n, classes, steps).
inline dl4cpp::DataSet randomSequences(int64_t n, int64_t features, int64_t steps, int64_t classes,
                                       uint64_t seed) {
  dl4cpp::Random random(seed);
  dl4cpp::Tensor x(dl4cpp::Shape{n, features, steps});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data()[i] = static_cast<float>(random.uniform(-1.0, 1.0));
  dl4cpp::Tensor labels(dl4cpp::Shape{n, classes, steps});
  for (int64_t e = 0; e < n; ++e)
    for (int64_t s = 0; s < steps; ++s) {
      const auto c = static_cast<int64_t>(random.nextU64() % static_cast<uint64_t>(classes));
      labels.data()[(e * classes + c) * steps + s] = 1;
    }
  return {x, labels};
}

// An RnnOutputLayer of `nOut` classes: softmax, MCXENT.
inline dl4cpp::RnnOutputLayer perStepSoftmax(int64_t nOut = 3) {
  using namespace dl4cpp;
  return RnnOutputLayer::Builder(LossFunction::MCXENT)
      .nOut(nOut)
      .activation(Activation::SOFTMAX)
      .build();
}

// Recurrent(features) -> `layer` -> RnnOutputLayer (softmax, MCXENT, `classes`), initialised.
inline dl4cpp::MultiLayerNetwork sequenceNetwork(const dl4cpp::Layer& layer, int64_t features,
                                                 int64_t classes, uint64_t seed = 12) {
  using namespace dl4cpp;
  MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                            .seed(seed)
                            .list()
                            .layer(layer)
                            .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                                       .nOut(classes)
                                       .activation(Activation::SOFTMAX)
                                       .build())
                            .setInputType(InputType::recurrent(features))
                            .build());
  net.init();
  return net;
}

}  // namespace testutil
