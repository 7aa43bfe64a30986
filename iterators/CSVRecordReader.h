#pragma once
// CSVRecordReader: the records of CSV files, as DataVec's CSVRecordReader(skipNumLines, delimiter,
// quote).
//
//   CSVRecordReader reader(1, ',');            // skip one header line
//   reader.initialize(FileSplit("iris.csv"));  // or a directory: its files in sorted order
//   RecordReaderDataSetIterator it(reader, 32, 4, 3);
//
// Files are streamed (CsvRecordParser: RFC 4180 quoting, LF or CRLF, gzip read as is); the first
// skipNumLines lines of every file are skipped unparsed. Records hold the fields as text; a reader
// reads one file at a time and keeps one record ahead. Errors name the file, line and column (see
// CsvRecordParser); reading before initialize() is a ConfigError.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "iterators/CsvRecordParser.h"
#include "iterators/RecordReader.h"

namespace dl4cpp {

class CSVRecordReader : public RecordReader {
 public:
  static constexpr char kDefaultDelimiter = ',';
  static constexpr char kDefaultQuote = '"';

  // skipNumLines >= 0; the delimiter and quote must differ and be neither CR nor LF (ConfigError).
  explicit CSVRecordReader(int64_t skipNumLines = 0, char delimiter = kDefaultDelimiter,
                           char quote = kDefaultQuote);
  ~CSVRecordReader() override;

  void initialize(const FileSplit& split) override;
  void initialize(const std::filesystem::path& path) { initialize(FileSplit(path)); }
  bool hasNext() override;
  Record next() override;
  void reset() override;
  std::string describeSource() const override;

 private:
  std::filesystem::path root_;
  std::vector<std::filesystem::path> files_;
  bool initialized_ = false;
  int64_t skipNumLines_;
  char delimiter_, quote_;
  size_t nextFile_ = 0;                      // index in files_ of the next file to open
  std::unique_ptr<CsvRecordParser> parser_;  // the file being read, or null
  std::optional<Record> ahead_;              // the record next() returns
};

}  // namespace dl4cpp
