#include <dl4cpp/nn/conf/layers/OutputLayer.h>
#include <dl4cpp/nn/layers/OutputLayer.h>

namespace dl4cpp {

InputType OutputLayer::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  const InputType out = FeedForwardLayer::resolve(index, input, defaults);
  const Activation act = *activation;
  const bool needsProbabilities = lossFunction == LossFunction::NEGATIVELOGLIKELIHOOD ||
                                  lossFunction == LossFunction::MCXENT ||
                                  lossFunction == LossFunction::KL_DIVERGENCE;
  if (needsProbabilities && act != Activation::SOFTMAX && act != Activation::SIGMOID)
    throw ConfigError(where(index) + ": loss " + toString(lossFunction) +
                      " needs probabilities, "
                      "but activation is " +
                      toString(act) + "; use Activation::SOFTMAX");
  if (lossFunction == LossFunction::XENT && act != Activation::SIGMOID)
    throw ConfigError(where(index) + ": loss XENT needs outputs in (0, 1), but activation is " +
                      toString(act) + "; use Activation::SIGMOID");
  return out;
}

std::unique_ptr<layers::RuntimeLayer> OutputLayer::instantiate() const {
  return std::make_unique<layers::OutputLayer>(*this);
}

void OutputLayer::writeFields(LayerFieldWriter& out) const {
  FeedForwardLayer::writeFields(out);
  out.enumValue("lossFunction", kLossNames, lossFunction);
}

void OutputLayer::readFields(const LayerFieldReader& in) {
  FeedForwardLayer::readFields(in);
  lossFunction = in.enumValue("lossFunction", kLossNames);
}

}  // namespace dl4cpp
