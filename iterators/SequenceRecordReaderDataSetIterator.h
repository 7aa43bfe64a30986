#pragma once
// SequenceRecordReaderDataSetIterator: minibatches of sequences from SequenceRecordReaders, as
// DL4J's SequenceRecordReaderDataSetIterator. Features are [examples, feature columns, time
// steps]; classification labels are one-hot [examples, numPossibleLabels, time steps]; regression
// labels are the label columns as they are, [examples, label columns, time steps].
//
// Two readers, one file each per sequence (the i-th feature sequence goes with the i-th label
// sequence):
//   SequenceRecordReaderDataSetIterator(featuresReader, labelsReader, miniBatchSize,
//                                       numPossibleLabels, regression = false,
//                                       alignmentMode = AlignmentMode::EQUAL_LENGTH)
//     classification: a label file has one column, the class index in [0, numPossibleLabels) at
//     each of its time steps; regression: every column of a label file is a label
//     (numPossibleLabels is not used, as in DL4J; pass -1).
// One reader, the label a column of each line:
//   SequenceRecordReaderDataSetIterator(reader, miniBatchSize, numPossibleLabels, labelIndex,
//                                       regression = false)
//     column labelIndex is the class (one-hot) or, for regression, the one label value; the other
//     columns are the features.
//
// Alignment of a feature sequence and its label sequence (two readers; DL4J's AlignmentMode):
//   EQUAL_LENGTH  they have the same length (DataMismatchError naming both files otherwise)
//   ALIGN_START   both start at time step 0; the shorter is padded at the end
//   ALIGN_END     both end at the minibatch's last time step; the shorter is padded at the start
//                 (a label only on the last step: many-to-one classification)
// Sequences of different lengths in one minibatch are padded to the longest: at the end, or for
// ALIGN_END at the start. DataSet::featuresMask and labelsMask ([examples, time steps], 1 for a
// real step, 0 for padding) mark the padding; a mask is left empty when no step of its tensor is
// padding. Padded values are 0.
//
// The iterator starts from the readers' first sequence (it resets them). The first sequence fixes
// the number of columns (read at construction and after reset(), so that inputColumns() and
// totalOutcomes() are known before the first batch). Sequences are read as batches are asked for;
// the last, partial batch of an epoch is kept. totalExamples() is the reader's number of
// sequences when it knows it (a CSVSequenceRecordReader does), else -1 until
// an epoch has been read to its end.
//
// Errors name the file, line and column (1-based) of the offending value:
//   DataFormatError    a value that is not a finite number, a class that is not an integer in
//                      [0, numPossibleLabels), a label column beyond the record (labelIndex out of
//                      range), a record with no feature column left, a classification label file
//                      with more than one column, a sequence with other columns than the first
//   DataMismatchError  feature and label sequences of different lengths under EQUAL_LENGTH (both
//                      files named), feature and label readers holding different numbers of
//                      sequences (at construction when both readers know their count, otherwise
//                      where the shorter one ends)
//   DataError          a reader holding no sequence at all (at construction); next() past the end
//   ConfigError        miniBatchSize not positive, numPossibleLabels not positive for
//                      classification, a negative labelIndex, the same reader given for features
//                      and labels, a null reader
// and the readers' own errors (a ragged or empty sequence file, a missing file).
//
// Borrows the readers: they must be initialized, outlive the iterator and not be used by anyone
// else meanwhile; the shared_ptr forms keep them alive instead. asyncSupported() is true.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iterators/DataSetIterator.h"
#include "iterators/SequenceRecordReader.h"

namespace dl4cpp {

class SequenceRecordReaderDataSetIterator : public DataSetIterator {
 public:
  enum class AlignmentMode { EQUAL_LENGTH, ALIGN_START, ALIGN_END };

  SequenceRecordReaderDataSetIterator(SequenceRecordReader& featuresReader,
                                      SequenceRecordReader& labelsReader, int miniBatchSize,
                                      int numPossibleLabels, bool regression = false,
                                      AlignmentMode alignmentMode = AlignmentMode::EQUAL_LENGTH);
  SequenceRecordReaderDataSetIterator(SequenceRecordReader& reader, int miniBatchSize,
                                      int numPossibleLabels, int labelIndex,
                                      bool regression = false);
  SequenceRecordReaderDataSetIterator(std::shared_ptr<SequenceRecordReader> featuresReader,
                                      std::shared_ptr<SequenceRecordReader> labelsReader,
                                      int miniBatchSize, int numPossibleLabels,
                                      bool regression = false,
                                      AlignmentMode alignmentMode = AlignmentMode::EQUAL_LENGTH);
  SequenceRecordReaderDataSetIterator(std::shared_ptr<SequenceRecordReader> reader,
                                      int miniBatchSize, int numPossibleLabels, int labelIndex,
                                      bool regression = false);
  ~SequenceRecordReaderDataSetIterator() override;
  SequenceRecordReaderDataSetIterator(const SequenceRecordReaderDataSetIterator&) = delete;
  SequenceRecordReaderDataSetIterator& operator=(const SequenceRecordReaderDataSetIterator&) =
      delete;

  bool hasNext() override;
  DataSet next() override;
  void reset() override;

  int batch() const override { return batch_; }
  int64_t inputColumns() const override { return featureColumns_; }
  int totalOutcomes() const override;
  int64_t totalExamples() const override;
  AlignmentMode alignmentMode() const { return alignment_; }

 private:
  // One example, converted: values row-major [steps][columns].
  struct Example {
    std::vector<float> features, labels;
    int64_t featureSteps = 0, labelSteps = 0;
  };

  bool singleReader() const { return labels_ == nullptr; }
  void validate();
  // reset() without virtual dispatch (the constructor calls it).
  void rewind();
  // Reads the first sequence (pair) of an epoch, fixing the number of columns on the first.
  void startEpoch();
  // The next example from the readers (checking that they pair up), or nullopt at the end.
  std::optional<Example> read();
  Example convert(const SequenceRecord& features, const SequenceRecord* labels);
  void checkWidth(const SequenceRecord& sequence, size_t expected, const std::string& firstFile,
                  const char* what) const;

  SequenceRecordReader* features_;
  SequenceRecordReader* labels_ = nullptr;  // null in the single-reader form
  std::shared_ptr<SequenceRecordReader> ownedFeatures_, ownedLabels_;
  int batch_;
  int numPossibleLabels_;
  int labelIndex_ = -1;  // single-reader form only
  bool regression_;
  AlignmentMode alignment_;
  int64_t featureColumns_ = 0;  // features per time step
  int64_t labelColumns_ = 0;    // label columns of a record (before one-hot expansion)
  size_t recordWidth_ = 0, labelRecordWidth_ = 0;
  std::string firstFile_, firstLabelFile_;  // where the widths were fixed, for errors
  int64_t readThisEpoch_ = 0;  // sequences (pairs) read this epoch, the read-ahead one included
  int64_t totalExamples_ = -1;
  std::optional<Example> pending_;  // the epoch's first example, read ahead by startEpoch()
};

}  // namespace dl4cpp
