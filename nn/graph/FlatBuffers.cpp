#include "nn/graph/FlatBuffers.h"

#include <fmt/format.h>

#include <cmath>

#include "nn/backend/Backend.h"
#include "nn/profiling/LayerProfiler.h"
#include "nn/weights/WeightInitializer.h"

namespace dl4cpp {

std::vector<FlatBuffers::LayerViews> FlatBuffers::init(const std::vector<const Layer*>& layers,
                                                       uint64_t seed, Device device,
                                                       const std::string& owner) {
  std::vector<std::vector<ParamSpec>> specs;
  std::vector<std::vector<StateSpec>> stateSpecs;
  int64_t totalParams = 0, totalState = 0, totalLayerState = 0;
  for (const Layer* layer : layers) {
    specs.push_back(layer->paramSpecs());
    for (const auto& spec : specs.back()) {
      const UpdaterParams& u = spec.isBias ? layer->resolvedBiasUpdater() : *layer->updater;
      totalParams += spec.shape.numel();
      if (!layer->frozen) totalState += spec.shape.numel() * u.stateSizePerParam();
    }
    stateSpecs.push_back(layer->stateSpecs());
    for (const auto& spec : stateSpecs.back()) totalLayerState += spec.shape.numel();
  }
  auto buffer = [&](int64_t values, const char* what) {
    try {
      return Tensor(Shape{values}, device);
    } catch (const AllocationError& e) {
      throw AllocationError(fmt::format("{}: {} ({} values): {}", owner, what, values, e.what()));
    }
  };
  Tensor newParams = buffer(totalParams, "parameters");
  Tensor newGradients = buffer(totalParams, "gradients");
  Tensor newUpdaterState = buffer(totalState, "updater state");
  Tensor newLayerState = buffer(totalLayerState, "layer state");
  params = std::move(newParams);
  gradients = std::move(newGradients);
  updaterState = std::move(newUpdaterState);
  layerState = std::move(newLayerState);
  segments_.clear();
  stateLayout_.clear();
  normalizer_ = GradientNormalizer();

  std::vector<LayerViews> views(layers.size());
  Random random(seed);
  int64_t offset = 0, stateOffset = 0, layerStateOffset = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& layer = *layers[i];
    const int64_t layerOffset = offset;
    for (const auto& spec : specs[i]) {
      Segment seg;
      seg.isBias = spec.isBias;
      seg.layer = static_cast<int>(i);
      seg.param = params.view(offset, spec.shape);
      seg.grad = gradients.view(offset, spec.shape);
      offset += spec.shape.numel();
      if (spec.weightInit)
        initWeights(*spec.weightInit, spec.fanIn, spec.fanOut, seg.param, random);
      else if (!spec.initValues.empty())
        seg.param.copyFrom(Tensor::fromVector(spec.shape, spec.initValues));
      else
        seg.param.fill(spec.initValue);
      views[i].params.push_back(seg.param);
      views[i].grads.push_back(seg.grad);
      seg.grad.fill(0);
      if (layer.frozen) continue;
      seg.updater = spec.isBias ? layer.resolvedBiasUpdater() : *layer.updater;
      seg.baseLearningRate = seg.updater.learningRate;
      seg.regularization =
          spec.regularized ? layer.resolvedRegularization(spec.isBias) : RegularizationParams{};
      const int64_t stateSize = spec.shape.numel() * seg.updater.stateSizePerParam();
      seg.state = updaterState.view(stateOffset, Shape{stateSize});
      seg.state.fill(static_cast<float>(seg.updater.initialStateValue()));
      stateOffset += stateSize;
      segments_.push_back(seg);
    }
    if (!views[i].grads.empty() && !layer.frozen)
      normalizer_.addLayer(static_cast<int>(i), *layer.gradientNormalization,
                           *layer.gradientNormalizationThreshold, views[i].grads,
                           gradients.view(layerOffset, Shape{offset - layerOffset}));
    for (const auto& spec : stateSpecs[i]) {
      Tensor state = layerState.view(layerStateOffset, spec.shape);
      state.fill(spec.initValue);
      if (spec.combine == StateCombine::PooledMeanVariance) {
        const int64_t channels = spec.shape.numel() / 2;
        state.view(channels, Shape{channels}).fill(spec.initVariance);
      }
      views[i].state.push_back(state);
      // A frozen layer's state never changes: kept per replica it stays bit-identical.
      stateLayout_.push_back({static_cast<int>(i), spec.name, layerStateOffset, spec.shape,
                              layer.frozen ? StateCombine::PerReplica : spec.combine});
      layerStateOffset += spec.shape.numel();
    }
  }

