#pragma once
// ImagePreProcessingScaler: pixel values to a range, as DL4J's ImagePreProcessingScaler. Every
// feature value x, a pixel value of [0, 2^maxBits - 1] (maxBits bits per channel; 8 by default,
// so [0, 255] as iterators/image/Image.h holds them), becomes
//   x / (2^maxBits - 1) * (maxRange - minRange) + minRange          ([0, 1] by default)
// computed in float in that order (the multiplication skipped for a range of width 1, the
// addition for minRange 0, as DL4J does). Nothing is fitted: fit() does nothing, the scaler is
// ready when built, and it applies to features of any shape and to any network input. Values
// outside [0, 2^maxBits - 1] map outside the range (nothing is clipped).
//
//   auto scaler = std::make_shared<ImagePreProcessingScaler>();   // [0, 255] -> [0, 1]
//   trainIterator.setPreProcessor(scaler);
//
// ConfigError when the range is not one requireTargetRange() accepts, or maxBits is outside
// 1..24 (so that 2^maxBits - 1 is exact in float).
#include "iterators/DataNormalization.h"

namespace dl4cpp {

class ImagePreProcessingScaler : public DataNormalization {
 public:
  static constexpr int kMaxBits = 24;

  explicit ImagePreProcessingScaler(double minRange = 0.0, double maxRange = 1.0, int maxBits = 8);

  double getMinRange() const { return minRange_; }
  double getMaxRange() const { return maxRange_; }
  int getMaxBits() const { return maxBits_; }

  void fit(DataSetIterator& /*iterator*/) override {}
  bool isFitted() const override { return true; }
  void transform(DataSet& batch) const override;
  void requireInput(const InputType& /*input*/) const override {}
  void transformInput(Tensor& features, const InputType& input) const override;
  std::unique_ptr<DataNormalization> clone() const override {
    return std::make_unique<ImagePreProcessingScaler>(*this);
  }

 private:
  void apply(Tensor& features) const;

  double minRange_, maxRange_;
  int maxBits_;
};

}  // namespace dl4cpp
