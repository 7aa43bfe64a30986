#include <dl4cpp/iterators/AffineColumnNormalizer.h>

namespace dl4cpp {

void AffineColumnNormalizer::fit(DataSetIterator& iterator) {
  const FeatureStatistics stats = FeatureStatistics::collect(iterator, name_ + "::fit");
  std::vector<float> scale, shift;
  setTransform(stats, scale, shift);
  scale_ = std::move(scale);
  shift_ = std::move(shift);
}

void AffineColumnNormalizer::transform(DataSet& batch) const {
  if (!isFitted())
    throw ConfigError(name_ + ": used before fit(); fit it on the training data first");
  const int64_t n = batch.numExamples();
  if (n == 0) return;
  const int64_t columns = batch.features.numel() / n;
  if (columns != static_cast<int64_t>(scale_.size()))
    throw DataMismatchError(name_ + ": the batch has " + std::to_string(columns) +
                            " feature columns, the normalizer was fitted on " +
                            std::to_string(scale_.size()));
  float* f = batch.features.data();
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < columns; ++c)
      f[r * columns + c] = f[r * columns + c] * scale_[c] + shift_[c];
}

}  // namespace dl4cpp
