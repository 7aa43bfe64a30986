#include "iterators/ListDataSetIterator.h"

#include <algorithm>

namespace dl4cpp {

namespace {

int checkedBatch(int batch) {
  if (batch <= 0)
    throw ConfigError("ListDataSetIterator: batch must be positive, got " + std::to_string(batch));
  return batch;
}

// Number of values per example of `t` (product of all dimensions but the first).
int64_t columns(const Tensor& t) {
  if (t.empty() || t.rank() == 0) return 0;
  int64_t n = 1;
  for (int i = 1; i < t.rank(); ++i) n *= t.dim(i);
  return n;
}

}  // namespace

ListDataSetIterator::ListDataSetIterator(const std::vector<DataSet>& data, int batch)
    : all_(DataSet::merge(data)), batch_(checkedBatch(batch)) {}

ListDataSetIterator::ListDataSetIterator(const DataSet& data, int batch)
    : all_(DataSet::merge({data})), batch_(checkedBatch(batch)) {}

bool ListDataSetIterator::hasNext() { return cursor_ < all_.numExamples(); }

DataSet ListDataSetIterator::next() {
  if (!hasNext()) throwNoNext("ListDataSetIterator");
  const int64_t end = std::min(cursor_ + batch_, all_.numExamples());
  DataSet batch = all_.rows(cursor_, end).copy();
  cursor_ = end;
  return preProcessed(std::move(batch));
}

void ListDataSetIterator::reset() { cursor_ = 0; }

int64_t ListDataSetIterator::inputColumns() const { return columns(all_.features); }

int ListDataSetIterator::totalOutcomes() const { return static_cast<int>(columns(all_.labels)); }

}  // namespace dl4cpp
