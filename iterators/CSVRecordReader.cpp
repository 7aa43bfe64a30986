#include "iterators/CSVRecordReader.h"

#include <fmt/format.h>

#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

std::string describe(char c) {
  if (c == '\n') return "LF";
  if (c == '\r') return "CR";
  return std::string("'") + c + "'";
}

}  // namespace

CSVRecordReader::CSVRecordReader(int64_t skipNumLines, char delimiter, char quote)
    : skipNumLines_(skipNumLines), delimiter_(delimiter), quote_(quote) {
  if (skipNumLines < 0)
    throw ConfigError("CSVRecordReader: skipNumLines must be >= 0, got " +
                      std::to_string(skipNumLines));
  for (char c : {delimiter, quote})
    if (c == '\n' || c == '\r')
      throw ConfigError("CSVRecordReader: the delimiter and quote cannot be a line break (" +
                        describe(c) + ")");
  if (delimiter == quote)
    throw ConfigError("CSVRecordReader: the delimiter and the quote character are both " +
                      describe(delimiter));
}

CSVRecordReader::~CSVRecordReader() = default;

void CSVRecordReader::initialize(const FileSplit& split) {
  root_ = split.root();
  files_ = split.locations();
  initialized_ = true;
  reset();
}

void CSVRecordReader::reset() {
  if (!initialized_) throw ConfigError("CSVRecordReader: reset() before initialize()");
  nextFile_ = 0;
  parser_.reset();
  ahead_.reset();
}

bool CSVRecordReader::hasNext() {
  if (!initialized_) throw ConfigError("CSVRecordReader: hasNext() before initialize()");
  while (!ahead_) {
    if (!parser_) {
      if (nextFile_ == files_.size()) return false;
      parser_ = std::make_unique<CsvRecordParser>(files_[nextFile_++], delimiter_, quote_);
      parser_->skipLines(skipNumLines_);
    }
    Record record;
    if (parser_->next(record.values, record.line)) {
      record.file = parser_->path();
      ahead_ = std::move(record);
    } else {
      parser_.reset();
    }
  }
  return true;
}

std::string CSVRecordReader::describeSource() const {
  std::string source = files_.size() == 1
                           ? files_.front().string()
                           : fmt::format("the {} files of {}", files_.size(), root_.string());
  if (skipNumLines_ > 0)
    source += fmt::format(" (past {} {} header line{})", files_.size() == 1 ? "its" : "each one's",
                          skipNumLines_, skipNumLines_ == 1 ? "" : "s");
  return source;
}

Record CSVRecordReader::next() {
  if (!hasNext()) throw DataError("CSVRecordReader::next(): no record left; call reset()");
  Record record = std::move(*ahead_);
  ahead_.reset();
  return record;
}

}  // namespace dl4cpp
