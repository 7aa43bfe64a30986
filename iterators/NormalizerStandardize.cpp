#include <dl4cpp/iterators/NormalizerStandardize.h>

namespace dl4cpp {

void NormalizerStandardize::setTransform(const FeatureStatistics& stats, std::vector<float>& scale,
                                         std::vector<float>& shift) {
  mean_ = stats.mean;
  std_ = stats.std;
  for (size_t c = 0; c < mean_.size(); ++c) {
    const double divisor = std_[c] > 0 ? std_[c] : 1.0;
    scale.push_back(static_cast<float>(1.0 / divisor));
    shift.push_back(static_cast<float>(-mean_[c] / divisor));
  }
}

}  // namespace dl4cpp
