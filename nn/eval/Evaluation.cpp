#include "nn/eval/Evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "nn/core/Error.h"

namespace dl4cpp {

// ---------------------------------------------------------------------------------------------
// ConfusionMatrix

ConfusionMatrix::ConfusionMatrix(int numClasses) : numClasses_(numClasses) {
  if (numClasses < 1)
    throw ConfigError(fmt::format("ConfusionMatrix: numClasses must be >= 1, got {}", numClasses));
  counts_.assign(static_cast<size_t>(numClasses) * static_cast<size_t>(numClasses), 0);
}

void ConfusionMatrix::checkClass(int cls, const char* what) const {
  if (cls < 0 || cls >= numClasses_)
    throw DataError(fmt::format("ConfusionMatrix: {} class {} is out of range [0, {})", what, cls,
                                numClasses_));
}

int64_t ConfusionMatrix::count(int actual, int predicted) const {
  checkClass(actual, "actual");
  checkClass(predicted, "predicted");
  return counts_[static_cast<size_t>(actual) * numClasses_ + predicted];
}

int64_t ConfusionMatrix::actualTotal(int actual) const {
  checkClass(actual, "actual");
  int64_t sum = 0;
  for (int p = 0; p < numClasses_; ++p)
    sum += counts_[static_cast<size_t>(actual) * numClasses_ + p];
  return sum;
}

int64_t ConfusionMatrix::predictedTotal(int predicted) const {
  checkClass(predicted, "predicted");
  int64_t sum = 0;
  for (int a = 0; a < numClasses_; ++a)
    sum += counts_[static_cast<size_t>(a) * numClasses_ + predicted];
  return sum;
}

int64_t ConfusionMatrix::total() const {
  int64_t sum = 0;
  for (int64_t c : counts_) sum += c;
  return sum;
}

void ConfusionMatrix::add(int actual, int predicted, int64_t n) {
  checkClass(actual, "actual");
  checkClass(predicted, "predicted");
  counts_[static_cast<size_t>(actual) * numClasses_ + predicted] += n;
}

void ConfusionMatrix::add(const ConfusionMatrix& other) {
  if (other.numClasses_ != numClasses_)
    throw DataMismatchError(
        fmt::format("ConfusionMatrix: cannot add a {}-class matrix to a "
                    "{}-class matrix",
                    other.numClasses_, numClasses_));
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
}

// ---------------------------------------------------------------------------------------------
// Evaluation

namespace {

// Index of the largest element of row[0, n); ties go to the lowest index.
int argmax(const float* row, int64_t n) {
  int best = 0;
  for (int64_t j = 1; j < n; ++j)
    if (row[j] > row[best]) best = static_cast<int>(j);
  return best;
}

// DL4J formats metrics with DecimalFormat("0.0000") and prints NaN / infinities as Java does.
std::string formatMetric(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{:.4f}", v);
}

int decimalDigits(int64_t v) {
  int d = 1;
  while (v >= 10) {
    v /= 10;
    ++d;
  }
  return d;
}

constexpr double kUndefined = -1.0;

}  // namespace

Evaluation::Evaluation(int numClasses) {
  if (numClasses < 1)
    throw ConfigError(fmt::format("Evaluation: numClasses must be >= 1, got {}", numClasses));
  confusion_ = ConfusionMatrix(numClasses);
}

Evaluation::Evaluation(std::vector<std::string> labelsList) : labelsList_(std::move(labelsList)) {
  if (labelsList_.empty())
    throw ConfigError("Evaluation: labelsList is empty; give one name per class");
  confusion_ = ConfusionMatrix(static_cast<int>(labelsList_.size()));
}

void Evaluation::ensureClasses(int numClasses) {
  if (confusion_.numClasses() == 0) confusion_ = ConfusionMatrix(numClasses);
}

namespace {

// The steps of host sequences (N, C, T) where `mask` (N, T) is 1 (all without one), as rows (R, C).
Tensor realStepRows(const Tensor& seq, const Tensor& mask) {
  const Tensor x = seq.toHost();
  const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
  std::vector<float> rows;
  for (int64_t e = 0; e < n; ++e)
    for (int64_t s = 0; s < t; ++s) {
      if (!mask.empty() && mask.data()[e * t + s] == 0.0f) continue;
      for (int64_t k = 0; k < c; ++k) rows.push_back(x.data()[(e * c + k) * t + s]);
    }
  return Tensor::fromVector(Shape{static_cast<int64_t>(rows.size()) / c, c}, rows);
}

}  // namespace

void Evaluation::evalTimeSeries(const Tensor& labels, const Tensor& predictions,
                                const Tensor& labelsMask) {
  if (labels.shape() != predictions.shape() || labels.rank() != 3 || labels.dim(1) < 1)
    throw ShapeError(fmt::format(
        "Evaluation::evalTimeSeries: expected labels and predictions of one shape (N, C, T) with "
        "C >= 1, got labels {} and predictions {}",
        labels.shape().toString(), predictions.shape().toString()));
  if (!labelsMask.empty() && (labelsMask.rank() != 2 || labelsMask.dim(0) != labels.dim(0) ||
                              labelsMask.dim(1) != labels.dim(2) || !labelsMask.onHost()))
    throw ShapeError(fmt::format(
        "Evaluation::evalTimeSeries: the labels mask {} does not match labels {} (expected a host "
        "tensor [{}, {}])",
        labelsMask.shape().toString(), labels.shape().toString(), labels.dim(0), labels.dim(2)));
  eval(realStepRows(labels, labelsMask), realStepRows(predictions, labelsMask));
}

void Evaluation::eval(const Tensor& labels, const Tensor& predictions) {
  if (labels.shape() != predictions.shape())
    throw ShapeError(fmt::format(
        "Evaluation::eval: labels and predictions must have the same shape, got labels {} and "
        "predictions {}",
        labels.shape().toString(), predictions.shape().toString()));
  if (labels.rank() != 2)
    throw ShapeError(fmt::format(
        "Evaluation::eval: expected labels and predictions of shape (N, numClasses), got labels "
        "{} and predictions {}",
        labels.shape().toString(), predictions.shape().toString()));
  if (!labels.onHost() || !predictions.onHost())
    throw DataError(
        fmt::format("Evaluation::eval: labels ({}) and predictions ({}) must be host (cpu) tensors",
                    labels.device().toString(), predictions.device().toString()));

  const int64_t rows = labels.dim(0);
  const int64_t cols = labels.dim(1);
  if (cols < 1)
    throw ShapeError(fmt::format("Evaluation::eval: labels {} have no class columns",
                                 labels.shape().toString()));
  const int64_t classes = cols == 1 ? 2 : cols;  // one column: the binary case
  if (numClasses() != 0 && classes != numClasses())
    throw ShapeError(fmt::format(
        "Evaluation::eval: this evaluation has {} classes but labels {} and predictions {} have "
        "{} column(s)",
        numClasses(), labels.shape().toString(), predictions.shape().toString(), cols));
  if (rows == 0) {
    ensureClasses(static_cast<int>(classes));
    return;
  }

  const float* l = labels.data();
  const float* p = predictions.data();
  const int64_t n = rows * cols;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(p[i]))
      throw DataError(fmt::format("Evaluation::eval: NaN in predictions {} at row {}, column {}",
                                  predictions.shape().toString(), i / cols, i % cols));
    if (std::isnan(l[i]))
      throw DataError(fmt::format("Evaluation::eval: NaN in labels {} at row {}, column {}",
                                  labels.shape().toString(), i / cols, i % cols));
  }

  // Validation is complete: from here on nothing throws, so a failed call leaves no partial counts.
  ensureClasses(static_cast<int>(classes));
  for (int64_t r = 0; r < rows; ++r) {
    const float* lr = l + r * cols;
    const float* pr = p + r * cols;
    int actual, predicted;
    if (cols == 1) {
      actual = lr[0] > 0.5f ? 1 : 0;
      predicted = pr[0] > 0.5f ? 1 : 0;
    } else {
      actual = argmax(lr, cols);
      predicted = argmax(pr, cols);
    }
    confusion_.add(actual, predicted);
  }
}

