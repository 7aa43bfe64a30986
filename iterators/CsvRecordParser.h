#pragma once
// CsvRecordParser: splits one CSV file into records, streaming it through a fixed-size buffer (a
// file is never held in memory whole), with RFC 4180 quoting:
//  - fields are separated by `delimiter`, records end at LF or CRLF (a CR before anything but LF
//    is data);
//  - a field that starts with `quote` is quoted: it may hold the delimiter, line breaks (kept as
//    they are) and the quote character written twice; after its closing quote only a delimiter
//    or the end of the record may follow;
//  - a quote character inside an unquoted field is an ordinary character;
//  - an empty line holds no record and is skipped; a UTF-8 byte order mark at the start is
//    dropped; a gzip file is decompressed on the fly (FileByteStream).
// Errors name the file, line and column (1-based, in bytes):
//   DataFormatError  an unterminated quote (at the quote that opened it), a character after a
//                    closing quote, a record longer than kMaxRecordBytes
//   and those of FileByteStream (missing file, not a regular file, corrupt gzip data).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "iterators/FileByteStream.h"

namespace dl4cpp {

class CsvRecordParser {
 public:
  // A bound on one record's size, so that a file with no line break (or an unclosed quote in a
  // huge file) is an error instead of unbounded memory.
  static constexpr size_t kMaxRecordBytes = size_t{1} << 24;

  CsvRecordParser(const std::filesystem::path& path, char delimiter, char quote);

  // Skips `lines` physical lines (header lines, not parsed: quotes in them mean nothing).
  void skipLines(int64_t lines);
  // Reads the next record into `fields` and sets `line` to the line it starts on; false at the
  // end of the file (after which the whole file has been checked, gzip trailer included).
  bool next(std::vector<std::string>& fields, int64_t& line);

  const std::string& path() const { return path_; }

 private:
  static constexpr int kEnd = -1;

  int peek();
  int get();
  [[noreturn]] void fail(const std::string& what, int64_t line, int64_t column) const;
  void append(std::string& field, int c, size_t& recordBytes, int64_t recordLine);
  // Reads the rest of a quoted field (the opening quote consumed).
  void readQuoted(std::string& field, size_t& recordBytes, int64_t recordLine);
  // The byte after the next one (reading on when the next is the last of the buffer).
  int peekSecond();
  // Whether a line break ("\n" or "\r\n") is next; a CR before anything else is data.
  bool atLineBreak();
  // Consumes a line break ("\n" or "\r\n") when one is next; says whether it did.
  bool takeLineBreak();

  std::string path_;
  FileByteStream stream_;
  char delimiter_, quote_;
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0, end_ = 0;
  bool finished_ = false;
  int64_t line_ = 1, column_ = 1;  // position of the next byte
};

}  // namespace dl4cpp
