#include "iterators/SequenceRecordReaderDataSetIterator.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "iterators/RecordValues.h"

namespace dl4cpp {

namespace {

constexpr const char* kName = "SequenceRecordReaderDataSetIterator";

int positive(int value, const char* what) {
  if (value <= 0)
    throw ConfigError(fmt::format("{}: {} must be positive, got {}", kName, what, value));
  return value;
}

SequenceRecordReader& nonNull(const std::shared_ptr<SequenceRecordReader>& reader,
                              const char* which) {
  if (!reader) throw ConfigError(fmt::format("{}: the {} is null", kName, which));
  return *reader;
}

// The line step t starts on, 0 when the reader does not say.
int64_t lineOf(const SequenceRecord& sequence, size_t t) {
  return t < sequence.lines.size() ? sequence.lines[t] : 0;
}

std::string steps(int64_t n) { return fmt::format("{} time step{}", n, n == 1 ? "" : "s"); }

}  // namespace

SequenceRecordReaderDataSetIterator::SequenceRecordReaderDataSetIterator(
    SequenceRecordReader& featuresReader, SequenceRecordReader& labelsReader, int miniBatchSize,
    int numPossibleLabels, bool regression, AlignmentMode alignmentMode)
    : features_(&featuresReader),
      labels_(&labelsReader),
      batch_(positive(miniBatchSize, "miniBatchSize")),
      numPossibleLabels_(numPossibleLabels),
      regression_(regression),
      alignment_(alignmentMode) {
  if (&featuresReader == &labelsReader)
    throw ConfigError(fmt::format(
        "{}: the same reader is given for features and labels; give two readers (one over the "
        "feature files, one over the label files) or use the single-reader form (reader, "
        "miniBatchSize, numPossibleLabels, labelIndex)",
        kName));
  validate();
}

SequenceRecordReaderDataSetIterator::SequenceRecordReaderDataSetIterator(
    SequenceRecordReader& reader, int miniBatchSize, int numPossibleLabels, int labelIndex,
    bool regression)
    : features_(&reader),
      batch_(positive(miniBatchSize, "miniBatchSize")),
      numPossibleLabels_(numPossibleLabels),
      labelIndex_(labelIndex),
      regression_(regression),
      alignment_(AlignmentMode::EQUAL_LENGTH) {
  if (labelIndex < 0)
    throw ConfigError(fmt::format("{}: labelIndex must be >= 0, got {}", kName, labelIndex));
  validate();
}

SequenceRecordReaderDataSetIterator::SequenceRecordReaderDataSetIterator(
    std::shared_ptr<SequenceRecordReader> featuresReader,
    std::shared_ptr<SequenceRecordReader> labelsReader, int miniBatchSize, int numPossibleLabels,
    bool regression, AlignmentMode alignmentMode)
    : SequenceRecordReaderDataSetIterator(nonNull(featuresReader, "features reader"),
                                          nonNull(labelsReader, "labels reader"), miniBatchSize,
                                          numPossibleLabels, regression, alignmentMode) {
  ownedFeatures_ = std::move(featuresReader);
  ownedLabels_ = std::move(labelsReader);
}

SequenceRecordReaderDataSetIterator::SequenceRecordReaderDataSetIterator(
    std::shared_ptr<SequenceRecordReader> reader, int miniBatchSize, int numPossibleLabels,
    int labelIndex, bool regression)
    : SequenceRecordReaderDataSetIterator(nonNull(reader, "reader"), miniBatchSize,
                                          numPossibleLabels, labelIndex, regression) {
  ownedFeatures_ = std::move(reader);
}

SequenceRecordReaderDataSetIterator::~SequenceRecordReaderDataSetIterator() = default;

void SequenceRecordReaderDataSetIterator::validate() {
  if (!regression_) positive(numPossibleLabels_, "numPossibleLabels (classification)");
  if (labels_ != nullptr) {
    const int64_t nf = features_->numSequences(), nl = labels_->numSequences();
    if (nf >= 0 && nl >= 0 && nf != nl)
      throw DataMismatchError(fmt::format(
          "{}: the features reader holds {} sequences ({}) but the labels reader holds {} ({}); "
          "the i-th feature sequence goes with the i-th label sequence",
          kName, nf, features_->describeSource(), nl, labels_->describeSource()));
  }
  // From the first sequence, whatever was read from the readers before.
  rewind();
}

int SequenceRecordReaderDataSetIterator::totalOutcomes() const {
  return regression_ ? static_cast<int>(labelColumns_) : numPossibleLabels_;
}

int64_t SequenceRecordReaderDataSetIterator::totalExamples() const {
  const int64_t known = features_->numSequences();
  return known >= 0 ? known : totalExamples_;
}

void SequenceRecordReaderDataSetIterator::startEpoch() {
  readThisEpoch_ = 0;
  pending_.reset();
  pending_ = read();
  // Nothing to iterate at all (not an epoch already read to its end: reset() rewinds the readers)
  // is a mistake to name now, not an iterator that yields no batch.
  if (!pending_ && featureColumns_ == 0)
    throw DataError(fmt::format("{}: {} holds no sequence: there is nothing to make a batch of",
                                kName, features_->describeSource()));
}

std::optional<SequenceRecordReaderDataSetIterator::Example>
SequenceRecordReaderDataSetIterator::read() {
  const bool haveFeatures = features_->hasNext();
  if (singleReader()) {
    if (!haveFeatures) return std::nullopt;
    return convert(features_->sequenceRecord(), nullptr);
  }
  const bool haveLabels = labels_->hasNext();
  if (haveFeatures != haveLabels) {
    const int64_t n = readThisEpoch_;
    throw DataMismatchError(fmt::format(
        "{}: the {} reader ends after {} sequence{} but the {} reader holds more ({} and {}); the "
        "i-th feature sequence goes with the i-th label sequence",
        kName, haveFeatures ? "labels" : "features", n, n == 1 ? "" : "s",
        haveFeatures ? "features" : "labels", features_->describeSource(),
        labels_->describeSource()));
  }
  if (!haveFeatures) return std::nullopt;
  SequenceRecord features = features_->sequenceRecord();
  SequenceRecord labels = labels_->sequenceRecord();
  return convert(features, &labels);
}

void SequenceRecordReaderDataSetIterator::checkWidth(const SequenceRecord& sequence,
                                                     size_t expected, const std::string& firstFile,
                                                     const char* what) const {
  for (size_t t = 0; t < sequence.steps.size(); ++t) {
    const size_t width = sequence.steps[t].size();
    if (width != expected)
      throw DataFormatError(fmt::format(
          "{}: line {}: {} column{} where the first {} ({}) has {}: every {} has the same columns",
          sequence.file, lineOf(sequence, t), width, width == 1 ? "" : "s", what, firstFile,
          expected, what));
  }
}

SequenceRecordReaderDataSetIterator::Example SequenceRecordReaderDataSetIterator::convert(
    const SequenceRecord& features, const SequenceRecord* labels) {
  if (features.steps.empty())
    throw DataFormatError(fmt::format("{}: the sequence holds no time step", features.file));
  if (labels != nullptr && labels->steps.empty())
    throw DataFormatError(fmt::format("{}: the sequence holds no time step", labels->file));
  const std::vector<std::string>& first = features.steps.front();
  if (recordWidth_ == 0) {
    // The first sequence of all fixes the columns.
    if (singleReader()) {
      if (static_cast<size_t>(labelIndex_) >= first.size())
        throw DataFormatError(
            fmt::format("{}: label column {} (labelIndex {}) is beyond the record's {} column{}",
                        recordWhere(features.file, lineOf(features, 0), 0), labelIndex_ + 1,
                        labelIndex_, first.size(), first.size() == 1 ? "" : "s"));
      if (first.size() == 1)
        throw DataFormatError(fmt::format(
            "{}: the record's only column is the label (labelIndex {}); no feature column is left",
            recordWhere(features.file, lineOf(features, 0), 0), labelIndex_));
      featureColumns_ = static_cast<int64_t>(first.size()) - 1;
      labelColumns_ = 1;
    } else {
      const std::vector<std::string>& firstLabel = labels->steps.front();
      if (!regression_ && firstLabel.size() != 1)
        throw DataFormatError(fmt::format(
            "{}: line {}: a classification label file holds one column (the class index at each "
            "time step), this one holds {}; for several label values per step use regression = "
            "true",
            labels->file, lineOf(*labels, 0), firstLabel.size()));
      featureColumns_ = static_cast<int64_t>(first.size());
      labelColumns_ = static_cast<int64_t>(firstLabel.size());
      labelRecordWidth_ = firstLabel.size();
      firstLabelFile_ = labels->file;
    }
    recordWidth_ = first.size();
    firstFile_ = features.file;
  }
  checkWidth(features, recordWidth_, firstFile_, singleReader() ? "sequence" : "feature sequence");
  if (labels != nullptr) checkWidth(*labels, labelRecordWidth_, firstLabelFile_, "label sequence");

  Example example;
  example.featureSteps = features.length();
  example.labelSteps = labels != nullptr ? labels->length() : features.length();
  if (labels != nullptr && alignment_ == AlignmentMode::EQUAL_LENGTH &&
      example.featureSteps != example.labelSteps)
    throw DataMismatchError(fmt::format(
        "{}: the feature sequence {} holds {} but its label sequence {} holds {}; with "
        "AlignmentMode::EQUAL_LENGTH they must be equal (ALIGN_START or ALIGN_END pad the shorter "
        "one and mask the padding)",
        kName, features.file, steps(example.featureSteps), labels->file,
        steps(example.labelSteps)));

  const int outcomes = totalOutcomes();
  example.features.reserve(static_cast<size_t>(example.featureSteps * featureColumns_));
  example.labels.assign(static_cast<size_t>(example.labelSteps * outcomes), 0.0F);
  // Step t's label from field `column` of `file`'s `line`: a value into label column `slot`, or a
  // class set one-hot.
  const auto putLabel = [&](int64_t t, size_t slot, const std::string& text,
                            const std::string& file, int64_t line, size_t column) {
    float* row = example.labels.data() + t * outcomes;
    if (regression_)
      row[slot] = parseRecordNumber(text, file, line, column);
    else
      row[parseRecordClass(text, numPossibleLabels_, file, line, column)] = 1.0F;
  };
  for (int64_t t = 0; t < example.featureSteps; ++t) {
    const std::vector<std::string>& step = features.steps[static_cast<size_t>(t)];
    const int64_t line = lineOf(features, static_cast<size_t>(t));
    for (size_t c = 0; c < step.size(); ++c) {
      if (singleReader() && static_cast<int>(c) == labelIndex_)
        putLabel(t, 0, step[c], features.file, line, c);
      else
        example.features.push_back(parseRecordNumber(step[c], features.file, line, c));
    }
  }
  if (labels != nullptr) {
    for (int64_t t = 0; t < example.labelSteps; ++t) {
      const std::vector<std::string>& step = labels->steps[static_cast<size_t>(t)];
      const int64_t line = lineOf(*labels, static_cast<size_t>(t));
      for (size_t c = 0; c < step.size(); ++c) putLabel(t, c, step[c], labels->file, line, c);
    }
  }
  ++readThisEpoch_;
  return example;
}

bool SequenceRecordReaderDataSetIterator::hasNext() {
  return pending_.has_value() || features_->hasNext() || (labels_ != nullptr && labels_->hasNext());
}

DataSet SequenceRecordReaderDataSetIterator::next() {
  if (!hasNext()) throwNoNext(kName);
  std::vector<Example> examples;
  if (pending_) {
    examples.push_back(std::move(*pending_));
    pending_.reset();
  }
  while (static_cast<int>(examples.size()) < batch_) {
    std::optional<Example> example = read();
    if (!example) break;
    examples.push_back(std::move(*example));
  }
  // A reader that ran out at the batch's end while the other still holds a sequence.
  if (!singleReader() && features_->hasNext() != labels_->hasNext()) read();

  const int64_t n = static_cast<int64_t>(examples.size());
  int64_t longest = 0;
  for (const Example& e : examples) longest = std::max({longest, e.featureSteps, e.labelSteps});
  const int64_t outcomes = totalOutcomes();
  Tensor features(Shape{n, featureColumns_, longest});
  Tensor labels(Shape{n, outcomes, longest});
  bool padFeatures = false, padLabels = false;
  for (const Example& e : examples) {
    padFeatures = padFeatures || e.featureSteps != longest;
    padLabels = padLabels || e.labelSteps != longest;
  }
  Tensor featuresMask, labelsMask;
  if (padFeatures) featuresMask = Tensor(Shape{n, longest});
  if (padLabels) labelsMask = Tensor(Shape{n, longest});
  const bool alignEnd = alignment_ == AlignmentMode::ALIGN_END;
  // Example i's `steps` rows of `columns` values, transposed into [columns, longest] at
  // time offset `offset`, and its mask row.
  const auto place = [&](Tensor& out, Tensor& mask, int64_t i, const std::vector<float>& values,
                         int64_t steps, int64_t columns) {
    const int64_t offset = alignEnd ? longest - steps : 0;
    float* base = out.data() + i * columns * longest + offset;
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t c = 0; c < columns; ++c)
        base[c * longest + t] = values[static_cast<size_t>(t * columns + c)];
    if (!mask.empty()) {
      float* m = mask.data() + i * longest + offset;
      std::fill(m, m + steps, 1.0F);
    }
  };
  for (int64_t i = 0; i < n; ++i) {
    const Example& e = examples[static_cast<size_t>(i)];
    place(features, featuresMask, i, e.features, e.featureSteps, featureColumns_);
    place(labels, labelsMask, i, e.labels, e.labelSteps, outcomes);
  }
  if (!hasNext()) totalExamples_ = readThisEpoch_;
  return preProcessed(DataSet(std::move(features), std::move(labels), std::move(featuresMask),
                              std::move(labelsMask)));
}

void SequenceRecordReaderDataSetIterator::reset() { rewind(); }

void SequenceRecordReaderDataSetIterator::rewind() {
  features_->reset();
  if (labels_ != nullptr) labels_->reset();
  startEpoch();
}

}  // namespace dl4cpp
