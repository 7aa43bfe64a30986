#include "iterators/DataSet.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <utility>

#include "iterators/image/ExampleRandom.h"
#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

// The shape of one example: `shape` without dimension 0.
Shape exampleShape(const Shape& shape) {
  Shape s;
  for (int i = 1; i < shape.rank(); ++i) s.push(shape[i]);
  return s;
}

// Copies `src` into `dst` starting at example `row` (dst and src share the per-example shape).
void copyRows(Tensor& dst, int64_t row, const Tensor& src) {
  if (src.numel() == 0) return;
  std::memcpy(dst.rows(row, row + src.dim(0)).data(), src.data(),
              static_cast<size_t>(src.numel()) * sizeof(float));
}

}  // namespace

DataSet::DataSet(Tensor f, Tensor l) : features(std::move(f)), labels(std::move(l)) { validate(); }

int64_t DataSet::numExamples() const {
  return features.empty() || features.rank() == 0 ? 0 : features.dim(0);
}

void DataSet::validate(const std::string& context) const {
  if (!features.empty() && features.rank() == 0)
    throw ShapeError(context + ": features must have an example dimension, got a rank-0 tensor");
  if (!labels.empty() && labels.rank() == 0)
    throw ShapeError(context + ": labels must have an example dimension, got a rank-0 tensor");
  if (labels.empty()) return;
  if (features.empty())
    throw DataMismatchError(context + ": labels " + labels.shape().toString() +
                            " are present but features are empty");
  if (features.dim(0) != labels.dim(0))
    throw DataMismatchError(context + ": features " + features.shape().toString() + " hold " +
                            std::to_string(features.dim(0)) + " examples but labels " +
                            labels.shape().toString() + " hold " + std::to_string(labels.dim(0)));
}

DataSet DataSet::copy() const {
  DataSet d;
  d.features = features.clone();
  d.labels = labels.clone();
  return d;
}

DataSet DataSet::rows(int64_t begin, int64_t end) const {
  DataSet d;
  d.features = features.rows(begin, end);
  if (!labels.empty()) d.labels = labels.rows(begin, end);
  return d;
}

DataSet DataSet::merge(const std::vector<DataSet>& parts) {
  const DataSet* first = nullptr;
  int64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const DataSet& p = parts[i];
    p.validate("DataSet::merge: part " + std::to_string(i));
    if (p.numExamples() == 0) continue;
    if (first == nullptr) {
      first = &p;
    } else {
      const std::string where = "DataSet::merge: part " + std::to_string(i);
      if (exampleShape(p.features.shape()) != exampleShape(first->features.shape()))
        throw DataMismatchError(where + " has features " + p.features.shape().toString() +
                                ", incompatible with " + first->features.shape().toString() +
                                " of the first non-empty part");
      if (p.labels.empty() != first->labels.empty())
        throw DataMismatchError(where + (p.labels.empty() ? " has no labels" : " has labels") +
                                " but the first non-empty part " +
                                (first->labels.empty() ? "has none" : "has some"));
      if (!p.labels.empty() &&
          exampleShape(p.labels.shape()) != exampleShape(first->labels.shape()))
        throw DataMismatchError(where + " has labels " + p.labels.shape().toString() +
                                ", incompatible with " + first->labels.shape().toString() +
                                " of the first non-empty part");
    }
    total += p.numExamples();
  }
  if (first == nullptr) return {};

  DataSet out;
  out.features = Tensor(first->features.shape().withBatch(total));
  if (!first->labels.empty()) out.labels = Tensor(first->labels.shape().withBatch(total));
  int64_t row = 0;
  for (const DataSet& p : parts) {
    if (p.numExamples() == 0) continue;
    copyRows(out.features, row, p.features);
    if (!p.labels.empty()) copyRows(out.labels, row, p.labels);
    row += p.numExamples();
  }
  return out;
}

DataSet DataSet::shuffled(uint64_t seed) const {
  const int64_t n = numExamples();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  ExampleRandom random(seed, 0, 0);
  shuffleInPlace(order, random);
  DataSet out;
  if (n == 0) return out;
  out.features = Tensor(features.shape());
  if (!labels.empty()) out.labels = Tensor(labels.shape());
  for (int64_t row = 0; row < n; ++row) {
    const int64_t from = order[static_cast<size_t>(row)];
    copyRows(out.features, row, features.rows(from, from + 1));
    if (!labels.empty()) copyRows(out.labels, row, labels.rows(from, from + 1));
  }
  return out;
}

DataSet::TrainTest DataSet::splitTestAndTrain(double fractionTrain) const {
  const int64_t n = numExamples();
  if (!(fractionTrain > 0 && fractionTrain < 1))
    throw ConfigError(fmt::format(
        "DataSet::splitTestAndTrain: fractionTrain must be strictly between 0 and 1 (the share of "
        "the {} examples used for training, the rest for testing), got {}",
        n, fractionTrain));
  const int64_t train = std::llround(fractionTrain * static_cast<double>(n));
  if (train == 0 || train == n)
    throw ConfigError(fmt::format(
        "DataSet::splitTestAndTrain: fractionTrain {} of {} examples gives {} for training and "
        "{} for testing; both parts must hold examples",
        fractionTrain, n, train, n - train));
  return {rows(0, train), rows(train, n)};
}

}  // namespace dl4cpp
