#include "iterators/CSVSequenceRecordReader.h"

#include <fmt/format.h>

#include "iterators/CsvRecordParser.h"
#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

constexpr const char* kName = "CSVSequenceRecordReader";

std::string describe(char c) {
  if (c == '\n') return "LF";
  if (c == '\r') return "CR";
  return std::string("'") + c + "'";
}

std::string headerLines(int64_t skipNumLines, const char* whose) {
  if (skipNumLines == 0) return "";
  return fmt::format(" (past {} {} header line{})", whose, skipNumLines,
                     skipNumLines == 1 ? "" : "s");
}

}  // namespace

CSVSequenceRecordReader::CSVSequenceRecordReader(int64_t skipNumLines, char delimiter, char quote)
    : skipNumLines_(skipNumLines), delimiter_(delimiter), quote_(quote) {
  if (skipNumLines < 0)
    throw ConfigError(fmt::format("{}: skipNumLines must be >= 0, got {}", kName, skipNumLines));
  for (char c : {delimiter, quote})
    if (c == '\n' || c == '\r')
      throw ConfigError(fmt::format("{}: the delimiter and quote cannot be a line break ({})",
                                    kName, describe(c)));
  if (delimiter == quote)
    throw ConfigError(fmt::format("{}: the delimiter and the quote character are both {}", kName,
                                  describe(delimiter)));
}

void CSVSequenceRecordReader::initialize(const InputSplit& split) {
  files_ = split.locations();
  initialized_ = true;
  nextFile_ = 0;
}

void CSVSequenceRecordReader::requireInitialized(const char* method) const {
  if (!initialized_) throw ConfigError(fmt::format("{}: {}() before initialize()", kName, method));
}

void CSVSequenceRecordReader::reset() {
  requireInitialized("reset");
  nextFile_ = 0;
}

bool CSVSequenceRecordReader::hasNext() {
  requireInitialized("hasNext");
  return nextFile_ < files_.size();
}

int64_t CSVSequenceRecordReader::numSequences() const {
  return initialized_ ? static_cast<int64_t>(files_.size()) : -1;
}

std::string CSVSequenceRecordReader::describeSource() const {
  if (files_.size() == 1) return files_.front().string() + headerLines(skipNumLines_, "its");
  std::string source = fmt::format("{} sequence files", files_.size());
  if (!files_.empty()) source += fmt::format(" ({} ...)", files_.front().string());
  return source + headerLines(skipNumLines_, "each one's");
}

SequenceRecord CSVSequenceRecordReader::sequenceRecord() {
  if (!hasNext())
    throw DataError(fmt::format("{}::sequenceRecord(): no sequence left; call reset()", kName));
  const std::filesystem::path& path = files_[nextFile_];
  // Past this file whatever happens: a caller that catches the error and goes on reads the next
  // sequence, not this one again.
  ++nextFile_;
  CsvRecordParser parser(path, delimiter_, quote_);
  parser.skipLines(skipNumLines_);
  SequenceRecord sequence;
  sequence.file = parser.path();
  std::vector<std::string> fields;
  int64_t line = 0;
  while (parser.next(fields, line)) {
    if (!sequence.steps.empty() && fields.size() != sequence.steps.front().size())
      throw DataFormatError(fmt::format(
          "{}: line {}: {} field{} where the sequence's first time step (line {}) has {}: every "
          "line of a sequence file is one time step with the same columns",
          sequence.file, line, fields.size(), fields.size() == 1 ? "" : "s", sequence.lines.front(),
          sequence.steps.front().size()));
    sequence.steps.push_back(fields);
    sequence.lines.push_back(line);
  }
  if (sequence.steps.empty())
    throw DataFormatError(fmt::format(
        "{}: the sequence file holds no time step{}: a sequence needs at least one line",
        sequence.file, headerLines(skipNumLines_, "its")));
  return sequence;
}

}  // namespace dl4cpp
