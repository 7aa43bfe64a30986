#include "iterators/AffineNormalizer.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace dl4cpp {

void AffineNormalizer::fit(DataSetIterator& iterator) {
  setFeatureStats(FeatureStatistics::collect(iterator, name_ + "::fit"));
}

void AffineNormalizer::setFeatureStats(const FeatureStatistics& stats) {
  std::vector<float> scale, shift;
  affineFor(stats, scale, shift);
  for (size_t g = 0; g < scale.size(); ++g)
    if (!std::isfinite(scale[g]) || !std::isfinite(shift[g]))
      throw DataError(fmt::format(
          "{}: the statistics of {} {} give x -> x * {} + {}, which is not finite in float", name_,
          stats.grouping == FeatureGrouping::Channels ? "channel" : "column", g, scale[g],
          shift[g]));
  stats_ = stats;
  scale_ = std::move(scale);
  shift_ = std::move(shift);
}

void AffineNormalizer::requireStatistic(const std::vector<double>& values, size_t count,
                                        const char* what) const {
  if (values.empty()) throw DataError(fmt::format("{}: the statistics hold no {}", name_, what));
  if (values.size() != count)
    throw DataError(fmt::format("{}: the statistics hold {} {} values for {} columns or channels",
                                name_, values.size(), what, count));
  for (size_t g = 0; g < count; ++g)
    if (!(std::abs(values[g]) <= std::numeric_limits<float>::max()))
      throw DataError(
          fmt::format("{}: {}[{}] = {} is not a finite float value", name_, what, g, values[g]));
}

void AffineNormalizer::requireFitted() const {
  if (!isFitted())
    throw ConfigError(name_ + ": used before fit(); fit it on the training data first");
}

std::string AffineNormalizer::fittedOn() const {
  if (stats_.grouping == FeatureGrouping::Channels)
    return fmt::format("per channel on rank-4 (N, C, H, W) features with {} channels",
                       scale_.size());
  return fmt::format("per column on features of {} values per example", scale_.size());
}

void AffineNormalizer::transform(DataSet& batch) const {
  requireFitted();
  const int64_t n = batch.numExamples();
  if (n == 0) return;
  const Tensor& f = batch.features;
  const auto groups = static_cast<int64_t>(scale_.size());
  if (FeatureStatistics::groupingOf(f) != stats_.grouping)
    throw DataMismatchError(
        fmt::format("{}: the batch has rank-{} features {}; the normalizer was "
                    "fitted {}",
                    name_, f.rank(), f.shape().toString(), fittedOn()));
  if (stats_.grouping == FeatureGrouping::Channels) {
    if (f.dim(1) != groups)
      throw DataMismatchError(
          fmt::format("{}: the batch has {} channels ({}), the normalizer was "
                      "fitted on {}",
                      name_, f.dim(1), f.shape().toString(), groups));
    apply(batch.features.data(), n, f.numel() / (n * groups));
    return;
  }
  const int64_t columns = f.numel() / n;
  if (columns != groups)
    throw DataMismatchError(
        fmt::format("{}: the batch has {} feature columns, the normalizer was fitted on {}", name_,
                    columns, groups));
  apply(batch.features.data(), n, 1);
}

void AffineNormalizer::requireInput(const InputType& input) const {
  requireFitted();
  const auto groups = static_cast<int64_t>(scale_.size());
  const bool fits = stats_.grouping == FeatureGrouping::Channels
                        ? input.kind != InputType::Kind::FeedForward && input.channels == groups
                        : input.flatSize() == groups;
  if (!fits)
    throw DataMismatchError(fmt::format("{} was fitted {}; the network takes {} input ({} values)",
                                        name_, fittedOn(), input.toString(), input.flatSize()));
}

void AffineNormalizer::transformInput(Tensor& features, const InputType& input) const {
  requireInput(input);
  const int64_t length = stats_.grouping == FeatureGrouping::Channels
                             ? input.height * input.width
                             : 1;  // values of one group in one example
  apply(features.data(), features.numel() / input.flatSize(), length);
}

void AffineNormalizer::apply(float* values, int64_t examples, int64_t length) const {
  const auto groups = static_cast<int64_t>(scale_.size());
  const float* scale = scale_.data();
  const float* shift = shift_.data();
  if (length == 1) {  // per column: one loop over the columns, which vectorises
    for (int64_t r = 0; r < examples; ++r) {
      float* row = values + r * groups;
      for (int64_t c = 0; c < groups; ++c) row[c] = row[c] * scale[c] + shift[c];
    }
    return;
  }
  for (int64_t r = 0; r < examples; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      float* p = values + (r * groups + g) * length;
      const float s = scale[g], t = shift[g];
      for (int64_t i = 0; i < length; ++i) p[i] = p[i] * s + t;
    }
}

}  // namespace dl4cpp
