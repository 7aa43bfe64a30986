#include "nn/conf/layers/LossOutput.h"

#include "nn/core/Error.h"

namespace dl4cpp {

void LossOutput::validateLoss(const std::string& where, Activation activation) const {
  const bool needsProbabilities = lossFunction == LossFunction::NEGATIVELOGLIKELIHOOD ||
                                  lossFunction == LossFunction::MCXENT ||
                                  lossFunction == LossFunction::KL_DIVERGENCE;
  if (needsProbabilities && activation != Activation::SOFTMAX && activation != Activation::SIGMOID)
    throw ConfigError(where + ": loss " + toString(lossFunction) +
                      " needs probabilities, "
                      "but activation is " +
                      toString(activation) + "; use Activation::SOFTMAX");
  if (lossFunction == LossFunction::XENT && activation != Activation::SIGMOID)
    throw ConfigError(where + ": loss XENT needs outputs in (0, 1), but activation is " +
                      toString(activation) + "; use Activation::SIGMOID");
}

void LossOutput::writeLoss(LayerFieldWriter& out) const {
  out.enumValue("lossFunction", kLossNames, lossFunction);
}

void LossOutput::readLoss(const LayerFieldReader& in) {
  lossFunction = in.enumValue("lossFunction", kLossNames);
}

}  // namespace dl4cpp
