#pragma once
// NumberedFileInputSplit: files numbered in a range, as DataVec's NumberedFileInputSplit(
// baseString, minIdxInclusive, maxIdxInclusive): one file per index, in index order, the path
// being baseString with the index written where "%d" stands (or "%0Nd": zero-padded to N digits,
// N from 1 to 9, as Java's String.format writes it; "%%" stands for a '%').
//
//   NumberedFileInputSplit features("data/features/%d.csv", 0, 449);   // 0.csv ... 449.csv
//   NumberedFileInputSplit frames("frames/img_%05d.csv", 1, 10);       // img_00001.csv ...
//
// The order is numeric, which a folder listing (FileSplit, sorted by name: 10.csv before 2.csv)
// is not: the feature and label files of one sequence pair up by index. Whether the files exist
// is not checked here: the reader reports a missing one when it opens it (DataNotFoundError,
// naming the path).
// ConfigError when baseString holds no index pattern, more than one, or another '%' escape, when
// minIdxInclusive is negative or greater than maxIdxInclusive.
#include <cstdint>
#include <string>

#include "iterators/InputSplit.h"

namespace dl4cpp {

class NumberedFileInputSplit : public InputSplit {
 public:
  NumberedFileInputSplit(const std::string& baseString, int64_t minIdxInclusive,
                         int64_t maxIdxInclusive);

  const std::string& baseString() const { return baseString_; }
  int64_t minIdx() const { return min_; }
  int64_t maxIdx() const { return max_; }

 private:
  std::string baseString_;
  int64_t min_, max_;
};

}  // namespace dl4cpp
