#include "iterators/RecordReaderDataSetIterator.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "iterators/RecordValues.h"
#include "iterators/image/ImageDataSetIterator.h"
#include "iterators/image/ImageRecordReader.h"

namespace dl4cpp {

namespace {

constexpr const char* kName = "RecordReaderDataSetIterator";

int positive(int value, const char* what) {
  if (value <= 0)
    throw ConfigError(std::string(kName) + ": " + what + " must be positive, got " +
                      std::to_string(value));
  return value;
}

std::string where(const Record& record, size_t column) {
  return recordWhere(record.file, record.line, column);
}

float parseNumber(const Record& record, size_t column) {
  return parseRecordNumber(record.values[column], record.file, record.line, column);
}

template <typename Reader>
Reader& nonNull(const std::shared_ptr<Reader>& reader) {
  if (!reader) throw ConfigError(std::string(kName) + ": the reader is null");
  return *reader;
}

}  // namespace

RecordReaderDataSetIterator::RecordReaderDataSetIterator(RecordReader& reader, int batch,
                                                         int labelIndex, int numClasses)
    : reader_(&reader),
      batch_(positive(batch, "batch")),
      labelFrom_(labelIndex),
      labelTo_(labelIndex),
      regression_(false),
      numClasses_(positive(numClasses, "numClasses")) {
  if (labelIndex < 0)
    throw ConfigError(std::string(kName) + ": labelIndex must be >= 0, got " +
                      std::to_string(labelIndex));
  startEpoch();
}

RecordReaderDataSetIterator::RecordReaderDataSetIterator(RecordReader& reader, int batch,
                                                         int labelIndexFrom, int labelIndexTo,
                                                         bool regression)
    : reader_(&reader),
      batch_(positive(batch, "batch")),
      labelFrom_(labelIndexFrom),
      labelTo_(labelIndexTo),
      regression_(regression) {
  if (!regression)
    throw ConfigError(std::string(kName) +
                      ": the (labelIndexFrom, labelIndexTo) form is for regression; for "
                      "classification use (reader, batch, labelIndex, numClasses)");
  if (labelIndexFrom < 0 || labelIndexFrom > labelIndexTo)
    throw ConfigError(std::string(kName) + ": label columns " + std::to_string(labelIndexFrom) +
                      ".." + std::to_string(labelIndexTo) +
                      " are not a range of column indices (0 <= from <= to)");
  startEpoch();
}

RecordReaderDataSetIterator::RecordReaderDataSetIterator(std::shared_ptr<RecordReader> reader,
                                                         int batch, int labelIndex, int numClasses)
    : RecordReaderDataSetIterator(nonNull(reader), batch, labelIndex, numClasses) {
  owned_ = std::move(reader);
}

RecordReaderDataSetIterator::RecordReaderDataSetIterator(std::shared_ptr<RecordReader> reader,
                                                         int batch, int labelIndexFrom,
                                                         int labelIndexTo, bool regression)
    : RecordReaderDataSetIterator(nonNull(reader), batch, labelIndexFrom, labelIndexTo,
                                  regression) {
  owned_ = std::move(reader);
}

RecordReaderDataSetIterator::RecordReaderDataSetIterator(const ImageRecordReader& reader, int batch,
                                                         int labelIndex, int numClasses,
                                                         ImageOptions options)
    : batch_(positive(batch, "batch")),
      labelFrom_(labelIndex),
      labelTo_(labelIndex),
      regression_(false),
      numClasses_(positive(numClasses, "numClasses")) {
  if (!reader.initialized())
    throw ConfigError(std::string(kName) +
                      ": the ImageRecordReader is not initialized; call "
                      "initialize(split[, transform]) before building the iterator");
  if (labelIndex != 1)
    throw ConfigError(fmt::format(
        "{}: an ImageRecordReader's record is (image, label), so labelIndex is 1, got {}", kName,
        labelIndex));
  if (numClasses != reader.numLabels())
    throw ConfigError(fmt::format(
        "{}: numClasses is {} but the reader's split has {} label(s) ({}); pass rr.numLabels()",
        kName, numClasses, reader.numLabels(), fmt::join(reader.getLabels(), ", ")));
  images_ = std::make_unique<ImageDataSetIterator>(
      reader, batch,
      ImageDataSetIterator::Options{
          .decodeThreads = options.decodeThreads,
          .prefetchBatches = std::max(options.prefetchBatches, options.decodeThreads),
          .shuffle = options.shuffle,
          .seed = options.seed});
}

RecordReaderDataSetIterator::RecordReaderDataSetIterator(
    std::shared_ptr<const ImageRecordReader> reader, int batch, int labelIndex, int numClasses,
    ImageOptions options)
    : RecordReaderDataSetIterator(nonNull(reader), batch, labelIndex, numClasses, options) {
  owned_ = std::move(reader);
}

RecordReaderDataSetIterator::~RecordReaderDataSetIterator() = default;

int64_t RecordReaderDataSetIterator::inputColumns() const {
  if (images_) return images_->inputColumns();
  return columns_ == 0 ? 0 : columns_ - labelColumns();
}

int RecordReaderDataSetIterator::totalOutcomes() const {
  if (images_) return images_->totalOutcomes();
  return regression_ ? labelColumns() : numClasses_;
}

int64_t RecordReaderDataSetIterator::totalExamples() const {
  return images_ ? images_->totalExamples() : totalExamples_;
}

const std::vector<std::string>& RecordReaderDataSetIterator::getLabels() const {
  static const std::vector<std::string> kNoLabels;
  return images_ ? images_->getLabels() : kNoLabels;
}

void RecordReaderDataSetIterator::startEpoch() {
  readThisEpoch_ = 0;
  first_.reset();
  if (!reader_->hasNext()) {
    // Nothing to iterate at all (not an epoch already read to its end: reset() rewinds the
    // reader), which is a mistake to name now, not an iterator that yields no batch.
    if (columns_ == 0)
      throw DataError(std::string(kName) + ": " + reader_->describeSource() +
                      " holds no data rows: there is no record to make a batch of");
    return;
  }
  first_ = reader_->next();
  const Record& record = *first_;
  if (columns_ == 0) {
    columns_ = static_cast<int64_t>(record.values.size());
    firstFile_ = record.file;
    firstLine_ = record.line;
  }
  if (labelTo_ >= columns_)
    throw DataFormatError(where(record, 0) + ": label column " + std::to_string(labelTo_ + 1) +
                          " is beyond the record's " + std::to_string(columns_) + " columns");
  if (columns_ == labelColumns())
    throw DataFormatError(where(record, 0) + ": the record's " + std::to_string(columns_) +
                          " columns are all labels; no feature column is left");
}

bool RecordReaderDataSetIterator::hasNext() {
  if (images_) return images_->hasNext();
  return first_.has_value() || reader_->hasNext();
}

void RecordReaderDataSetIterator::convert(const Record& record, std::vector<float>& features,
                                          std::vector<float>& labels) {
  const size_t width = record.values.size();
  if (static_cast<int64_t>(width) != columns_)
    throw DataFormatError(where(record, std::min<size_t>(width, columns_)) + ": the record has " +
                          std::to_string(width) + " columns, expected " + std::to_string(columns_) +
                          " (as on line " + std::to_string(firstLine_) + " of " + firstFile_ + ")");
  for (size_t c = 0; c < width; ++c) {
    const bool isLabel = static_cast<int>(c) >= labelFrom_ && static_cast<int>(c) <= labelTo_;
    if (!isLabel) {
      features.push_back(parseNumber(record, c));
    } else if (regression_) {
      labels.push_back(parseNumber(record, c));
    } else {
      const int label =
          parseRecordClass(record.values[c], numClasses_, record.file, record.line, c);
      const size_t row = labels.size();
      labels.resize(row + numClasses_, 0.0f);
      labels[row + static_cast<size_t>(label)] = 1.0f;
    }
  }
}

DataSet RecordReaderDataSetIterator::next() {
  if (!hasNext()) throwNoNext(kName);
  if (images_) return preProcessed(images_->next());
  std::vector<float> features, labels;
  int64_t n = 0;
  if (first_) {
    convert(*first_, features, labels);
    first_.reset();
    ++n;
  }
  for (; n < batch_ && reader_->hasNext(); ++n) convert(reader_->next(), features, labels);
  readThisEpoch_ += n;
  if (!hasNext()) totalExamples_ = readThisEpoch_;
  return preProcessed(DataSet(Tensor::fromVector(Shape{n, inputColumns()}, features),
                              Tensor::fromVector(Shape{n, totalOutcomes()}, labels)));
}

void RecordReaderDataSetIterator::reset() {
  if (images_) {
    images_->reset();
    return;
  }
  reader_->reset();
  startEpoch();
}

}  // namespace dl4cpp
