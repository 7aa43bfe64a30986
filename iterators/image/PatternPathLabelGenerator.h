#pragma once
// PatternPathLabelGenerator: DataVec's PatternPathLabelGenerator(pattern, position): a file's label
// is a piece of its base name (the file name without its last extension), split at every match
// of the regular expression `pattern` (ECMAScript syntax, as std::regex; DataVec's Java regex
// agrees on the usual ones: "_", "-", "\\.", "[_-]"), the piece at `position` (0-based). As
// Java's String.split, trailing empty pieces are dropped.
//
//   // data/cat_001.png -> "cat", data/dog_002.png -> "dog"
//   auto labelMaker = std::make_shared<PatternPathLabelGenerator>("_", 0);
//
// ConfigError for a pattern std::regex rejects or a negative position; labelFor() throws
// DataError naming the file when its name has no piece at `position` or the piece is empty (a
// file that does not follow the naming scheme, which would otherwise be a class of its own).
// labelFor() is const and safe to call from several threads.
#include <memory>
#include <string>

#include "iterators/image/PathLabelGenerator.h"

namespace dl4cpp {

class PatternPathLabelGenerator : public PathLabelGenerator {
 public:
  explicit PatternPathLabelGenerator(const std::string& pattern, int position = 0);

  std::string labelFor(const std::filesystem::path& file) const override;

  const std::string& pattern() const { return pattern_; }
  int position() const { return position_; }

 private:
  struct Compiled;  // the std::regex, kept out of this header (<regex> is heavy to include)
  std::string pattern_;
  int position_;
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace dl4cpp
