#pragma once
// FileSplit: the files a record reader reads, as DataVec's FileSplit(File): one file, or every
// regular file under a directory (recursively), in sorted path order so that the order of records
// does not depend on the file system.
//
// DataNotFoundError when the path does not exist or a directory holds no regular file.
#include <filesystem>
#include <vector>

namespace dl4cpp {

class FileSplit {
 public:
  explicit FileSplit(const std::filesystem::path& path);

  const std::filesystem::path& root() const { return root_; }
  const std::vector<std::filesystem::path>& locations() const { return locations_; }

 private:
  std::filesystem::path root_;
  std::vector<std::filesystem::path> locations_;
};

}  // namespace dl4cpp
