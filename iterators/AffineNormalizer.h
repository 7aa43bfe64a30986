#pragma once
// AffineNormalizer: the common part of the fitted normalizers (NormalizerStandardize,
// NormalizerMinMaxScaler). From FeatureStatistics of the training features it derives, per
// column or per channel g (FeatureStatistics.h says which), a scale and shift, and maps every
// value of that column or channel by x -> x * scale[g] + shift[g], in place.
//
// A batch must be of the kind fitted on: per channel, (N, C, H, W) features of the fitted C
// (any H and W); per column, features of another rank with the fitted number of values per
// example. A network input (transformInput) must be, per channel, an image input of C channels,
// and per column, one of the fitted number of values.
//
// Errors: ConfigError when used before it is fitted; DataMismatchError when a batch or network
// input is not of the kind fitted on (naming both); fit() throws those of
// FeatureStatistics::collect, and fit() and setFeatureStats() DataError for statistics it cannot
// use (named by column or channel); a failed fit keeps the previous statistics.
#include <string>
#include <utility>
#include <vector>

#include "iterators/DataNormalization.h"
#include "iterators/FeatureStatistics.h"

namespace dl4cpp {

class AffineNormalizer : public DataNormalization {
 public:
  void fit(DataSetIterator& iterator) override;
  // Uses `stats` as fit() uses the statistics it computes (DL4J's setFeatureStats): how a model
  // file restores a normalizer, or one fitted elsewhere is set.
  void setFeatureStats(const FeatureStatistics& stats);
  bool isFitted() const override { return !scale_.empty(); }
  // The statistics in use (empty before fit()); a subclass uses some of their fields only.
  const FeatureStatistics& getFeatureStats() const { return stats_; }

  void transform(DataSet& batch) const override;
  void requireInput(const InputType& input) const override;
  void transformInput(Tensor& features, const InputType& input) const override;

 protected:
  explicit AffineNormalizer(std::string name) : name_(std::move(name)) {}
  // For subclasses: the per-group scale and shift for `stats`, after checking the fields they use
  // (DataError naming the bad value, see requireStatistic).
  virtual void affineFor(const FeatureStatistics& stats, std::vector<float>& scale,
                         std::vector<float>& shift) const = 0;
  // DataError unless `values` holds `count` values (at least one), each finite as a float;
  // `what` names them ("mean").
  void requireStatistic(const std::vector<double>& values, size_t count, const char* what) const;
  const std::string& name() const { return name_; }

 private:
  void requireFitted() const;
  // What the normalizer was fitted on, for messages: "per channel on ... 3 channels".
  std::string fittedOn() const;
  // Maps `examples` examples at `values`, each `length` values of one group after another.
  void apply(float* values, int64_t examples, int64_t length) const;

  std::string name_;
  FeatureStatistics stats_;
  std::vector<float> scale_, shift_;
};

}  // namespace dl4cpp
