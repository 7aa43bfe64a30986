#pragma once
// RecordValues: turning a record's text fields into numbers, with the errors every record
// iterator gives (RecordReaderDataSetIterator, SequenceRecordReaderDataSetIterator): the file,
// line and column (1-based) of the value, quoted bounded and escaped (nn/core/QuoteForMessage.h).
// Internal to the library (not installed).
#include <cstddef>
#include <cstdint>
#include <string>

namespace dl4cpp {

// "file: line 3, column 2" (column is 0-based here, shown 1-based).
std::string recordWhere(const std::string& file, int64_t line, size_t column);

// A field as a finite float: surrounding spaces and tabs are allowed, nothing else.
// DataFormatError naming the value and where it is: empty, text, NaN, inf, beyond float's range.
float parseRecordNumber(const std::string& text, const std::string& file, int64_t line,
                        size_t column);

// A class index: parseRecordNumber, then an integer in [0, numClasses) (DataFormatError).
int parseRecordClass(const std::string& text, int numClasses, const std::string& file, int64_t line,
                     size_t column);

}  // namespace dl4cpp
