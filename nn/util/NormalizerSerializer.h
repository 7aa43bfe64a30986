#pragma once
// NormalizerSerializer: a normalizer as bytes and back (DL4J's NormalizerSerializer): the payload
// of a model file's NORM section (docs/model-format.md), which ModelSerializer writes and reads.
// NormalizerStandardize, NormalizerMinMaxScaler and ImagePreProcessingScaler are supported.
//
// Reading never trusts the bytes: every length is checked before anything is read or allocated
// (a normalizer takes at most the bytes given), and what is read must make a normalizer that its
// own setters accept. Problems are DataFormatError, the message naming `source` and the section:
// a length that does not match the type and its statistics count, an unknown normalizer type or
// grouping, and settings or statistics the normalizer refuses (a target range that is not one,
// a non-finite or negative standard deviation, a min above its max, ...).
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "iterators/DataNormalization.h"

namespace dl4cpp {

class NormalizerSerializer {
 public:
  // ConfigError when `normalizer` is not fitted or not of a supported class.
  static std::vector<std::byte> toBytes(const DataNormalization& normalizer);
  static std::unique_ptr<DataNormalization> fromBytes(std::span<const std::byte> bytes,
                                                      const std::string& source);
};

}  // namespace dl4cpp
