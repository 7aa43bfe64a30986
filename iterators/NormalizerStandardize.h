#pragma once
// NormalizerStandardize: zero mean, unit variance per feature column, as DL4J's
// NormalizerStandardize: x -> (x - mean) / std with the mean and (population) standard deviation
// of the data it was fitted on.
//
//   auto normalizer = std::make_shared<NormalizerStandardize>();
//   normalizer->fit(trainIterator);           // one pass over the training data
//   trainIterator.setPreProcessor(normalizer);
//   testIterator.setPreProcessor(normalizer);  // the training statistics, not the test set's
//
// A constant column (std 0) is only centred (divided by 1), so values unseen in training stay
// finite. Errors: see AffineColumnNormalizer.
#include <dl4cpp/iterators/AffineColumnNormalizer.h>

namespace dl4cpp {

class NormalizerStandardize : public AffineColumnNormalizer {
 public:
  NormalizerStandardize() : AffineColumnNormalizer("NormalizerStandardize") {}

  // The fitted statistics, one entry per feature column (empty before fit()).
  const std::vector<double>& getMean() const { return mean_; }
  const std::vector<double>& getStd() const { return std_; }

 protected:
  void setTransform(const FeatureStatistics& stats, std::vector<float>& scale,
                    std::vector<float>& shift) override;

 private:
  std::vector<double> mean_, std_;
};

}  // namespace dl4cpp
