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

// Sequence length of a rank-3 tensor; 0 for any other.
int64_t sequenceLength(const Tensor& t) { return t.rank() == 3 ? t.dim(2) : 0; }

// The shape one example must agree on across merged parts: the per-example shape, without the
// time dimension of a sequence (merge pads sequences to the longest).
Shape mergeKey(const Shape& shape) {
  Shape s = exampleShape(shape);
  if (shape.rank() == 3) s = Shape{s[0]};
  return s;
}

void validateMask(const Tensor& mask, const Tensor& of, const char* maskName, const char* ofName,
                  const std::string& context) {
  if (mask.empty()) return;
  if (of.rank() != 3)
    throw DataMismatchError(
        fmt::format("{}: {} {} is present but {} {} are not sequences [examples, size, time steps]",
                    context, maskName, mask.shape().toString(), ofName, of.shape().toString()));
  if (mask.rank() != 2 || mask.dim(0) != of.dim(0) || mask.dim(1) != of.dim(2))
    throw DataMismatchError(fmt::format("{}: {} {} does not match {} {} (expected [{}, {}])",
                                        context, maskName, mask.shape().toString(), ofName,
                                        of.shape().toString(), of.dim(0), of.dim(2)));
}

// Concatenates one column (features or labels) of the non-empty `parts`, padding sequences at
// the end to the longest; `mask` receives the merged mask, or stays empty where every step of
// every part is real and no padding was needed.
Tensor mergeColumn(const std::vector<const Tensor*>& parts, const std::vector<const Tensor*>& masks,
                   int64_t total, Tensor& mask) {
  const Tensor& first = *parts.front();
  if (first.empty()) return {};
  if (first.rank() != 3) {
    Tensor out(first.shape().withBatch(total));
    int64_t row = 0;
    for (const Tensor* p : parts) {
      copyRows(out, row, *p);
      row += p->dim(0);
    }
    return out;
  }
  int64_t longest = 0;
  bool needMask = false;
  for (size_t i = 0; i < parts.size(); ++i) {
    longest = std::max(longest, sequenceLength(*parts[i]));
    needMask = needMask || !masks[i]->empty();
  }
  for (const Tensor* p : parts) needMask = needMask || sequenceLength(*p) != longest;
  const int64_t size = first.dim(1);
  Tensor out(Shape{total, size, longest});
  if (needMask) mask = Tensor(Shape{total, longest});
  int64_t row = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& p = *parts[i];
    const int64_t steps = p.dim(2);
    for (int64_t e = 0; e < p.dim(0); ++e, ++row) {
      for (int64_t f = 0; f < size; ++f)
        std::memcpy(out.data() + (row * size + f) * longest, p.data() + (e * size + f) * steps,
                    static_cast<size_t>(steps) * sizeof(float));
      if (!needMask) continue;
      float* m = mask.data() + row * longest;
      if (masks[i]->empty())
        std::fill(m, m + steps, 1.0F);
      else
        std::memcpy(m, masks[i]->data() + e * steps, static_cast<size_t>(steps) * sizeof(float));
    }
  }
  return out;
}

}  // namespace

DataSet::DataSet(Tensor f, Tensor l) : features(std::move(f)), labels(std::move(l)) { validate(); }

DataSet::DataSet(Tensor features, Tensor labels, Tensor featuresMask, Tensor labelsMask)
    : features(std::move(features)),
      labels(std::move(labels)),
      featuresMask(std::move(featuresMask)),
      labelsMask(std::move(labelsMask)) {
  validate();
}

int64_t DataSet::numExamples() const {
  return features.empty() || features.rank() == 0 ? 0 : features.dim(0);
}

void DataSet::validate(const std::string& context) const {
  if (!features.empty() && features.rank() == 0)
    throw ShapeError(context + ": features must have an example dimension, got a rank-0 tensor");
  if (!labels.empty() && labels.rank() == 0)
    throw ShapeError(context + ": labels must have an example dimension, got a rank-0 tensor");
  validateMask(featuresMask, features, "featuresMask", "features", context);
  validateMask(labelsMask, labels, "labelsMask", "labels", context);
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
  d.featuresMask = featuresMask.clone();
  d.labelsMask = labelsMask.clone();
  return d;
}

DataSet DataSet::rows(int64_t begin, int64_t end) const {
  DataSet d;
  d.features = features.rows(begin, end);
  if (!labels.empty()) d.labels = labels.rows(begin, end);
  if (!featuresMask.empty()) d.featuresMask = featuresMask.rows(begin, end);
  if (!labelsMask.empty()) d.labelsMask = labelsMask.rows(begin, end);
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
      if (p.features.rank() != first->features.rank() ||
          mergeKey(p.features.shape()) != mergeKey(first->features.shape()))
        throw DataMismatchError(where + " has features " + p.features.shape().toString() +
                                ", incompatible with " + first->features.shape().toString() +
                                " of the first non-empty part");
      if (p.labels.empty() != first->labels.empty())
        throw DataMismatchError(where + (p.labels.empty() ? " has no labels" : " has labels") +
                                " but the first non-empty part " +
                                (first->labels.empty() ? "has none" : "has some"));
      if (!p.labels.empty() && (p.labels.rank() != first->labels.rank() ||
                                mergeKey(p.labels.shape()) != mergeKey(first->labels.shape())))
        throw DataMismatchError(where + " has labels " + p.labels.shape().toString() +
                                ", incompatible with " + first->labels.shape().toString() +
                                " of the first non-empty part");
    }
    total += p.numExamples();
  }
  if (first == nullptr) return {};

  std::vector<const Tensor*> features, labels, featuresMasks, labelsMasks;
  for (const DataSet& p : parts) {
    if (p.numExamples() == 0) continue;
    features.push_back(&p.features);
    labels.push_back(&p.labels);
    featuresMasks.push_back(&p.featuresMask);
    labelsMasks.push_back(&p.labelsMask);
  }
  DataSet out;
  out.features = mergeColumn(features, featuresMasks, total, out.featuresMask);
  out.labels = mergeColumn(labels, labelsMasks, total, out.labelsMask);
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
  if (!featuresMask.empty()) out.featuresMask = Tensor(featuresMask.shape());
  if (!labelsMask.empty()) out.labelsMask = Tensor(labelsMask.shape());
  for (int64_t row = 0; row < n; ++row) {
    const int64_t from = order[static_cast<size_t>(row)];
    copyRows(out.features, row, features.rows(from, from + 1));
    if (!labels.empty()) copyRows(out.labels, row, labels.rows(from, from + 1));
    if (!featuresMask.empty()) copyRows(out.featuresMask, row, featuresMask.rows(from, from + 1));
    if (!labelsMask.empty()) copyRows(out.labelsMask, row, labelsMask.rows(from, from + 1));
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
