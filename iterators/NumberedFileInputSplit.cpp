#include "iterators/NumberedFileInputSplit.h"

#include <fmt/format.h>

#include "nn/core/Error.h"
#include "nn/core/QuoteForMessage.h"

namespace dl4cpp {

namespace {

// Above this many files a split is more likely a typo in the range than a data set.
constexpr int64_t kMaxFiles = int64_t{1} << 26;

// baseString cut around its one index pattern, with "%%" turned into '%'.
struct Pattern {
  std::string before, after;
  int width = 0;  // 0: "%d"; N: "%0Nd"
};

Pattern parse(const std::string& base) {
  const auto fail = [&](const std::string& what) -> Pattern {
    throw ConfigError("NumberedFileInputSplit: " + quoteForMessage(base, 200) + ": " + what +
                      " (the index is written where \"%d\" or \"%0Nd\" stands, \"%%\" for a '%')");
  };
  Pattern pattern;
  bool found = false;
  std::string* out = &pattern.before;
  for (size_t i = 0; i < base.size(); ++i) {
    if (base[i] != '%') {
      out->push_back(base[i]);
      continue;
    }
    if (i + 1 < base.size() && base[i + 1] == '%') {
      out->push_back('%');
      ++i;
      continue;
    }
    int width = 0;
    size_t j = i + 1;
    if (j + 2 < base.size() && base[j] == '0' && base[j + 1] >= '1' && base[j + 1] <= '9') {
      width = base[j + 1] - '0';
      j += 2;
    }
    if (j >= base.size() || base[j] != 'd')
      return fail("'%' at byte " + std::to_string(i + 1) + " starts no \"%d\" or \"%0Nd\"");
    if (found) return fail("more than one index pattern");
    found = true;
    pattern.width = width;
    out = &pattern.after;
    i = j;
  }
  if (!found) return fail("no index pattern");
  return pattern;
}

}  // namespace

NumberedFileInputSplit::NumberedFileInputSplit(const std::string& baseString,
                                               int64_t minIdxInclusive, int64_t maxIdxInclusive)
    : baseString_(baseString), min_(minIdxInclusive), max_(maxIdxInclusive) {
  const Pattern pattern = parse(baseString);
  if (minIdxInclusive < 0 || minIdxInclusive > maxIdxInclusive)
    throw ConfigError(fmt::format(
        "NumberedFileInputSplit: the index range [{}, {}] is not 0 <= min <= max (both ends are "
        "included)",
        minIdxInclusive, maxIdxInclusive));
  if (maxIdxInclusive - minIdxInclusive >= kMaxFiles)
    throw ConfigError(
        fmt::format("NumberedFileInputSplit: the index range [{}, {}] names more "
                    "than {} files",
                    minIdxInclusive, maxIdxInclusive, kMaxFiles));
  locations_.reserve(static_cast<size_t>(maxIdxInclusive - minIdxInclusive + 1));
  for (int64_t i = minIdxInclusive; i <= maxIdxInclusive; ++i)
    locations_.emplace_back(pattern.before + fmt::format("{:0{}d}", i, pattern.width) +
                            pattern.after);
}

}  // namespace dl4cpp
