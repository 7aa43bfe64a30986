#pragma once
// NormalizerMinMaxScaler: each feature column, or each channel of (N, C, H, W) image batches,
// mapped linearly from the [min, max] seen in fit() to [minRange, maxRange] (default [0, 1]), as
// DL4J's NormalizerMinMaxScaler. Values outside the fitted range map outside the target range
// (nothing is clipped). A constant column or channel (max == min) is shifted to minRange.
// ConfigError when the target range is not one requireTargetRange() accepts. setFeatureStats()
// uses `min` and `max` (DataError when they are empty, of different lengths, not finite as
// floats, or a min exceeds its max). Other errors: see AffineNormalizer.
#include "iterators/AffineNormalizer.h"

namespace dl4cpp {

class NormalizerMinMaxScaler : public AffineNormalizer {
 public:
  explicit NormalizerMinMaxScaler(double minRange = 0.0, double maxRange = 1.0);

  // The fitted minima and maxima, one per column or channel (empty before fit()).
  const std::vector<double>& getMin() const { return getFeatureStats().min; }
  const std::vector<double>& getMax() const { return getFeatureStats().max; }
  // The target range.
  double getTargetMin() const { return minRange_; }
  double getTargetMax() const { return maxRange_; }

  std::unique_ptr<DataNormalization> clone() const override {
    return std::make_unique<NormalizerMinMaxScaler>(*this);
  }

 protected:
  void affineFor(const FeatureStatistics& stats, std::vector<float>& scale,
                 std::vector<float>& shift) const override;

 private:
  double minRange_, maxRange_;
};

}  // namespace dl4cpp
