#pragma once
// FileSplit: the files a record reader reads, as DataVec's FileSplit:
//   FileSplit(path)                        one file, or every regular file under a directory
//                                          (recursively), in sorted path order, so that the order
//                                          of records does not depend on the file system
//   FileSplit(dir, allowedFormats[, seed]) DataVec's FileSplit(rootDir, allowFormat[, random]):
//                                          the files under dir whose extension is one of
//                                          allowedFormats (NativeImageLoader::ALLOWED_FORMATS for
//                                          images), listed as LabeledFileSplit lists an image
//                                          folder (case-insensitive extensions; other files and
//                                          hidden ones skipped and counted, skippedFiles())
//   FileSplit(dir, seed)                   every file, as FileSplit(path)
// With a seed the files are in an order drawn from the seed alone (the same on every platform:
// the sorted list shuffled), the order sample() cuts and a reader reads. DL4J's `Random rng`
// becomes that seed: each component that draws (the split, BalancedPathFilter, a seeded
// transform) draws from its own stream of it, so the result does not depend on the order the
// components are built in, as it would with one shared generator.
//
// DataNotFoundError when the path does not exist or a directory holds no (accepted) file;
// with allowedFormats, DataError for an empty class folder (a folder without subfolders that
// holds no accepted file) and ConfigError for an empty format list, as LabeledFileSplit.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "iterators/InputSplit.h"

namespace dl4cpp {

class FileSplit : public InputSplit {
 public:
  explicit FileSplit(const std::filesystem::path& path);
  FileSplit(const std::filesystem::path& path, uint64_t seed);
  FileSplit(const std::filesystem::path& dir, const std::vector<std::string>& allowedFormats);
  FileSplit(const std::filesystem::path& dir, const std::vector<std::string>& allowedFormats,
            uint64_t seed);

  const std::filesystem::path& root() const { return root_; }
  // Files under root left out: other extensions and hidden files (allowedFormats forms only).
  int64_t skippedFiles() const { return skipped_; }

 private:
  void shuffle(uint64_t seed);

  std::filesystem::path root_;
  int64_t skipped_ = 0;
};

}  // namespace dl4cpp
