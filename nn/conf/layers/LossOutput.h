#pragma once
// What a layer that ends the network with a loss declares (the configuration side of DL4J's
// IOutputLayer): its loss function, checked against the activation that produces the loss's
// input. OutputLayer (dense + loss) and LossLayer (loss only) derive from it, and so may a user's
// layer type. NeuralNetConfiguration's list builder requires the last layer, and only the last,
// to be one; MultiLayerNetwork takes the loss and its gradient from that layer's runtime object,
// which derives from layers::LossOutputRuntime and returns itself from asLossOutput().
#include <string>

#include "nn/conf/Enums.h"
#include "nn/conf/LayerFields.h"

namespace dl4cpp {

class LossOutput {
 public:
  virtual ~LossOutput() = default;

  LossFunction lossFunction = LossFunction::MCXENT;

 protected:
  LossOutput() = default;
  LossOutput(const LossOutput&) = default;
  LossOutput& operator=(const LossOutput&) = default;

  // ConfigError prefixed with `where` when `activation` cannot produce what the loss needs: the
  // losses that take the logarithm of a probability (NEGATIVELOGLIKELIHOOD, MCXENT, KL_DIVERGENCE)
  // take SOFTMAX or SIGMOID, XENT values in (0, 1) (SIGMOID). The others take any activation.
  void validateLoss(const std::string& where, Activation activation) const;
  void writeLoss(LayerFieldWriter& out) const;
  void readLoss(const LayerFieldReader& in);
};

}  // namespace dl4cpp
