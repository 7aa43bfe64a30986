#pragma once
// DL4J's GradientNormalization of each layer's gradient (BaseMultiLayerUpdater.preApply): run by
// MultiLayerNetwork::applyUpdate() after the gradient has been scaled by 1 / batch and before
// regularisation and the updater, in DL4J's order. Every norm a step needs is asked of the backend
// in one call (one device wait on a GPU); the views and result buffers are made once, so applying
// it allocates nothing.
#include <vector>

#include "nn/conf/Enums.h"
#include "nn/profiling/LayerProfiler.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class Backend;

class GradientNormalizer {
 public:
  // Layer `layer` normalises its gradient by `mode`: `parameterGradients` are its parameters'
  // gradient views in order, and `layerGradient` all of them together (they are adjacent in the
  // flat gradient buffer). Mode None adds nothing.
  void addLayer(int layer, GradientNormalization mode, double threshold,
                const std::vector<Tensor>& parameterGradients, const Tensor& layerGradient);
  bool empty() const { return groups_.empty(); }

  // Normalises every added gradient in place; ops are charged to each layer on `profiler` (when
  // there is one), the norms to LayerProfiler::kNetwork.
  void apply(Backend& backend, LayerProfiler* profiler);

 private:
  // One gradient normalised as a whole: a layer's, or one parameter's (the PerParamType modes).
  struct Group {
    int layer = 0;
    GradientNormalization mode = GradientNormalization::None;
    double threshold = 0;
    Tensor gradient;
    int normIndex = -1;  // into norms_, or -1 (ClipElementWiseAbsoluteValue needs no norm)
  };
  std::vector<Group> groups_;
  std::vector<Tensor> normed_;  // the gradients whose L2 norm the step needs
  std::vector<double> norms_;   // their sums of squares
};

}  // namespace dl4cpp
