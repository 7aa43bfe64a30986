#include "iterators/image/PatternPathLabelGenerator.h"

#include <fmt/format.h>

#include <regex>
#include <vector>

#include "nn/core/Error.h"

namespace dl4cpp {

struct PatternPathLabelGenerator::Compiled {
  std::regex regex;
};

PatternPathLabelGenerator::PatternPathLabelGenerator(const std::string& pattern, int position)
    : pattern_(pattern), position_(position) {
  if (position < 0)
    throw ConfigError(
        fmt::format("PatternPathLabelGenerator: position must be >= 0, got {}", position));
  try {
    compiled_ = std::make_shared<const Compiled>(Compiled{std::regex(pattern)});
  } catch (const std::regex_error& e) {
    throw ConfigError(fmt::format("PatternPathLabelGenerator: '{}' is not a regular expression: {}",
                                  pattern, e.what()));
  }
}

std::string PatternPathLabelGenerator::labelFor(const std::filesystem::path& file) const {
  const std::string name = file.stem().string();
  std::vector<std::string> pieces(
      std::sregex_token_iterator(name.begin(), name.end(), compiled_->regex, -1),
      std::sregex_token_iterator());
  while (!pieces.empty() && pieces.back().empty()) pieces.pop_back();
  if (static_cast<size_t>(position_) >= pieces.size())
    throw DataError(fmt::format(
        "PatternPathLabelGenerator: '{}': the name '{}' split at '{}' has {} piece(s), no piece "
        "{} to be its label",
        file.string(), name, pattern_, pieces.size(), position_));
  std::string& label = pieces[static_cast<size_t>(position_)];
  if (label.empty())
    throw DataError(fmt::format(
        "PatternPathLabelGenerator: '{}': piece {} of the name '{}' split at '{}' is empty",
        file.string(), position_, name, pattern_));
  return std::move(label);
}

}  // namespace dl4cpp
