#include "iterators/NormalizerStandardize.h"

#include <fmt/format.h>

namespace dl4cpp {

void NormalizerStandardize::affineFor(const FeatureStatistics& stats, std::vector<float>& scale,
                                      std::vector<float>& shift) const {
  requireStatistic(stats.mean, stats.mean.size(), "mean");
  requireStatistic(stats.std, stats.mean.size(), "std");
  for (size_t g = 0; g < stats.mean.size(); ++g) {
    if (stats.std[g] < 0)
      throw DataError(fmt::format("{}: std[{}] = {} is negative", name(), g, stats.std[g]));
    const double divisor = stats.std[g] > 0 ? stats.std[g] : 1.0;
    scale.push_back(static_cast<float>(1.0 / divisor));
    shift.push_back(static_cast<float>(-stats.mean[g] / divisor));
  }
}

}  // namespace dl4cpp
