#pragma once
// NormalizerMinMaxScaler: each feature column mapped linearly from the [min, max] seen in fit() to
// [minRange, maxRange] (default [0, 1]), as DL4J's NormalizerMinMaxScaler. Values outside the
// fitted range map outside the target range (nothing is clipped). A constant column (max == min)
// is shifted to minRange. ConfigError when minRange >= maxRange or either is not finite; other
// errors: see AffineColumnNormalizer.
#include <dl4cpp/iterators/AffineColumnNormalizer.h>

namespace dl4cpp {

class NormalizerMinMaxScaler : public AffineColumnNormalizer {
 public:
  explicit NormalizerMinMaxScaler(double minRange = 0.0, double maxRange = 1.0);

  // The fitted column minima and maxima (empty before fit()).
  const std::vector<double>& getMin() const { return min_; }
  const std::vector<double>& getMax() const { return max_; }

 protected:
  void setTransform(const FeatureStatistics& stats, std::vector<float>& scale,
                    std::vector<float>& shift) override;

 private:
  double minRange_, maxRange_;
  std::vector<double> min_, max_;
};

}  // namespace dl4cpp
