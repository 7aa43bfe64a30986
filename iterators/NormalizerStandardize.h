#pragma once
// NormalizerStandardize: zero mean, unit variance, as DL4J's NormalizerStandardize:
// x -> (x - mean) / std with the mean and (population) standard deviation of the data it was
// fitted on, per feature column, or per channel for (N, C, H, W) image batches (as DL4J does for
// CNN data; FeatureStatistics.h).
//
//   auto normalizer = std::make_shared<NormalizerStandardize>();
//   normalizer->fit(trainIterator);           // one pass over the training data
//   trainIterator.setPreProcessor(normalizer);
//   testIterator.setPreProcessor(normalizer);  // the training statistics, not the test set's
//
// A constant column or channel (std 0) is only centred (divided by 1), so values unseen in
// training stay finite. setFeatureStats() uses `mean` and `std` (DataError when they are empty,
// of different lengths, not finite as floats, or a std is negative). Errors: see
// AffineNormalizer.
#include "iterators/AffineNormalizer.h"

namespace dl4cpp {

class NormalizerStandardize : public AffineNormalizer {
 public:
  NormalizerStandardize() : AffineNormalizer("NormalizerStandardize") {}

  // The fitted statistics, one entry per feature column or channel (empty before fit()).
  const std::vector<double>& getMean() const { return getFeatureStats().mean; }
  const std::vector<double>& getStd() const { return getFeatureStats().std; }

  std::unique_ptr<DataNormalization> clone() const override {
    return std::make_unique<NormalizerStandardize>(*this);
  }

 protected:
  void affineFor(const FeatureStatistics& stats, std::vector<float>& scale,
                 std::vector<float>& shift) const override;
};

}  // namespace dl4cpp
