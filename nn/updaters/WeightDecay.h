#pragma once
// DL4J's WeightDecay regularisation (org.nd4j.linalg.learning.regularization.WeightDecay):
// decoupled from the gradient, it adds coeff * (applyLR ? the updater's learning rate : 1) * param
// to the update the updater produced (after it, unlike l1 and l2); its score term is
// 0.5 * coeff * ||param||^2. Set with weightDecay(coeff, applyLR) / weightDecayBias(...) on
// NeuralNetConfiguration::Builder or a layer's builder.
namespace dl4cpp {

struct WeightDecay {
  double coeff = 0;
  bool applyLR = true;  // DL4J's weightDecay(coeff) applies the learning rate
};

}  // namespace dl4cpp
