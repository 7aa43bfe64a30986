#pragma once
// RecordReaderDataSetIterator: minibatches from the records of a RecordReader, as DL4J's
// RecordReaderDataSetIterator, in its two forms:
//
//   RecordReaderDataSetIterator(reader, batch, labelIndex, numClasses)
//     classification: column labelIndex holds the class, an integer in [0, numClasses), turned
//     into a one-hot label row (N, numClasses); every other column is a feature (N, columns-1).
//   RecordReaderDataSetIterator(reader, batch, labelIndexFrom, labelIndexTo, regression = true)
//     regression: columns labelIndexFrom..labelIndexTo (inclusive) are the labels as they are;
//     the others are features.
//
// The first record fixes the number of columns (read at construction and after reset(), so that
// inputColumns() and totalOutcomes() are known before the first batch). A reader that holds no
// record at all (an empty file, or a table with nothing past its header lines) is a DataError at
// construction, naming what the reader reads (RecordReader::describeSource). Records are read as
// batches are asked for: the data set is never in memory whole. totalExamples() is -1 until an
// epoch has been read to its end, then the number of records it held. The last, partial batch
// of an epoch is kept.
//
// Errors name the file, line and column (1-based) of the offending value, quoting it bounded and
// escaped (nn/util/QuoteForMessage.h):
//   DataFormatError  a record with another number of columns than the first, a value that is not
//                    a finite number (empty, text, NaN, inf, beyond float's range), a class that
//                    is not an integer in [0, numClasses), a label column beyond the record, a
//                    record with no feature column left
//   ConfigError      batch or numClasses not positive, a negative label index, from > to, or
//                    regression == false in the regression form
// and the reader's own errors.
//
// Borrows the reader: it must be initialized, outlive the iterator and not be used by anyone else
// meanwhile. asyncSupported() is true.
#include <dl4cpp/iterators/DataSetIterator.h>
#include <dl4cpp/iterators/RecordReader.h>

#include <cstdint>
#include <optional>

namespace dl4cpp {

class RecordReaderDataSetIterator : public DataSetIterator {
 public:
  RecordReaderDataSetIterator(RecordReader& reader, int batch, int labelIndex, int numClasses);
  RecordReaderDataSetIterator(RecordReader& reader, int batch, int labelIndexFrom, int labelIndexTo,
                              bool regression);

  bool hasNext() override;
  DataSet next() override;
  void reset() override;

  int batch() const override { return batch_; }
  int64_t inputColumns() const override { return columns_ == 0 ? 0 : columns_ - labelColumns(); }
  int totalOutcomes() const override { return regression_ ? labelColumns() : numClasses_; }
  int64_t totalExamples() const override { return totalExamples_; }

 private:
  int labelColumns() const { return labelTo_ - labelFrom_ + 1; }
  // Reads the first record of an epoch and fixes the number of columns from it.
  void startEpoch();
  // Appends one record's features and labels, checking every value.
  void convert(const Record& record, std::vector<float>& features, std::vector<float>& labels);

  RecordReader& reader_;
  int batch_;
  int labelFrom_, labelTo_;
  bool regression_;
  int numClasses_ = 0;  // classification only
  int64_t columns_ = 0;
  int64_t firstLine_ = 0;  // where the first record was, for width errors
  std::string firstFile_;
  int64_t readThisEpoch_ = 0;
  int64_t totalExamples_ = -1;
  std::optional<Record> first_;  // the epoch's first record, read ahead by startEpoch()
};

}  // namespace dl4cpp
