#include "iterators/FeatureStatistics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace dl4cpp {

namespace {

// The running figures of one column or channel.
struct Moments {
  int64_t n = 0;
  double mean = 0, m2 = 0;  // m2: sum of squared differences from the mean
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
};

// Adds the `length` (> 0, finite) values at `p`: their own mean and m2 first, then Chan et al.'s
// pairwise merge, which for one value is Welford's update.
void accumulate(Moments& m, const float* p, int64_t length) {
  double sum = 0;
  for (int64_t i = 0; i < length; ++i) sum += p[i];
  const double meanB = sum / static_cast<double>(length);
  double m2B = 0;
  for (int64_t i = 0; i < length; ++i) {
    const double d = p[i] - meanB;
    m2B += d * d;
    m.min = std::min(m.min, static_cast<double>(p[i]));
    m.max = std::max(m.max, static_cast<double>(p[i]));
  }
  const auto nA = static_cast<double>(m.n), nB = static_cast<double>(length);
  m.n += length;
  const auto n = static_cast<double>(m.n);
  const double delta = meanB - m.mean;
  m.mean += delta * nB / n;
  m.m2 += m2B + delta * delta * nA * nB / n;
}

std::string groupsText(FeatureGrouping grouping, size_t count) {
  return fmt::format("{} {}", count,
                     grouping == FeatureGrouping::Channels ? "channels" : "feature columns");
}

}  // namespace

const char* groupingName(FeatureGrouping grouping) {
  return grouping == FeatureGrouping::Channels ? "per channel" : "per column";
}

FeatureGrouping FeatureStatistics::groupingOf(const Tensor& features) {
  return features.rank() == 4 ? FeatureGrouping::Channels : FeatureGrouping::Columns;
}

FeatureStatistics FeatureStatistics::collect(DataSetIterator& iterator, const std::string& who) {
  if (iterator.resetSupported()) iterator.reset();
  FeatureStatistics s;
  std::vector<Moments> groups;
  for (int64_t batchIndex = 0; iterator.hasNext(); ++batchIndex) {
    const DataSet batch = iterator.next();
    const int64_t n = batch.numExamples();
    if (n == 0) continue;
    const FeatureGrouping grouping = groupingOf(batch.features);
    const int64_t perExample = batch.features.numel() / n;
    const int64_t groupCount =
        grouping == FeatureGrouping::Channels ? batch.features.dim(1) : perExample;
    if (perExample == 0)
      throw DataError(fmt::format("{}: batch {} has features {} without values", who, batchIndex,
                                  batch.features.shape().toString()));
    if (groups.empty()) {
      s.grouping = grouping;
      groups.resize(static_cast<size_t>(groupCount));
    } else if (grouping != s.grouping) {
      throw DataMismatchError(fmt::format(
          "{}: batch {} has rank-{} features {} (statistics {}), the first batch's were {}", who,
          batchIndex, batch.features.rank(), batch.features.shape().toString(),
          groupingName(grouping), groupingName(s.grouping)));
    } else if (groupCount != static_cast<int64_t>(groups.size())) {
      throw DataMismatchError(fmt::format("{}: batch {} has {}, the first had {}", who, batchIndex,
                                          groupsText(grouping, static_cast<size_t>(groupCount)),
                                          groups.size()));
    }
    const int64_t length = perExample / groupCount;  // values of one group in one example
    const float* f = batch.features.data();
    for (int64_t r = 0; r < n; ++r) {
      ++s.count;
      for (int64_t g = 0; g < groupCount; ++g) {
        const float* p = f + r * perExample + g * length;
        for (int64_t i = 0; i < length; ++i)
          if (!std::isfinite(p[i]))
            throw DataError(fmt::format(
                "{}: batch {}, row {}, {} {} holds a non-finite value ({})", who, batchIndex, r,
                grouping == FeatureGrouping::Channels ? "channel" : "column",
                grouping == FeatureGrouping::Channels ? fmt::format("{}, value {}", g, i)
                                                      : std::to_string(g),
                p[i]));
        accumulate(groups[static_cast<size_t>(g)], p, length);
      }
    }
  }
  if (iterator.resetSupported()) iterator.reset();
  if (s.count == 0)
    throw DataError(who + ": the iterator yields no example to compute statistics from");
  for (const Moments& m : groups) {
    s.mean.push_back(m.mean);
    s.std.push_back(std::sqrt(m.m2 / static_cast<double>(m.n)));
    s.min.push_back(m.min);
    s.max.push_back(m.max);
  }
  return s;
}

}  // namespace dl4cpp
