#include <dl4cpp/iterators/NormalizerMinMaxScaler.h>

#include <cmath>

namespace dl4cpp {

NormalizerMinMaxScaler::NormalizerMinMaxScaler(double minRange, double maxRange)
    : AffineColumnNormalizer("NormalizerMinMaxScaler"), minRange_(minRange), maxRange_(maxRange) {
  if (!std::isfinite(minRange) || !std::isfinite(maxRange) || minRange >= maxRange)
    throw ConfigError("NormalizerMinMaxScaler: the target range [" + std::to_string(minRange) +
                      ", " + std::to_string(maxRange) + "] must be finite with min < max");
}

void NormalizerMinMaxScaler::setTransform(const FeatureStatistics& stats, std::vector<float>& scale,
                                          std::vector<float>& shift) {
  min_ = stats.min;
  max_ = stats.max;
  for (size_t c = 0; c < min_.size(); ++c) {
    const double range = max_[c] > min_[c] ? max_[c] - min_[c] : 1.0;
    const double s = (maxRange_ - minRange_) / range;
    scale.push_back(static_cast<float>(s));
    shift.push_back(static_cast<float>(minRange_ - min_[c] * s));
  }
}

}  // namespace dl4cpp