void Evaluation::eval(int actual, int predicted) {
  if (numClasses() == 0)
    throw ConfigError(
        "Evaluation::eval(actual, predicted): the number of classes is not known yet; construct "
        "with Evaluation(numClasses) or call eval(labels, predictions) first");
  if (actual < 0 || actual >= numClasses() || predicted < 0 || predicted >= numClasses())
    throw DataError(
        fmt::format("Evaluation::eval(actual = {}, predicted = {}): classes must be in [0, {})",
                    actual, predicted, numClasses()));
  confusion_.add(actual, predicted);
}

void Evaluation::merge(const Evaluation& other) {
  if (other.numClasses() == 0) return;
  if (numClasses() == 0) {
    confusion_ = other.confusion_;
    if (labelsList_.empty()) labelsList_ = other.labelsList_;
    return;
  }
  if (other.numClasses() != numClasses())
    throw DataMismatchError(fmt::format(
        "Evaluation::merge: cannot merge a {}-class evaluation into a {}-class evaluation",
        other.numClasses(), numClasses()));
  confusion_.add(other.confusion_);
  if (labelsList_.empty()) labelsList_ = other.labelsList_;
}

void Evaluation::reset() {
  if (numClasses() != 0) confusion_ = ConfusionMatrix(numClasses());
}

