#include "nn/multilayer/LayerSteps.h"

#include <fmt/format.h>

namespace dl4cpp {

void SingleLayerStep::forward(DeviceContext& ctx, const LayerTensors& t,
                              const ForwardContext& pass) {
  const int i = first();
  enterLayer(ctx, i);
  layer_.forward(ctx, t.inputs[i], t.outputs[i], pass.forLayer(i));
}

void SingleLayerStep::backward(DeviceContext& ctx, const LayerTensors& t, Tensor* inputGradient) {
  const int i = first();
  enterLayer(ctx, i);
  if (!isOutputLayer_) layer_.backwardActivation(ctx, t.outputs[i], t.gradients[i]);
  layer_.backward(ctx, t.inputs[i], t.gradients[i], true, inputGradient);
}

std::vector<LayerDescription> describeSequence(
    const std::vector<std::unique_ptr<layers::RuntimeLayer>>& layers) {
  const int n = static_cast<int>(layers.size());
  std::vector<LayerDescription> described;
  described.reserve(layers.size());
  for (int i = 0; i < n; ++i) {
    described.push_back(layers[static_cast<size_t>(i)]->describe());
    described.back().readers = {i + 1 < n ? i + 1 : LayerDescription::kNetwork};
  }
  return described;
}

std::vector<std::unique_ptr<NetworkStep>> completePlan(
    std::vector<std::unique_ptr<NetworkStep>> planned,
    const std::vector<std::unique_ptr<layers::RuntimeLayer>>& layers) {
  const int n = static_cast<int>(layers.size());
  std::vector<std::unique_ptr<NetworkStep>> steps;
  int next = 0;  // the first layer no step covers yet
  auto singleLayersUpTo = [&](int end) {
    for (; next < end; ++next)
      steps.push_back(std::make_unique<SingleLayerStep>(next, *layers[static_cast<size_t>(next)],
                                                        next == n - 1));
  };
  for (auto& step : planned) {
    if (step->first() < next || step->count() < 1 || step->last() >= n)
      throw BackendError(
          fmt::format("the backend's plan has a step over layers {}..{} of a network of {} "
                      "layers: its steps must cover layers in order, without overlap",
                      step->first(), step->last(), n));
    singleLayersUpTo(step->first());
    next = step->last() + 1;
    steps.push_back(std::move(step));
  }
  singleLayersUpTo(n);
  return steps;
}

std::vector<std::unique_ptr<NetworkStep>> planLayerSteps(
    Backend& backend, const std::vector<std::unique_ptr<layers::RuntimeLayer>>& layers) {
  return completePlan(backend.planSteps(describeSequence(layers)), layers);
}

}  // namespace dl4cpp
