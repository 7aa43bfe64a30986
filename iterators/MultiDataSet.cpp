#include "iterators/MultiDataSet.h"

#include <fmt/format.h>

#include <utility>

#include "nn/core/Error.h"

namespace dl4cpp {

MultiDataSet::MultiDataSet(std::vector<Tensor> f, std::vector<Tensor> l)
    : features(std::move(f)), labels(std::move(l)) {
  validate();
}

MultiDataSet::MultiDataSet(const DataSet& data) {
  data.validate();
  features.push_back(data.features);
  if (!data.labels.empty()) labels.push_back(data.labels);
}

int64_t MultiDataSet::numExamples() const {
  return features.empty() || features[0].rank() == 0 ? 0 : features[0].dim(0);
}

void MultiDataSet::validate(const char* context) const {
  const int64_t n = numExamples();
  auto check = [&](const std::vector<Tensor>& tensors, const char* what) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i].empty() || tensors[i].rank() == 0)
        throw ShapeError(fmt::format("{}: {}[{}] is empty", context, what, i));
      if (tensors[i].dim(0) != n)
        throw DataMismatchError(fmt::format("{}: {}[{}] has {} examples, features[0] has {}",
                                            context, what, i, tensors[i].dim(0), n));
    }
  };
  check(features, "features");
  check(labels, "labels");
}

MultiDataSet ListMultiDataSetIterator::next() {
  if (!hasNext())
    throw DataError(
        "ListMultiDataSetIterator::next(): no batch left in this epoch (hasNext() is false); "
        "call reset() to start a new epoch");
  return batches_[next_++];
}

}  // namespace dl4cpp
