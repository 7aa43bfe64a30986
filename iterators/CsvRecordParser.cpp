#include "iterators/CsvRecordParser.h"

#include "nn/core/Error.h"
#include "nn/core/QuoteForMessage.h"

namespace dl4cpp {

namespace {

constexpr size_t kBufferBytes = size_t{1} << 16;

}  // namespace

CsvRecordParser::CsvRecordParser(const std::filesystem::path& path, char delimiter, char quote)
    : path_(path.string()),
      stream_(path, "a CSV file"),
      delimiter_(delimiter),
      quote_(quote),
      buffer_(kBufferBytes) {
  static const uint8_t bom[] = {0xef, 0xbb, 0xbf};
  if (peek() == bom[0] && end_ - pos_ >= 3 && buffer_[pos_ + 1] == bom[1] &&
      buffer_[pos_ + 2] == bom[2])
    pos_ += 3;
}

int CsvRecordParser::peek() {
  if (pos_ == end_) {
    if (finished_) return kEnd;
    pos_ = 0;
    end_ = stream_.read(buffer_.data(), buffer_.size());
    if (end_ == 0) {
      stream_.finish();
      finished_ = true;
      return kEnd;
    }
  }
  return buffer_[pos_];
}

int CsvRecordParser::get() {
  const int c = peek();
  if (c == kEnd) return kEnd;
  ++pos_;
  if (c == '\n') {
    ++line_;
    column_ = 1;
  } else {
    ++column_;
  }
  return c;
}

void CsvRecordParser::fail(const std::string& what, int64_t line, int64_t column) const {
  throw DataFormatError(path_ + ": line " + std::to_string(line) + ", column " +
                        std::to_string(column) + ": " + what);
}

void CsvRecordParser::append(std::string& field, int c, size_t& recordBytes, int64_t recordLine) {
  if (++recordBytes > kMaxRecordBytes)
    fail("the record starting on line " + std::to_string(recordLine) + " is longer than " +
             std::to_string(kMaxRecordBytes) + " bytes (a missing line break or closing quote?)",
         line_, column_);
  field.push_back(static_cast<char>(c));
}

int CsvRecordParser::peekSecond() {
  if (peek() == kEnd) return kEnd;
  if (pos_ + 1 == end_ && !finished_) {  // move the last byte to the front and read behind it
    buffer_[0] = buffer_[pos_];
    pos_ = 0;
    const size_t n = stream_.read(buffer_.data() + 1, buffer_.size() - 1);
    end_ = 1 + n;
    if (n == 0) {
      stream_.finish();
      finished_ = true;
    }
  }
  return pos_ + 1 < end_ ? buffer_[pos_ + 1] : kEnd;
}

bool CsvRecordParser::atLineBreak() {
  const int c = peek();
  return c == '\n' || (c == '\r' && peekSecond() == '\n');
}

bool CsvRecordParser::takeLineBreak() {
  if (!atLineBreak()) return false;
  if (get() == '\r') get();
  return true;
}

void CsvRecordParser::readQuoted(std::string& field, size_t& recordBytes, int64_t recordLine) {
  const int64_t openLine = line_, openColumn = column_ - 1;
  for (;;) {
    const int c = get();
    if (c == kEnd)
      fail("unterminated quoted field: the quote opened here is never closed", openLine,
           openColumn);
    if (c != quote_) {
      append(field, c, recordBytes, recordLine);
      continue;
    }
    if (peek() == quote_) {  // a doubled quote stands for one
      get();
      append(field, quote_, recordBytes, recordLine);
      continue;
    }
    const int after = peek();
    if (after != kEnd && after != delimiter_ && !atLineBreak())
      fail(quoteForMessage(std::string(1, static_cast<char>(after))) +
               " after the closing quote of a field (expected the delimiter or "
               "the end of the line)",
           line_, column_);
    return;
  }
}

void CsvRecordParser::skipLines(int64_t lines) {
  while (lines > 0) {
    const int c = get();
    if (c == kEnd) return;
    if (c == '\n') --lines;
  }
}

bool CsvRecordParser::next(std::vector<std::string>& fields, int64_t& line) {
  while (takeLineBreak()) {
  }
  if (peek() == kEnd) return false;
  line = line_;
  fields.clear();
  fields.emplace_back();
  size_t recordBytes = 0;
  bool atFieldStart = true;
  for (;;) {
    if (takeLineBreak()) return true;
    const int c = get();
    if (c == kEnd) return true;
    if (c == delimiter_) {
      fields.emplace_back();
      atFieldStart = true;
      continue;
    }
    if (atFieldStart && c == quote_) {
      readQuoted(fields.back(), recordBytes, line);
    } else {
      append(fields.back(), c, recordBytes, line);
    }
    atFieldStart = false;
  }
}

}  // namespace dl4cpp
