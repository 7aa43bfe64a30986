#pragma once
// FeatureStatistics: per-column count, mean, standard deviation, minimum and maximum of the
// features an iterator yields, in one pass over an epoch; what the normalizers are fitted on.
//
// A batch's features are taken as (N, columns), columns = every value of one example (784 for
// MNIST: per pixel, not per image channel). The standard deviation is the population one (divided
// by the count, as DL4J's DistributionStats), accumulated in double with Welford's update.
//
// collect() resets the iterator before and after the pass when it supports reset. Errors:
// DataError (the iterator yields no example, a batch without features, a non-finite value, named
// by batch, row and column), DataMismatchError (batches with different column counts).
#include <dl4cpp/iterators/DataSetIterator.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dl4cpp {

struct FeatureStatistics {
  int64_t count = 0;                        // examples seen
  std::vector<double> mean, std, min, max;  // one entry per column

  // `who` names the caller in errors ("NormalizerStandardize::fit").
  static FeatureStatistics collect(DataSetIterator& iterator, const std::string& who);
};

}  // namespace dl4cpp
