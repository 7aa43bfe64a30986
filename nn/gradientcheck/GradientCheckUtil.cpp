#include "nn/gradientcheck/GradientCheckUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "nn/graph/ComputationGraph.h"
#include "nn/multilayer/MultiLayerNetwork.h"

namespace dl4cpp {

namespace {

// Compares analytic[i] with central differences of `loss` when values[i] moves by +-epsilon, for
// i from `from` to `to` (exclusive; -1: the end).
void compare(const char* what, float* values, const std::vector<float>& analytic, int64_t from,
             const std::function<double()>& loss, const GradientCheckUtil::Options& o,
             GradientCheckUtil::Result& r, int64_t to = -1) {
  const int64_t n = (to < 0 ? static_cast<int64_t>(analytic.size()) : to) - from;
  const int64_t step =
      o.maxChecksPerTensor > 0 ? std::max<int64_t>(1, n / o.maxChecksPerTensor) : 1;
  for (int64_t i = from; i < from + n; i += step) {
    const float original = values[i];
    values[i] = original + static_cast<float>(o.epsilon);
    const double plus = loss();
    values[i] = original - static_cast<float>(o.epsilon);
    const double minus = loss();
    values[i] = original;
    const double numeric = (plus - minus) / (2 * o.epsilon);
    const double a = analytic[static_cast<size_t>(i)];
    const double absError = std::fabs(a - numeric);
    const double scale = std::max(std::fabs(a), std::fabs(numeric));
    const double relError = scale > 0 ? absError / scale : 0.0;
    ++r.checked;
    if (absError > o.minAbsoluteError) r.maxRelativeError = std::max(r.maxRelativeError, relError);
    if (relError > o.maxRelativeError && absError > o.minAbsoluteError) {
      ++r.failed;
      if (r.failed <= 20)
        r.report += fmt::format("{}[{}]: analytic {:.6g}, numeric {:.6g}, relative error {:.3g}\n",
                                what, i, a, numeric, relError);
    }
  }
}

}  // namespace

GradientCheckUtil::Result GradientCheckUtil::checkGradients(MultiLayerNetwork& model,
                                                            const DataSet& data,
                                                            const Options& options) {
  Result r;
  DataSet probe{data.features.clone(), data.labels, data.featuresMask, data.labelsMask};
  model.computeGradientAndScore(probe, options.checkInputGradient);
  const std::vector<float> paramGrad = model.gradient().toVector();
  std::vector<float> inputGrad;
  if (options.checkInputGradient) inputGrad = model.inputGradient().toVector();

  // The loss at perturbed values needs the forward pass only: the score in training mode (as
  // computeGradientAndScore runs it) less its regularisation terms, which the analytic gradient
  // leaves out; in double, the difference is the data loss to its last bits.
  auto loss = [&] { return model.score(probe, true) - model.calcRegularizationScore(); };
  Tensor params = model.params();
  // Frozen layers' parameters (the start of the buffer) have no gradient to check.
  compare("param", params.data(), paramGrad, model.numFrozenParams(), loss, options, r);
  if (options.checkInputGradient)
    compare("input", probe.features.data(), inputGrad, 0, loss, options, r);

  r.passed = r.failed == 0;
  r.report +=
      fmt::format("gradient check {}: {} values checked, {} failed, max relative error {:.3g}\n",
                  r.passed ? "passed" : "FAILED", r.checked, r.failed, r.maxRelativeError);
  return r;
}

GradientCheckUtil::Result GradientCheckUtil::checkGradients(ComputationGraph& model,
                                                            const MultiDataSet& data,
                                                            const Options& options) {
  Result r;
  MultiDataSet probe;
  for (const Tensor& f : data.features) probe.features.push_back(f.clone());
  probe.labels = data.labels;
  probe.featuresMasks = data.featuresMasks;
  probe.labelsMasks = data.labelsMasks;
  model.computeGradientAndScore(probe, options.checkInputGradient);
  const std::vector<float> paramGrad = model.gradient().toVector();
  std::vector<std::vector<float>> inputGrads;
  if (options.checkInputGradient)
    for (const Tensor& g : model.inputGradients()) inputGrads.push_back(g.toVector());

  auto loss = [&] { return model.score(probe, true) - model.calcRegularizationScore(); };
  Tensor params = model.params();
  // Each trainable layer's parameters (frozen layers' have no gradient), in buffer order.
  int64_t offset = 0;
  for (const auto& v : model.getConfiguration().vertices) {
    if (!v.layer) continue;
    const int64_t count = v.layer->numParams();
    if (!v.layer->frozen && count > 0)
      compare("param", params.data(), paramGrad, offset, loss, options, r, offset + count);
    offset += count;
  }
  for (size_t i = 0; i < inputGrads.size(); ++i)
    compare(i == 0 ? "input0" : "input", probe.features[i].data(), inputGrads[i], 0, loss, options,
            r);

  r.passed = r.failed == 0;
  r.report +=
      fmt::format("gradient check {}: {} values checked, {} failed, max relative error {:.3g}\n",
                  r.passed ? "passed" : "FAILED", r.checked, r.failed, r.maxRelativeError);
  return r;
}

}  // namespace dl4cpp
