#pragma once
#include <dl4cpp/nn/conf/layers/OutputLayer.h>
#include <dl4cpp/nn/layers/DenseLayer.h>
#include <dl4cpp/nn/layers/LossOutputRuntime.h>

namespace dl4cpp::layers {

// Runtime of dl4cpp::OutputLayer: a dense layer whose output gradient comes from the loss.
class OutputLayer : public DenseLayer, public LossOutputRuntime {
 public:
  explicit OutputLayer(const dl4cpp::OutputLayer& conf)
      : DenseLayer(conf), LossOutputRuntime(conf.lossFunction) {}
  LossOutputRuntime* asLossOutput() override { return this; }

 protected:
  const LayerActivation& lossActivation() const override { return activation_; }
};

}  // namespace dl4cpp::layers
