#pragma once
// Shared by the CPU plan's step tests: the first `count` layers of a configuration as runtime
// layers, layer 0's parameters filled (testutil::filled) and its gradients zeroed, and the steps
// the network would run them as: the backend's plan, completed with single-layer steps, or
// single-layer steps only.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "BackendTestUtil.h"
#include "nn/multilayer/LayerSteps.h"

namespace testutil {

struct SteppedLayers {
  std::vector<std::unique_ptr<dl4cpp::layers::RuntimeLayer>> layers;
  std::vector<dl4cpp::Tensor> params, grads;  // layer 0's, bound to it
  std::vector<std::unique_ptr<dl4cpp::NetworkStep>> steps;
};

inline SteppedLayers steppedLayers(const dl4cpp::MultiLayerConfiguration& conf, size_t count,
                                   dl4cpp::DeviceContext& ctx, bool planned) {
  SteppedLayers s;
  for (size_t i = 0; i < count; ++i) s.layers.push_back(conf.layers[i]->instantiate());
  int64_t salt = 1;
  for (const auto& spec : conf.layers[0]->paramSpecs()) {
    s.params.push_back(filled(spec.shape, ++salt));
    s.grads.emplace_back(spec.shape);
  }
  s.layers[0]->bindParams(s.params, s.grads);
  s.steps = planned ? dl4cpp::completePlan(
                          ctx.backend().planSteps(dl4cpp::describeSequence(s.layers)), s.layers)
                    : dl4cpp::completePlan({}, s.layers);
  return s;
}

}  // namespace testutil
