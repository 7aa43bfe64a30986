#include "iterators/MultiDataSet.h"

#include <fmt/format.h>

#include <utility>

#include "nn/core/Error.h"

namespace dl4cpp {

MultiDataSet::MultiDataSet(std::vector<Tensor> f, std::vector<Tensor> l)
    : features(std::move(f)), labels(std::move(l)) {
  validate();
}

// The parameters are named as the members they fill (the header's names).
MultiDataSet::MultiDataSet(std::vector<Tensor> features, std::vector<Tensor> labels,
                           std::vector<Tensor> featuresMasks, std::vector<Tensor> labelsMasks)
    : features(std::move(features)),
      labels(std::move(labels)),
      featuresMasks(std::move(featuresMasks)),
      labelsMasks(std::move(labelsMasks)) {
  validate();
}

MultiDataSet::MultiDataSet(const DataSet& data) {
  data.validate();
  features.push_back(data.features);
  if (!data.labels.empty()) labels.push_back(data.labels);
  if (!data.featuresMask.empty()) featuresMasks.push_back(data.featuresMask);
  if (!data.labelsMask.empty() && !data.labels.empty()) labelsMasks.push_back(data.labelsMask);
}

namespace {
const Tensor kNoMask;
}  // namespace

const Tensor& MultiDataSet::featuresMask(size_t i) const {
  return i < featuresMasks.size() ? featuresMasks[i] : kNoMask;
}

const Tensor& MultiDataSet::labelsMask(size_t j) const {
  return j < labelsMasks.size() ? labelsMasks[j] : kNoMask;
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
  auto checkMasks = [&](const std::vector<Tensor>& masks, const std::vector<Tensor>& tensors,
                        const char* what) {
    if (masks.empty()) return;
    if (masks.size() != tensors.size())
      throw ShapeError(
          fmt::format("{}: {} {} masks for {} {} tensors (give one per tensor, an "
                      "empty one where every step is real)",
                      context, masks.size(), what, tensors.size(), what));
    for (size_t i = 0; i < masks.size(); ++i) {
      const Tensor& m = masks[i];
      if (m.empty()) continue;
      const Tensor& t = tensors[i];
      if (t.rank() != 3 || m.rank() != 2 || m.dim(0) != t.dim(0) || m.dim(1) != t.dim(2))
        throw DataMismatchError(
            fmt::format("{}: the mask of {}[{}] is {}, but {}[{}] is {} (a mask is [N, T] for "
                        "sequences [N, X, T])",
                        context, what, i, m.shape().toString(), what, i, t.shape().toString()));
    }
  };
  checkMasks(featuresMasks, features, "features");
  checkMasks(labelsMasks, labels, "labels");
}

MultiDataSet ListMultiDataSetIterator::next() {
  if (!hasNext())
    throw DataError(
        "ListMultiDataSetIterator::next(): no batch left in this epoch (hasNext() is false); "
        "call reset() to start a new epoch");
  return batches_[next_++];
}

}  // namespace dl4cpp
