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
// escaped (nn/core/QuoteForMessage.h):
//   DataFormatError  a record with another number of columns than the first, a value that is not
//                    a finite number (empty, text, NaN, inf, beyond float's range), a class that
//                    is not an integer in [0, numClasses), a label column beyond the record, a
//                    record with no feature column left
//   ConfigError      batch or numClasses not positive, a negative label index, from > to, or
//                    regression == false in the regression form
// and the reader's own errors.
//
// Borrows the reader: it must be initialized, outlive the iterator and not be used by anyone else
// meanwhile; the shared_ptr forms keep it alive instead (an iterator returned from the function
// that made its reader, as DL4J code often does). asyncSupported() is true.
//
// Over an ImageRecordReader (DL4J's RecordReaderDataSetIterator(imageReader, batch, 1,
// numClasses)): the batches of an ImageDataSetIterator run inside, features (n, channels,
// height, width) and one-hot labels. DataVec's image record is (image, label), so labelIndex is 1
// and numClasses is the reader's numLabels() (ConfigError otherwise, and for a reader not yet
// initialized). Decoding, determinism, bounded memory and errors are ImageDataSetIterator's:
//   decode threads  ImageOptions::decodeThreads, 2 unless set by the fifth, options argument:
//                   RecordReaderDataSetIterator(rr, 64, 1, n, {.decodeThreads = 4}); 0 decodes
//                   on the caller's thread. At most prefetchBatches batches are held (raised to
//                   decodeThreads when smaller: each thread fills a batch of its own).
//   order           the reader's split's order every epoch, as DataVec reads it (FileSplit's
//                   seeded shuffle, BalancedPathFilter's interleaving); .shuffle = true draws a
//                   new order every epoch from .seed.
//   augmentation    example i's transform draws come from (seed, epoch, i): the same batches for
//                   any number of decode threads.
// asyncSupported() is false there (the decode threads already run ahead of the consumer).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iterators/DataSetIterator.h"
#include "iterators/RecordReader.h"

namespace dl4cpp {

class ImageDataSetIterator;
class ImageRecordReader;

// How RecordReaderDataSetIterator's image form decodes: ImageDataSetIterator::Options, with
// DataVec's order (the split's) unless shuffle is set.
struct ImageReaderOptions {
  int decodeThreads = 2;
  int prefetchBatches = 4;
  bool shuffle = false;
  uint64_t seed = 0;
};

class RecordReaderDataSetIterator : public DataSetIterator {
 public:
  using ImageOptions = ImageReaderOptions;

  RecordReaderDataSetIterator(RecordReader& reader, int batch, int labelIndex, int numClasses);
  RecordReaderDataSetIterator(RecordReader& reader, int batch, int labelIndexFrom, int labelIndexTo,
                              bool regression);
  RecordReaderDataSetIterator(std::shared_ptr<RecordReader> reader, int batch, int labelIndex,
                              int numClasses);
  RecordReaderDataSetIterator(std::shared_ptr<RecordReader> reader, int batch, int labelIndexFrom,
                              int labelIndexTo, bool regression);
  // The image form.
  RecordReaderDataSetIterator(const ImageRecordReader& reader, int batch, int labelIndex,
                              int numClasses, ImageOptions options = {});
  RecordReaderDataSetIterator(std::shared_ptr<const ImageRecordReader> reader, int batch,
                              int labelIndex, int numClasses, ImageOptions options = {});
  ~RecordReaderDataSetIterator() override;
  RecordReaderDataSetIterator(const RecordReaderDataSetIterator&) = delete;
  RecordReaderDataSetIterator& operator=(const RecordReaderDataSetIterator&) = delete;

  bool hasNext() override;
  DataSet next() override;
  void reset() override;
  bool asyncSupported() const override { return images_ == nullptr; }

  int batch() const override { return batch_; }
  int64_t inputColumns() const override;
  int totalOutcomes() const override;
  int64_t totalExamples() const override;
  // DL4J's getLabels(): the image reader's labels; none for CSV records.
  const std::vector<std::string>& getLabels() const;

 private:
  int labelColumns() const { return labelTo_ - labelFrom_ + 1; }
  // Reads the first record of an epoch and fixes the number of columns from it.
  void startEpoch();
  // Appends one record's features and labels, checking every value.
  void convert(const Record& record, std::vector<float>& features, std::vector<float>& labels);

  RecordReader* reader_ = nullptr;                // the record form
  std::shared_ptr<const void> owned_;             // the reader, when given as a shared_ptr
  std::unique_ptr<ImageDataSetIterator> images_;  // the image form
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
