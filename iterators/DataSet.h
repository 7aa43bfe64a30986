#pragma once
// DataSet: one minibatch (or a whole in-memory data set) of examples, as in DL4J.
//
// `features` and `labels` are host tensors whose dimension 0 is the example index: for MNIST,
// features (N, 784) holding pixels scaled to [0, 1] and labels (N, 10) one-hot. Both are Tensor
// handles, so copying a DataSet shares storage; DataSet::copy() makes an independent one.
// `labels` may be empty (unsupervised data); `features` may only be empty when labels are too.
//
// Sequences are [examples, features, time steps], as in DL4J. Sequences of different lengths in
// one minibatch are padded, and a mask says which steps are real: `featuresMask` and
// `labelsMask` are [examples, time steps], 1 for a real step and 0 for padding (DL4J's
// getFeaturesMaskArray / getLabelsMaskArray). A mask is empty where every step is real, and
// belongs only to a rank-3 tensor.
#include <cstdint>
#include <string>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace dl4cpp {

struct DataSet {
  Tensor features;      // (N, ...) inputs
  Tensor labels;        // (N, ...) targets, or empty
  Tensor featuresMask;  // (N, T) for features (N, F, T), or empty
  Tensor labelsMask;    // (N, T) for labels (N, C, T), or empty

  DataSet() = default;
  // Validates the pair (see validate()), so a DataSet built this way is always consistent.
  DataSet(Tensor features, Tensor labels);
  DataSet(Tensor features, Tensor labels, Tensor featuresMask, Tensor labelsMask);

  // N, the number of examples (rows of `features`); 0 for an empty DataSet.
  int64_t numExamples() const;
  bool empty() const { return numExamples() == 0; }
  bool hasMasks() const { return !featuresMask.empty() || !labelsMask.empty(); }

  // Throws DataMismatchError when features and labels disagree on the number of examples (or
  // labels are present without features), or a mask does not match its tensor ([N, T] for an
  // [N, X, T] tensor), and ShapeError when a non-empty tensor has rank 0.
  // `context` prefixes the message (e.g. the iterator that produced the pair).
  void validate(const std::string& context = "DataSet") const;

  // An independent copy (fresh storage for both tensors).
  DataSet copy() const;

  // Examples [begin, end) as a DataSet whose tensors are views into this one (no copy).
  DataSet rows(int64_t begin, int64_t end) const;

  // Concatenates the examples of `parts` in order into one DataSet with fresh storage (DL4J's
  // DataSet.merge). Every part must have the same per-example feature and label shapes, except
  // the length of sequences: parts whose sequences differ in length are padded at the end to the
  // longest, with masks marking the padding (parts without a mask count every step as real).
  // Either all or none of the parts must have labels; otherwise DataMismatchError names the
  // first offending part. Empty parts (no examples) are skipped.
  static DataSet merge(const std::vector<DataSet>& parts);

  // DL4J's DataSet.shuffle(seed), as a copy: the examples in an order drawn from `seed` alone
  // (the same on every platform), in fresh storage. Tensors share storage when copied, so an
  // in-place shuffle would also reorder every other holder's view.
  DataSet shuffled(uint64_t seed) const;

  // DL4J's splitTestAndTrain(fractionTrain): the first round(fractionTrain * N) examples for
  // training, the rest for testing, as views (no copy). Shuffle first when the examples are
  // ordered (a table sorted by class, say). ConfigError when fractionTrain is not in (0, 1) or
  // leaves either part empty.
  struct TrainTest;
  TrainTest splitTestAndTrain(double fractionTrain) const;
};

struct DataSet::TrainTest {
  DataSet train;
  DataSet test;
};

}  // namespace dl4cpp