int64_t Evaluation::truePositives(int cls) const { return confusion_.count(cls, cls); }

int64_t Evaluation::falsePositives(int cls) const {
  return confusion_.predictedTotal(cls) - confusion_.count(cls, cls);
}

int64_t Evaluation::falseNegatives(int cls) const {
  return confusion_.actualTotal(cls) - confusion_.count(cls, cls);
}

int64_t Evaluation::trueNegatives(int cls) const {
  return getNumRowCounter() - confusion_.actualTotal(cls) - confusion_.predictedTotal(cls) +
         confusion_.count(cls, cls);
}

double Evaluation::accuracy() const {
  const int64_t total = getNumRowCounter();
  if (total == 0) return 0.0;
  int64_t correct = 0;
  for (int c = 0; c < numClasses(); ++c) correct += confusion_.count(c, c);
  return static_cast<double>(correct) / static_cast<double>(total);
}

double Evaluation::precisionOrUndefined(int cls) const {
  const int64_t tp = truePositives(cls), fp = falsePositives(cls);
  if (tp + fp == 0) return kUndefined;
  return static_cast<double>(tp) / static_cast<double>(tp + fp);
}

double Evaluation::recallOrUndefined(int cls) const {
  const int64_t tp = truePositives(cls), fn = falseNegatives(cls);
  if (tp + fn == 0) return kUndefined;
  return static_cast<double>(tp) / static_cast<double>(tp + fn);
}

double Evaluation::f1OrUndefined(int cls) const {
  const double p = precisionOrUndefined(cls), r = recallOrUndefined(cls);
  if (p == kUndefined || r == kUndefined) return kUndefined;
  if (p + r == 0) return 0.0;
  return 2 * p * r / (p + r);
}

double Evaluation::precision(int cls) const {
  const double v = precisionOrUndefined(cls);
  return v == kUndefined ? 0.0 : v;
}

double Evaluation::recall(int cls) const {
  const double v = recallOrUndefined(cls);
  return v == kUndefined ? 0.0 : v;
}

double Evaluation::f1(int cls) const {
  const double v = f1OrUndefined(cls);
  return v == kUndefined ? 0.0 : v;
}

namespace {

// Mean of metric(c) over the classes where it is defined; NaN when none is.
template <typename Metric>
double macroAverage(int numClasses, Metric metric) {
  double sum = 0;
  int count = 0;
  for (int c = 0; c < numClasses; ++c) {
    const double v = metric(c);
    if (v == kUndefined) continue;
    sum += v;
    ++count;
  }
  return count == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / count;
}

template <typename Metric>
int countUndefined(int numClasses, Metric metric) {
  int count = 0;
  for (int c = 0; c < numClasses; ++c)
    if (metric(c) == kUndefined) ++count;
  return count;
}

}  // namespace

double Evaluation::precision() const {
  if (getNumRowCounter() == 0) return 0.0;
  return macroAverage(numClasses(), [this](int c) { return precisionOrUndefined(c); });
}

double Evaluation::recall() const {
  if (getNumRowCounter() == 0) return 0.0;
  return macroAverage(numClasses(), [this](int c) { return recallOrUndefined(c); });
}

double Evaluation::f1() const {
  if (getNumRowCounter() == 0) return 0.0;
  return macroAverage(numClasses(), [this](int c) { return f1OrUndefined(c); });
}

int Evaluation::averagePrecisionNumClassesExcluded() const {
  return countUndefined(numClasses(), [this](int c) { return precisionOrUndefined(c); });
}

int Evaluation::averageRecallNumClassesExcluded() const {
  return countUndefined(numClasses(), [this](int c) { return recallOrUndefined(c); });
}

