#include "nn/multilayer/GradientNormalizer.h"

#include <cmath>

#include "nn/backend/Backend.h"

namespace dl4cpp {

void GradientNormalizer::addLayer(int layer, GradientNormalization mode, double threshold,
                                  const std::vector<Tensor>& parameterGradients,
                                  const Tensor& layerGradient) {
  if (mode == GradientNormalization::None) return;
  auto add = [&](const Tensor& gradient) {
    const bool needsNorm = mode != GradientNormalization::ClipElementWiseAbsoluteValue;
    groups_.push_back(
        {layer, mode, threshold, gradient, needsNorm ? static_cast<int>(normed_.size()) : -1});
    if (needsNorm) normed_.push_back(gradient);
  };
  if (mode == GradientNormalization::RenormalizeL2PerParamType ||
      mode == GradientNormalization::ClipL2PerParamType) {
    for (const Tensor& g : parameterGradients) add(g);
  } else {
    add(layerGradient);
  }
  norms_.assign(normed_.size(), 0.0);
}

void GradientNormalizer::apply(Backend& backend, LayerProfiler* profiler) {
  if (!normed_.empty()) {
    if (profiler) profiler->enterLayer(LayerProfiler::kNetwork);
    backend.sumsOfSquares(normed_.data(), static_cast<int64_t>(normed_.size()), norms_.data());
  }
  for (Group& g : groups_) {
    if (profiler) profiler->enterLayer(g.layer);
    const double norm = g.normIndex >= 0 ? std::sqrt(norms_[static_cast<size_t>(g.normIndex)]) : 0;
    switch (g.mode) {
      case GradientNormalization::RenormalizeL2PerLayer:
      case GradientNormalization::RenormalizeL2PerParamType:
        // DL4J divides a zero gradient by 1e-5 rather than 0 (no NaN).
        backend.scale(g.gradient, static_cast<float>(1.0 / (norm == 0 ? 1e-5 : norm)));
        break;
      case GradientNormalization::ClipL2PerLayer:
      case GradientNormalization::ClipL2PerParamType:
        if (norm > g.threshold) backend.scale(g.gradient, static_cast<float>(g.threshold / norm));
        break;
      case GradientNormalization::ClipElementWiseAbsoluteValue:
        backend.clipByValue(g.gradient, static_cast<float>(g.threshold));
        break;
      case GradientNormalization::None:
        break;
    }
  }
}

}  // namespace dl4cpp
