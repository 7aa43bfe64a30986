#pragma once
// ListDataSetIterator: iterates over examples held in memory, as DL4J's
// ListDataSetIterator(Collection<DataSet>, batch).
//
// The given DataSets (each holding one or more examples) are concatenated once, in order, into
// one DataSet and re-batched by `batch` rows; the last, partial batch of an epoch is kept. Every
// next() returns a fresh copy, so callers may modify or keep batches freely. No shuffling: each
// epoch visits the examples in the same order. All parts must share per-example feature and label
// shapes (DataMismatchError otherwise, see DataSet::merge).
#include <cstdint>
#include <vector>

#include "iterators/DataSetIterator.h"

namespace dl4cpp {

class ListDataSetIterator : public DataSetIterator {
 public:
  // DL4J's default batch size for this iterator is 10. batch must be positive (ConfigError).
  explicit ListDataSetIterator(const std::vector<DataSet>& data, int batch = 10);
  // One DataSet of N examples split into batches of `batch` rows.
  ListDataSetIterator(const DataSet& data, int batch);

  bool hasNext() override;
  DataSet next() override;
  void reset() override;

  int batch() const override { return batch_; }
  int64_t inputColumns() const override;
  int totalOutcomes() const override;
  int64_t totalExamples() const override { return all_.numExamples(); }

 private:
  DataSet all_;  // every example, concatenated: features (N, ...), labels (N, ...) or empty
  int batch_;
  int64_t cursor_ = 0;  // index of the next example to return
};

}  // namespace dl4cpp
