#include "iterators/InputSplit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nn/core/Error.h"

namespace dl4cpp {

std::vector<InputSplit> InputSplit::sample(const PathFilter* filter,
                                           const std::vector<double>& weights) const {
  std::vector<std::filesystem::path> paths = filter ? filter->filter(locations_) : locations_;
  if (weights.empty()) return {InputSplit(std::move(paths))};
  double total = 0;
  for (double weight : weights) {
    if (!std::isfinite(weight) || weight < 0)
      throw ConfigError(
          fmt::format("InputSplit::sample: weights must be finite and >= 0, got {} (weights are "
                      "proportions: 80, 20 or 0.8, 0.2)",
                      weight));
    total += weight;
  }
  if (!(total > 0)) throw ConfigError("InputSplit::sample: the weights sum to 0");

  const double n = static_cast<double>(paths.size());
  // Part i ends at round(n * (w0 + ... + wi) / total), halves rounded up as Java's Math.round
  // does, so that a port cuts where DataVec cuts; the last part ends at n whatever the rounding.
  std::vector<InputSplit> parts;
  double cumulative = 0;
  size_t begin = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    cumulative += weights[i];
    const size_t end =
        i + 1 == weights.size()
            ? paths.size()
            : std::min(paths.size(), static_cast<size_t>(std::floor(cumulative * n / total + 0.5)));
    parts.emplace_back(std::vector<std::filesystem::path>(
        paths.begin() + static_cast<std::ptrdiff_t>(begin),
        paths.begin() + static_cast<std::ptrdiff_t>(std::max(begin, end))));
    begin = std::max(begin, end);
  }
  return parts;
}

}  // namespace dl4cpp
