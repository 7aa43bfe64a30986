#pragma once
// How MultiLayerNetwork turns its layers into the steps it runs (LayerPlan.h): it describes them,
// its backend plans the runs it computes its own way, and every layer left over becomes a
// SingleLayerStep, which runs it through the runtime layer contract (layers::RuntimeLayer).
#include <memory>
#include <vector>

#include "nn/backend/Backend.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

// Layer `index` run by itself.
class SingleLayerStep final : public NetworkStep {
 public:
  // isOutputLayer: the network's output layer, whose gradient comes from the loss already with
  // respect to its pre-activation (so its activation's backward pass is not run).
  SingleLayerStep(int index, layers::RuntimeLayer& layer, bool isOutputLayer)
      : NetworkStep(index, 1), layer_(layer), isOutputLayer_(isOutputLayer) {}

  void forward(DeviceContext& ctx, const LayerTensors& t, const ForwardContext& pass) override;
  void backward(DeviceContext& ctx, const LayerTensors& t, Tensor* inputGradient) override;

 private:
  layers::RuntimeLayer& layer_;
  bool isOutputLayer_;
};

// What each layer says of itself, with a sequence's readers: layer i + 1 reads layer i's output,
// the network the last one's.
std::vector<LayerDescription> describeSequence(
    const std::vector<std::unique_ptr<layers::RuntimeLayer>>& layers);

// Every layer once, in order: the planned steps where they start, a SingleLayerStep for every
// layer they do not cover. BackendError when planned steps are out of order, overlap, cover no
// layer or reach past the last one.
std::vector<std::unique_ptr<NetworkStep>> completePlan(
    std::vector<std::unique_ptr<NetworkStep>> planned,
    const std::vector<std::unique_ptr<layers::RuntimeLayer>>& layers);

// completePlan(backend.planSteps(describeSequence(layers)), layers).
std::vector<std::unique_ptr<NetworkStep>> planLayerSteps(
    Backend& backend, const std::vector<std::unique_ptr<layers::RuntimeLayer>>& layers);

}  // namespace dl4cpp
