#include "iterators/RecordValues.h"

#include <cfloat>
#include <charconv>
#include <cmath>

#include "nn/core/Error.h"
#include "nn/core/QuoteForMessage.h"

namespace dl4cpp {

std::string recordWhere(const std::string& file, int64_t line, size_t column) {
  return file + ": line " + std::to_string(line) + ", column " + std::to_string(column + 1);
}

float parseRecordNumber(const std::string& text, const std::string& file, int64_t line,
                        size_t column) {
  const size_t begin = text.find_first_not_of(" \t");
  const size_t end = text.find_last_not_of(" \t");
  if (begin == std::string::npos)
    throw DataFormatError(recordWhere(file, line, column) +
                          ": empty value where a number is expected");
  const char* first = text.data() + begin;
  const char* last = text.data() + end + 1;
  if (*first == '+') ++first;  // from_chars takes no leading '+'
  double value = 0;
  const auto [ptr, ec] = std::from_chars(first, last, value);
  const bool parsed = ec == std::errc() && ptr == last;
  if (parsed && std::isfinite(value) && std::fabs(value) <= FLT_MAX)
    return static_cast<float>(value);
  const bool outOfRange = ec == std::errc::result_out_of_range || (parsed && std::isfinite(value));
  throw DataFormatError(recordWhere(file, line, column) + ": " + quoteForMessage(text) +
                        " is not a finite number" + (outOfRange ? " in float's range" : ""));
}

int parseRecordClass(const std::string& text, int numClasses, const std::string& file, int64_t line,
                     size_t column) {
  const float value = parseRecordNumber(text, file, line, column);
  if (value != std::floor(value) || value < 0 || value >= static_cast<float>(numClasses))
    throw DataFormatError(recordWhere(file, line, column) + ": class " + quoteForMessage(text) +
                          " is not an integer in [0, " + std::to_string(numClasses) + ")");
  return static_cast<int>(value);
}

}  // namespace dl4cpp
