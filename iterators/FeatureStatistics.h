#pragma once
// FeatureStatistics: the count, mean, standard deviation, minimum and maximum of the features an
// iterator yields, per column or per image channel, in one pass over an epoch; what the
// normalizers are fitted on.
//
// How values are grouped follows the features' rank, as in DL4J:
//  - rank 4, (N, C, H, W) images: one statistic per channel, over every example's H x W values
//    of that channel (FeatureGrouping::Channels);
//  - any other rank: one statistic per column of the features taken as (N, columns), columns =
//    every value of one example (784 for MNIST's (N, 784): per pixel) (FeatureGrouping::Columns).
// The standard deviation is the population one (divided by the count, as DL4J's
// DistributionStats), accumulated in double: each example's values of a group are reduced on
// their own and merged into the running figures with Chan's update (Welford's for one value).
//
// collect() resets the iterator before and after the pass when it supports reset. Errors:
// DataError (the iterator yields no example, examples without values, a non-finite value, named
// by batch, row and column or channel), DataMismatchError (batches of different ranks, column or
// channel counts).
#include <cstdint>
#include <string>
#include <vector>

#include "iterators/DataSetIterator.h"

namespace dl4cpp {

// What one statistic of a normalizer covers: a feature column, or an image channel.
enum class FeatureGrouping { Columns, Channels };

// "per column" / "per channel", for messages.
const char* groupingName(FeatureGrouping grouping);

struct FeatureStatistics {
  FeatureGrouping grouping = FeatureGrouping::Columns;
  int64_t count = 0;                        // examples seen
  std::vector<double> mean, std, min, max;  // one entry per column or channel

  // The grouping of features of this shape: Channels for rank 4, else Columns.
  static FeatureGrouping groupingOf(const Tensor& features);

  // `who` names the caller in errors ("NormalizerStandardize::fit").
  static FeatureStatistics collect(DataSetIterator& iterator, const std::string& who);
};

}  // namespace dl4cpp
