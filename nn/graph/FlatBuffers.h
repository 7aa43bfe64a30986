#pragma once
// The four flat buffers a model owns (parameters, gradients, updater state, layer state), laid
// out from its layers' specs, with everything that works on them as a whole: initialisation from
// the seed, the updater step with gradient normalisation and regularisation in DL4J's order, the
// regularisation terms of the score and the finite-gradient check. ComputationGraph keeps its
// buffers here; the layout, initialisation order and update are MultiLayerNetwork's, so a graph
// that is a chain gets the same parameters from the same seed and trains to the same bits.
//
// Frozen layers (Layer::frozen) get parameter views like any layer, but no segment of the update:
// their gradients are zero and never written by the model, and they have no updater state.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nn/api/Model.h"
#include "nn/conf/layers/Layer.h"
#include "nn/multilayer/GradientNormalizer.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class Backend;
class LayerProfiler;

class FlatBuffers {
 public:
  // One layer's views, in its paramSpecs() and stateSpecs() order.
  struct LayerViews {
    std::vector<Tensor> params, grads, state;
  };

  // Allocates and initialises the buffers for `layers` (resolved, in model order: layer i is
  // layers[i]), drawing parameters from `seed` in layer and spec order. `owner` prefixes an
  // AllocationError's message. The previous buffers are kept if allocation fails.
  std::vector<LayerViews> init(const std::vector<const Layer*>& layers, uint64_t seed,
                               Device device, const std::string& owner);

  Tensor params, gradients, updaterState, layerState;
  const std::vector<LayerStateSegment>& stateLayout() const { return stateLayout_; }

  // One updater step with the current gradients at this iteration and epoch, rates times
  // `learningRateScale`: gradient normalisation, then l1/l2, updater, weight decay (DL4J's order).
  // NumericalError naming the layer (`layerName(i)`) when a schedule gives a non-finite value,
  // before any parameter changes.
  template <typename LayerName>
  void applyUpdate(Backend& backend, LayerProfiler* profiler, int64_t iteration, int epoch,
                   double learningRateScale, LayerName&& layerName) {
    if (const Segment* bad = scheduleValues(iteration, epoch, learningRateScale))
      throwBadSchedule(*bad, layerName(bad->layer), iteration, epoch);
    step(backend, profiler, iteration);
  }
  // The rate layer `layer`'s weights step with (DL4J's getLearningRate); empty for a layer
  // without trainable parameters.
  std::optional<double> learningRate(int layer, int64_t iteration, int epoch,
                                     double learningRateScale) const;

  // The regularisation terms of the score over the current parameters.
  double regularizationScore(Backend& backend);
  // The regularisation terms and whether the trainable gradient is finite, in one pass (fit()).
  struct ScoreTerms {
    double regularization = 0;
    bool finiteGradient = true;
  };
  ScoreTerms scoreTermsAndGradientCheck(Backend& backend);

 private:
  struct Segment {
    Tensor param, grad, state;
    UpdaterParams updater;
    double baseLearningRate = 0;
    RegularizationParams regularization;
    bool isBias = false;
    int layer = 0;
  };
  // Sets each segment's scheduled values; returns the first segment whose value is not finite.
  const Segment* scheduleValues(int64_t iteration, int epoch, double learningRateScale);
  [[noreturn]] static void throwBadSchedule(const Segment& s, const std::string& layer,
                                            int64_t iteration, int epoch);
  void step(Backend& backend, LayerProfiler* profiler, int64_t iteration);
  double regularizationFromNorms() const;

  std::vector<Segment> segments_;
  std::vector<LayerStateSegment> stateLayout_;
  GradientNormalizer normalizer_;
  // The parameters of every segment with l2 or weight decay, then the trainable gradients (one
  // view per contiguous run); likewise the parameters with l1.
  std::vector<Tensor> normTensors_;
  size_t numParamNorms_ = 0;
  std::vector<double> norms_;
  std::vector<Tensor> absoluteTensors_;
  std::vector<double> absolutes_;
};

}  // namespace dl4cpp
