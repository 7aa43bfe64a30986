#include "iterators/ImagePreProcessingScaler.h"

#include <fmt/format.h>

namespace dl4cpp {

ImagePreProcessingScaler::ImagePreProcessingScaler(double minRange, double maxRange, int maxBits)
    : minRange_(minRange), maxRange_(maxRange), maxBits_(maxBits) {
  requireTargetRange("ImagePreProcessingScaler", minRange, maxRange);
  if (maxBits < 1 || maxBits > kMaxBits)
    throw ConfigError(fmt::format("ImagePreProcessingScaler: maxBits must be in 1..{}, got {}",
                                  kMaxBits, maxBits));
}

void ImagePreProcessingScaler::transform(DataSet& batch) const { apply(batch.features); }

void ImagePreProcessingScaler::transformInput(Tensor& features, const InputType& /*input*/) const {
  apply(features);
}

void ImagePreProcessingScaler::apply(Tensor& features) const {
  const auto maxPixel = static_cast<float>((int64_t{1} << maxBits_) - 1);
  const auto width = static_cast<float>(maxRange_ - minRange_);
  const auto min = static_cast<float>(minRange_);
  float* p = features.data();
  const int64_t n = features.numel();
  for (int64_t i = 0; i < n; ++i) p[i] /= maxPixel;
  if (width != 1.0f)
    for (int64_t i = 0; i < n; ++i) p[i] *= width;
  if (min != 0.0f)
    for (int64_t i = 0; i < n; ++i) p[i] += min;
}

}  // namespace dl4cpp
