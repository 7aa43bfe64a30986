#pragma once
// Evaluation: classification metrics, as DL4J's org.nd4j.evaluation.classification.Evaluation.
//
//   Evaluation eval(10);                       // or Evaluation() to infer the class count
//   eval.eval(labels, model.output(features)); // any number of times, e.g. once per minibatch
//   std::cout << eval.stats();                 // DL4J's report, confusion matrix included
//
// Counting. Each eval(labels, predictions) call takes two (N, numClasses) host tensors: labels
// one-hot (or any scores whose argmax is the true class), predictions class probabilities. The
// true class of a row is the argmax of its label row, the predicted class the argmax of its
// prediction row; ties go to the lowest index. Every row adds one count to the confusion matrix
// cell (actual, predicted). A single (N, 1) column is the binary case, as in DL4J: two classes,
// class 1 where the label (0 or 1) is > 0.5, predicted 1 where the prediction is > 0.5.
//
// Metrics, all derived from the confusion matrix, per class c:
//   TP(c) = count(c, c), FP(c) = column c minus TP(c), FN(c) = row c minus TP(c)
//   precision(c) = TP / (TP + FP), recall(c) = TP / (TP + FN), f1(c) = 2 p r / (p + r)
// Per class, a 0/0 metric (precision of a class never predicted, recall of a class with no
// examples) is reported as 0, as DL4J does; f1(c) is 0 when its precision or recall is 0/0.
//
// Macro averages precision(), recall(), f1() are the unweighted mean over classes, and, as in
// DL4J, a class whose metric is undefined (0/0) is EXCLUDED from that average rather than counted
// as 0: precision() skips classes never predicted, recall() skips classes with no examples, f1()
// skips classes where either is undefined. averagePrecisionNumClassesExcluded() and friends say
// how many were skipped, and stats() prints it. When every class is excluded the average is NaN.
// Before any example is seen, accuracy(), precision(), recall() and f1() return 0.
// Unlike DL4J, a 2-class evaluation also reports macro averages (DL4J reports class 1 only); use
// precision(1), recall(1), f1(1) for the positive class.
//
// Counts are int64. An Evaluation is not thread-safe: give each thread its own and merge() them
// (merging is exact, since every metric derives from the summed confusion matrix).
#include <cstdint>
#include <string>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace dl4cpp {

// Counts of (actual class, predicted class) pairs; rows are actual, columns predicted.
class ConfusionMatrix {
 public:
  ConfusionMatrix() = default;
  explicit ConfusionMatrix(int numClasses);

  int numClasses() const { return numClasses_; }
  // Examples of class `actual` predicted as `predicted`. Throws DataError when out of range.
  int64_t count(int actual, int predicted) const;
  int64_t getCount(int actual, int predicted) const { return count(actual, predicted); }  // DL4J
  // Examples whose true class is `actual` (row sum) / predicted as `predicted` (column sum).
  int64_t actualTotal(int actual) const;
  int64_t predictedTotal(int predicted) const;
  // All examples counted.
  int64_t total() const;

  void add(int actual, int predicted, int64_t n = 1);
  // Adds other's counts into this one; the class counts must match (DataMismatchError otherwise).
  void add(const ConfusionMatrix& other);

 private:
  void checkClass(int cls, const char* what) const;

  int numClasses_ = 0;
  std::vector<int64_t> counts_;  // (numClasses, numClasses), row-major: counts_[a * n + p]
};

class Evaluation {
 public:
  // DL4J prints the confusion matrix in stats() only up to this many classes.
  static constexpr int kConfusionPrintMaxClasses = 20;

  // The number of classes is taken from the first eval(labels, predictions) call.
  Evaluation() = default;
  // numClasses >= 1, else ConfigError. Class names default to "0", "1", ...
  explicit Evaluation(int numClasses);
  // One class per name; names appear in the stats() confusion matrix ("| 3 = cat").
  explicit Evaluation(std::vector<std::string> labelsList);

  // Adds a minibatch: labels and predictions both (N, numClasses) host tensors (see the top of
  // this file). ShapeError when the shapes differ (both shapes named), are not rank 2, or the
  // column count disagrees with numClasses(); DataError for non-host tensors or NaN entries.
  void eval(const Tensor& labels, const Tensor& predictions);
  // Adds a minibatch of sequences (DL4J's evalTimeSeries): labels and predictions (N, C, T), each
  // real step an example; `labelsMask` (N, T) says which steps are real (all when empty).
  // ShapeError when the shapes differ or are not rank 3, or the mask is not (N, T).
  void evalTimeSeries(const Tensor& labels, const Tensor& predictions,
                      const Tensor& labelsMask = Tensor());
  // Adds one example. NOTE the argument order (actual, predicted): DL4J's eval(int, int) takes
  // (predictedIdx, actualIdx). ConfigError when the class count is not known yet; DataError when
  // an index is outside [0, numClasses).
  void eval(int actual, int predicted);

  // Adds other's counts to this evaluation (e.g. per-thread evaluations). An evaluation that has
  // seen nothing and has no class count is a no-op to merge / is replaced by the other. Class
  // counts must match, else DataMismatchError. Class names are kept, or taken from other if
  // this evaluation has none.
  void merge(const Evaluation& other);
  // Forgets all counts; keeps the class count and names.
  void reset();

  // 0 until known (default constructor, before the first eval).
  int numClasses() const { return confusion_.numClasses(); }
  // Examples evaluated so far.
  int64_t getNumRowCounter() const { return confusion_.total(); }
  const ConfusionMatrix& getConfusionMatrix() const { return confusion_; }
  const std::vector<std::string>& getLabelsList() const { return labelsList_; }

  int64_t truePositives(int cls) const;
  int64_t falsePositives(int cls) const;
  int64_t falseNegatives(int cls) const;
  int64_t trueNegatives(int cls) const;

  // Fraction of examples whose predicted class is the true class; 0 before any example.
  double accuracy() const;
  // Per class; 0 where undefined (0/0), see the top of this file.
  double precision(int cls) const;
  double recall(int cls) const;
  double f1(int cls) const;
  // Macro averages over the classes where the metric is defined (see the top of this file).
  double precision() const;
  double recall() const;
  double f1() const;
  // How many classes the macro averages above excluded as undefined.
  int averagePrecisionNumClassesExcluded() const;
  int averageRecallNumClassesExcluded() const;
  int averageF1NumClassesExcluded() const;

  // DL4J's report: class count, accuracy, macro precision / recall / F1, warnings about excluded
  // classes, then the confusion matrix when numClasses() <= kConfusionPrintMaxClasses.
  std::string stats() const;
  std::string stats(bool suppressWarnings, bool includeConfusion) const;
  // The confusion matrix as stats() prints it: a header of predicted classes, then one row per
  // actual class ending in "| <index> = <name>".
  std::string confusionMatrix() const;

 private:
  void ensureClasses(int numClasses);
  // Per-class metrics with 0/0 reported as -1 (DL4J's edge-value convention).
  double precisionOrUndefined(int cls) const;
  double recallOrUndefined(int cls) const;
  double f1OrUndefined(int cls) const;
  std::string labelFor(int cls) const;

  ConfusionMatrix confusion_;
  std::vector<std::string> labelsList_;  // empty: names are the class indices
};

}  // namespace dl4cpp
