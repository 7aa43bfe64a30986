#include "iterators/NormalizerMinMaxScaler.h"

#include <fmt/format.h>

namespace dl4cpp {

NormalizerMinMaxScaler::NormalizerMinMaxScaler(double minRange, double maxRange)
    : AffineNormalizer("NormalizerMinMaxScaler"), minRange_(minRange), maxRange_(maxRange) {
  requireTargetRange(name(), minRange, maxRange);
}

void NormalizerMinMaxScaler::affineFor(const FeatureStatistics& stats, std::vector<float>& scale,
                                       std::vector<float>& shift) const {
  requireStatistic(stats.min, stats.min.size(), "min");
  requireStatistic(stats.max, stats.min.size(), "max");
  for (size_t g = 0; g < stats.min.size(); ++g) {
    if (stats.min[g] > stats.max[g])
      throw DataError(fmt::format("{}: min[{}] = {} exceeds max[{}] = {}", name(), g, stats.min[g],
                                  g, stats.max[g]));
    const double range = stats.max[g] > stats.min[g] ? stats.max[g] - stats.min[g] : 1.0;
    const double s = (maxRange_ - minRange_) / range;
    scale.push_back(static_cast<float>(s));
    shift.push_back(static_cast<float>(minRange_ - stats.min[g] * s));
  }
}

}  // namespace dl4cpp