int Evaluation::averageF1NumClassesExcluded() const {
  return countUndefined(numClasses(), [this](int c) { return f1OrUndefined(c); });
}

std::string Evaluation::labelFor(int cls) const {
  if (static_cast<size_t>(cls) < labelsList_.size()) return labelsList_[static_cast<size_t>(cls)];
  return std::to_string(cls);
}

std::string Evaluation::stats() const {
  return stats(false, numClasses() <= kConfusionPrintMaxClasses);
}

std::string Evaluation::stats(bool suppressWarnings, bool includeConfusion) const {
  const int n = numClasses();

  // Classes excluded from the macro averages: never predicted (precision 0/0), no examples
  // (recall 0/0).
  std::vector<int> neverPredicted, neverActual;
  for (int c = 0; c < n; ++c) {
    if (truePositives(c) != 0) continue;
    if (falsePositives(c) == 0) neverPredicted.push_back(c);
    if (falseNegatives(c) == 0) neverActual.push_back(c);
  }
  std::string warnings;
  auto warn = [&warnings](const std::vector<int>& classes, const char* why, const char* metric) {
    const char* wasWere = classes.size() == 1 ? "was" : "were";
    warnings +=
        fmt::format("Warning: {} class{} {} {} and {} excluded from average {}\n", classes.size(),
                    classes.size() == 1 ? "" : "es", wasWere, why, wasWere, metric);
    warnings += fmt::format("Classes excluded from average {}: [", metric);
    for (size_t i = 0; i < classes.size(); ++i)
      warnings += (i ? ", " : "") + std::to_string(classes[i]);
    warnings += "]\n";
  };
  if (!suppressWarnings) {
    if (!neverPredicted.empty()) warn(neverPredicted, "never predicted by the model", "precision");
    if (!neverActual.empty()) warn(neverActual, "never present in the labels", "recall");
  }

  auto excluded = [n](int ex) -> std::string {
    if (n <= 2 || ex == 0) return "";
    return fmt::format("\t({} class{} excluded from average)", ex, ex > 1 ? "es" : "");
  };

  std::string s = "\n";
  s += "\n========================Evaluation Metrics========================";
  s += fmt::format("\n # of classes:    {}", n);
  s += fmt::format("\n Accuracy:        {}", formatMetric(accuracy()));
  s += fmt::format("\n Precision:       {}{}", formatMetric(precision()),
                   excluded(averagePrecisionNumClassesExcluded()));
  s += fmt::format("\n Recall:          {}{}", formatMetric(recall()),
                   excluded(averageRecallNumClassesExcluded()));
  s += fmt::format("\n F1 Score:        {}{}", formatMetric(f1()),
                   excluded(averageF1NumClassesExcluded()));
  s += fmt::format("\nPrecision, recall & F1: macro-averaged (equally weighted avg. of {} classes)",
                   n);
  s += "\n\n";
  s += warnings;
  if (includeConfusion) {
    s += "\n=========================Confusion Matrix=========================\n";
    s += confusionMatrix();
  } else if (n > kConfusionPrintMaxClasses) {
    s += fmt::format(
        "\n\nNote: Confusion matrix not generated due to space requirements for {} classes.\n"
        "Use stats(false, true) to generate anyway",
        n);
  }
  s += "\n==================================================================";
  return s;
}

std::string Evaluation::confusionMatrix() const {
  const int n = numClasses();
  if (n == 0) return "Confusion matrix: <no data>";

  // Column width: one more than the digits of the largest count or class index (DL4J uses
  // ceil(log10(max)), which glues columns together at exact powers of ten).
  int64_t maxCount = std::max<int64_t>(1, n - 1);
  for (int a = 0; a < n; ++a)
    for (int p = 0; p < n; ++p) maxCount = std::max(maxCount, confusion_.count(a, p));
  const int width = decimalDigits(maxCount) + 1;

  std::string s;
  for (int p = 0; p < n; ++p) s += fmt::format("{:>{}}", p, width);
  s += "\n";
  s += std::string(static_cast<size_t>(width * n + 1), '-');
  s += "\n";
  for (int a = 0; a < n; ++a) {
    for (int p = 0; p < n; ++p) s += fmt::format("{:>{}}", confusion_.count(a, p), width);
    s += fmt::format(" | {} = {}\n", a, labelFor(a));
  }
  s += "\nConfusion matrix format: Actual (rowClass) predicted as (columnClass) N times";
  return s;
}

}  // namespace dl4cpp
