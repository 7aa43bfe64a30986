#pragma once
// InputSplit: the files a reader reads, in the order it reads them, as DataVec's InputSplit (a
// CollectionInputSplit when built from a list). FileSplit lists a folder; sample() cuts a split
// into parts, DataVec's BaseInputSplit.sample:
//
//   FileSplit all(dir, NativeImageLoader::ALLOWED_FORMATS, seed);   // shuffled with seed
//   BalancedPathFilter pathFilter(seed, NativeImageLoader::ALLOWED_FORMATS, labelMaker);
//   std::vector<InputSplit> parts = all.sample(pathFilter, 80, 20);  // train, test
//
// PathFilter: what sample() passes the locations through first (DataVec's PathFilter): it may
// drop, reorder or keep them. BalancedPathFilter (iterators/image/LabeledFileSplit.h) is one.
//
// sample(filter, w0, w1, ...): the filter's result (or the locations as they are, for a null
// filter) cut, in its order, into one part per weight, part i holding the paths from
// round(n * (w0 + ... + w(i-1)) / W) to round(n * (w0 + ... + wi) / W), W the sum of the
// weights (rounding halves up): weights are proportions, (80, 20) and (0.8, 0.2) cut alike. The
// parts never overlap and together hold every path; no weight gives one part with all of them.
// Nothing is drawn at random here: the order is the split's (FileSplit's seeded shuffle) or the
// filter's (BalancedPathFilter's seeded draw), so one seed gives the same parts every run.
// ConfigError for a negative or non-finite weight, or weights summing to 0.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <type_traits>
#include <utility>
#include <vector>

namespace dl4cpp {

class PathFilter {
 public:
  virtual ~PathFilter() = default;
  // The paths to keep, in the order to keep them.
  virtual std::vector<std::filesystem::path> filter(
      const std::vector<std::filesystem::path>& paths) const = 0;

 protected:
  PathFilter() = default;
  PathFilter(const PathFilter&) = default;
  PathFilter& operator=(const PathFilter&) = default;
};

class InputSplit {
 public:
  // The files, in the order given (DataVec's CollectionInputSplit).
  explicit InputSplit(std::vector<std::filesystem::path> locations)
      : locations_(std::move(locations)) {}

  // The files in the order a reader reads them.
  const std::vector<std::filesystem::path>& locations() const { return locations_; }
  // The number of files.
  int64_t length() const { return static_cast<int64_t>(locations_.size()); }

  // DataVec's sample(pathFilter, weights...): `filter` may be null (the locations as they are).
  std::vector<InputSplit> sample(const PathFilter* filter,
                                 const std::vector<double>& weights) const;
  template <typename... Weights>
  requires(std::is_arithmetic_v<Weights>&&...) std::vector<InputSplit> sample(
      const PathFilter& filter, Weights... weights)
  const { return sample(&filter, std::vector<double>{static_cast<double>(weights)...}); }
  template <typename... Weights>
  requires(std::is_arithmetic_v<Weights>&&...) std::vector<InputSplit> sample(std::nullptr_t,
                                                                              Weights... weights)
  const {
    return sample(static_cast<const PathFilter*>(nullptr),
                  std::vector<double>{static_cast<double>(weights)...});
  }

 protected:
  InputSplit() = default;

  std::vector<std::filesystem::path> locations_;
};

}  // namespace dl4cpp
