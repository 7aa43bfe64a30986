#pragma once
// PathLabelGenerator: the label of a file, from its path, as DataVec's PathLabelGenerator.
// ParentPathLabelGenerator names a file's class by the folder that holds it (root/cat/1.png is a
// "cat"), MATLAB's 'LabelSource', 'foldernames' and DataVec's ParentPathLabelGenerator.
#include <filesystem>
#include <string>

namespace dl4cpp {

class PathLabelGenerator {
 public:
  virtual ~PathLabelGenerator() = default;
  virtual std::string labelFor(const std::filesystem::path& file) const = 0;

 protected:
  PathLabelGenerator() = default;
  PathLabelGenerator(const PathLabelGenerator&) = default;
  PathLabelGenerator& operator=(const PathLabelGenerator&) = default;
};

class ParentPathLabelGenerator : public PathLabelGenerator {
 public:
  std::string labelFor(const std::filesystem::path& file) const override {
    return file.parent_path().filename().string();
  }
};

}  // namespace dl4cpp
