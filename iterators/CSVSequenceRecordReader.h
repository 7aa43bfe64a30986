#pragma once
// CSVSequenceRecordReader: one sequence per CSV file, one time step per line, as DataVec's
// CSVSequenceRecordReader(skipNumLines, delimiter).
//
//   CSVSequenceRecordReader features(1, ',');   // skip one header line in every file
//   features.initialize(NumberedFileInputSplit("data/features/%d.csv", 0, 449));
//   CSVSequenceRecordReader labels(1, ',');
//   labels.initialize(NumberedFileInputSplit("data/labels/%d.csv", 0, 449));
//   SequenceRecordReaderDataSetIterator it(features, labels, 32, 6, false,
//       SequenceRecordReaderDataSetIterator::AlignmentMode::ALIGN_END);
//
// A file is parsed as CSVRecordReader parses one (CsvRecordParser: RFC 4180 quoting, LF or CRLF,
// empty lines skipped, gzip read as is), its first skipNumLines lines skipped unparsed, and is
// held in memory while it is the current sequence (a file is one example). Files are read in the
// split's order, one per sequenceRecord().
//
// Errors name the file and line:
//   DataFormatError  a line with another number of fields than the file's first time step
//                    (ragged), a file with no time step (empty, or nothing past its header lines)
//   ConfigError      a negative skipNumLines, a line-break or equal delimiter and quote; reading
//                    before initialize()
// and those of CsvRecordParser and FileByteStream (a missing file: DataNotFoundError, naming it).
// Whether a field is a number is checked where it is converted, by the iterator (naming the file,
// line and column).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "iterators/SequenceRecordReader.h"

namespace dl4cpp {

class CSVSequenceRecordReader : public SequenceRecordReader {
 public:
  static constexpr char kDefaultDelimiter = ',';
  static constexpr char kDefaultQuote = '"';

  explicit CSVSequenceRecordReader(int64_t skipNumLines = 0, char delimiter = kDefaultDelimiter,
                                   char quote = kDefaultQuote);

  void initialize(const InputSplit& split) override;
  bool hasNext() override;
  SequenceRecord sequenceRecord() override;
  void reset() override;
  int64_t numSequences() const override;
  std::string describeSource() const override;

 private:
  void requireInitialized(const char* method) const;

  std::vector<std::filesystem::path> files_;
  bool initialized_ = false;
  int64_t skipNumLines_;
  char delimiter_, quote_;
  size_t nextFile_ = 0;  // index in files_ of the next sequence
};

}  // namespace dl4cpp
