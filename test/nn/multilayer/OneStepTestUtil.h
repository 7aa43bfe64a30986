#pragma once
// The tiny network the tests of one training step use, and one fit() of it with what such a test
// checks: the parameters before and after, the raw gradient, the loss and the scores.
#include <dl4cpp/dl4cpp.h>

#include <vector>

namespace testutil {

// The output layer of tinyNet() unless a test gives its own: 2 outputs, identity, MSE.
inline dl4cpp::OutputLayer::Builder tinyOutput() {
  using namespace dl4cpp;
  return std::move(
      OutputLayer::Builder(LossFunction::MSE).nOut(2).activation(Activation::IDENTITY));
}

// Dense 3 -> 2 (tanh), then `output`, under `network`'s network-wide settings. Flat layout:
// layer 0 W [0, 6), b [6, 8); layer 1 W [8, 12), b [12, 14).
inline dl4cpp::MultiLayerConfiguration tinyNet(
    const dl4cpp::NeuralNetConfiguration::Builder& network,
    const dl4cpp::OutputLayer& output = tinyOutput().build()) {
  using namespace dl4cpp;
  return network.list()
      .layer(DenseLayer::Builder().nIn(3).nOut(2).activation(Activation::TANH).build())
      .layer(output)
      .build();
}

// Two examples of 3 features with the given 2 labels each.
inline dl4cpp::DataSet tinyBatch(const std::vector<float>& labels) {
  using namespace dl4cpp;
  return {Tensor::fromVector({2, 3}, {0.5f, -1, 0.25f, 1, 0.5f, -0.5f}),
          Tensor::fromVector({2, 2}, labels)};
}

struct OneStep {
  std::vector<double> before, gradient, after;
  double loss = 0;                 // computeGradientAndScore(): the mean data loss
  double score = 0;                // score() after the fit: loss + regularisation before the step
  double regularizationAfter = 0;  // calcRegularizationScore() after the step
};

// One fit() of a new network of `conf` on `batch`.
inline OneStep fitOnce(const dl4cpp::MultiLayerConfiguration& conf, const dl4cpp::DataSet& batch) {
  dl4cpp::MultiLayerNetwork model(conf);
  model.init();
  auto doubles = [](const dl4cpp::Tensor& t) {
    const std::vector<float> v = t.toVector();
    return std::vector<double>(v.begin(), v.end());
  };
  OneStep s;
  s.before = doubles(model.params());
  s.loss = model.computeGradientAndScore(batch);
  s.gradient = doubles(model.gradient());
  model.fit(batch);
  s.after = doubles(model.params());
  s.score = model.score();
  s.regularizationAfter = model.calcRegularizationScore();
  return s;
}

}  // namespace testutil
