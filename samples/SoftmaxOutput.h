#pragma once
// The output layer the Fashion-MNIST networks share (samples/BatchNormConfiguration.h,
// samples/VggConfiguration.h): softmax over 10 classes with the negative log-likelihood,
// XAVIER-initialised whatever the network's default.
#include <dl4cpp/dl4cpp.h>

namespace samples {

inline auto xavierSoftmaxOutput(int64_t classes = 10) {
  using namespace dl4cpp;
  return OutputLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD)
      .nOut(classes)
      .activation(Activation::SOFTMAX)
      .weightInit(WeightInit::XAVIER)
      .build();
}

}  // namespace samples
