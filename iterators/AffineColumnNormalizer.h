#pragma once
// AffineColumnNormalizer: the common part of the feature normalizers: fitted on an iterator's
// features, it maps every feature column c by x -> x * scale[c] + shift[c], in place, on each
// batch it pre-processes. Labels are left as they are.
//
// Errors: ConfigError when used before fit(); DataMismatchError when a batch's column count is
// not the one fitted on; fit() throws those of FeatureStatistics::collect.
#include <dl4cpp/iterators/DataSetPreProcessor.h>
#include <dl4cpp/iterators/FeatureStatistics.h>

#include <string>
#include <utility>
#include <vector>

namespace dl4cpp {

class AffineColumnNormalizer : public DataSetPreProcessor {
 public:
  // Computes the statistics over one epoch of `iterator` (reset before and after).
  void fit(DataSetIterator& iterator);
  bool isFitted() const { return !scale_.empty(); }

  void preProcess(DataSet& batch) const override { transform(batch); }
  void transform(DataSet& batch) const;

 protected:
  explicit AffineColumnNormalizer(std::string name) : name_(std::move(name)) {}
  // For subclasses: the per-column scale and shift for these statistics.
  virtual void setTransform(const FeatureStatistics& stats, std::vector<float>& scale,
                            std::vector<float>& shift) = 0;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<float> scale_, shift_;
};

}  // namespace dl4cpp
