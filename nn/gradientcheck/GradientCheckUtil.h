#pragma once
// GradientCheckUtil: compares a network's analytic gradients with central differences
// (DL4J's GradientCheckUtil), for the built-in layers and for any layer a user writes.
//
//   GradientCheckUtil::Result r = GradientCheckUtil::checkGradients(model, data);
//   if (!r.passed) std::cerr << r.report;
//
// Checks dL/dparams (every trainable parameter, or a strided subset: frozen layers' parameters
// have no gradient) and, optionally, dL/dfeatures (not with frozen layers, which pass no gradient:
// set checkInputGradient = false, or computeGradientAndScore's ConfigError follows). The
// loss is the mean data loss (no l2 term), computed in float32 like training; the defaults suit
// that precision. Use smooth activations (TANH, SIGMOID) and avoid ties in MAX pooling and exact
// zeros before RELU: central differences are meaningless across a kink.
#include <cstdint>
#include <string>

#include "iterators/DataSet.h"
#include "iterators/MultiDataSet.h"

namespace dl4cpp {

class MultiLayerNetwork;
class ComputationGraph;

class GradientCheckUtil {
 public:
  struct Options {
    double epsilon = 3e-3;           // perturbation: larger crosses MAX/RELU kinks, smaller
                                     // drowns in float32 rounding of the loss
    double maxRelativeError = 1e-2;  // |a - n| / max(|a|, |n|) allowed ...
    double minAbsoluteError = 1e-4;  // ... unless |a - n| is below this
    int64_t maxChecksPerTensor = 0;  // 0: check every parameter; else a strided subset
    bool checkInputGradient = true;
  };
  struct Result {
    bool passed = true;
    int64_t checked = 0;
    int64_t failed = 0;
    double maxRelativeError = 0;
    std::string report;  // one line per failure (first 20) and a summary
  };

  // The network must be initialised; its parameters are restored before returning.
  static Result checkGradients(MultiLayerNetwork& model, const DataSet& data,
                               const Options& options);
  static Result checkGradients(MultiLayerNetwork& model, const DataSet& data) {
    return checkGradients(model, data, Options{});
  }
  // The same for a graph: every trainable parameter and, optionally, every input's gradient; the
  // loss is the sum of the outputs' mean losses.
  static Result checkGradients(ComputationGraph& model, const MultiDataSet& data,
                               const Options& options);
  static Result checkGradients(ComputationGraph& model, const MultiDataSet& data) {
    return checkGradients(model, data, Options{});
  }
};

}  // namespace dl4cpp