  normTensors_.clear();
  absoluteTensors_.clear();
  for (const auto& seg : segments_) {
    if (seg.regularization.l2 != 0 || seg.regularization.weightDecay != 0)
      normTensors_.push_back(seg.param);
    if (seg.regularization.l1 != 0) absoluteTensors_.push_back(seg.param);
  }
  numParamNorms_ = normTensors_.size();
  // The trainable gradients whose finiteness fit() checks, one view per run of adjacent segments
  // (frozen layers' gradients, zero, lie between them).
  int64_t runStart = -1, runEnd = -1;
  for (const auto& seg : segments_) {
    const int64_t start = seg.grad.data() - gradients.data(), end = start + seg.grad.numel();
    if (start != runEnd) {
      if (runStart >= 0) normTensors_.push_back(gradients.view(runStart, Shape{runEnd - runStart}));
      runStart = start;
    }
    runEnd = end;
  }
  if (runStart >= 0) normTensors_.push_back(gradients.view(runStart, Shape{runEnd - runStart}));
  norms_.assign(normTensors_.size(), 0.0);
  absolutes_.assign(absoluteTensors_.size(), 0.0);
  return views;
}

const FlatBuffers::Segment* FlatBuffers::scheduleValues(int64_t iteration, int epoch,
                                                        double learningRateScale) {
  for (auto& seg : segments_) {
    seg.updater.learningRate = seg.baseLearningRate;
    setScheduledValues(seg.updater, iteration, epoch);
    seg.updater.learningRate *= learningRateScale;
    if (!std::isfinite(seg.updater.learningRate) || !std::isfinite(seg.updater.momentum))
      return &seg;
  }
  return nullptr;
}

void FlatBuffers::throwBadSchedule(const Segment& s, const std::string& layer, int64_t iteration,
                                   int epoch) {
  const bool rate = !std::isfinite(s.updater.learningRate);
  throw NumericalError(fmt::format(
      "the {} schedule of {} gives {} at iteration {}, epoch {}; parameters were not updated",
      rate ? "learning rate" : "momentum", layer,
      rate ? s.updater.learningRate : s.updater.momentum, iteration, epoch));
}

void FlatBuffers::step(Backend& backend, LayerProfiler* profiler, int64_t iteration) {
  normalizer_.apply(backend, profiler);
  for (auto& seg : segments_) {
    if (profiler) profiler->enterLayer(seg.layer);
    backend.updaterStep(seg.updater, seg.regularization, iteration, seg.param, seg.grad, seg.state);
  }
}

std::optional<double> FlatBuffers::learningRate(int layer, int64_t iteration, int epoch,
                                                double learningRateScale) const {
  const Segment* chosen = nullptr;
  for (const auto& seg : segments_)
    if (seg.layer == layer && (!chosen || (chosen->isBias && !seg.isBias))) chosen = &seg;
  if (!chosen) return std::nullopt;
  UpdaterParams u = chosen->updater;
  u.learningRate = chosen->baseLearningRate;
  setScheduledValues(u, iteration, epoch);
  return u.learningRate * learningRateScale;
}

double FlatBuffers::regularizationFromNorms() const {
  double sum = 0;
  size_t squares = 0, absolutes = 0;
  for (const auto& seg : segments_) {
    const RegularizationParams& r = seg.regularization;
    if (r.l2 != 0 || r.weightDecay != 0) sum += 0.5 * (r.l2 + r.weightDecay) * norms_[squares++];
    if (r.l1 != 0) sum += r.l1 * absolutes_[absolutes++];
  }
  return sum;
}

double FlatBuffers::regularizationScore(Backend& backend) {
  backend.sumsOfSquares(normTensors_.data(), static_cast<int64_t>(numParamNorms_), norms_.data());
  backend.sumsOfAbsolutes(absoluteTensors_.data(), static_cast<int64_t>(absoluteTensors_.size()),
                          absolutes_.data());
  return regularizationFromNorms();
}

FlatBuffers::ScoreTerms FlatBuffers::scoreTermsAndGradientCheck(Backend& backend) {
  backend.sumsOfSquares(normTensors_.data(), static_cast<int64_t>(normTensors_.size()),
                        norms_.data());
  if (!absoluteTensors_.empty())
    backend.sumsOfAbsolutes(absoluteTensors_.data(), static_cast<int64_t>(absoluteTensors_.size()),
                            absolutes_.data());
  ScoreTerms terms;
  terms.regularization = regularizationFromNorms();
  for (size_t i = numParamNorms_; i < norms_.size(); ++i)
    terms.finiteGradient = terms.finiteGradient && std::isfinite(norms_[i]);
  return terms;
}

}  // namespace dl4cpp
