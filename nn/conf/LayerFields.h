#pragma once
// How a layer type writes its own fields into a configuration's JSON and reads them back, without
// seeing the JSON library: MultiLayerConfiguration::toJson() hands each layer a writer for its
// object, fromJson() a reader. The common fields of every layer (name, activation, updaters, l2,
// ...) are written and read by the configuration itself; a layer type handles only the fields it
// adds (Layer::writeFields / Layer::readFields).
//
// A reader never trusts the text: every accessor checks the field's presence and type, and sizes
// their range, and throws ConfigError naming the JSON path ("$.layers[2].kernel") otherwise.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nn/conf/Enums.h"

namespace dl4cpp {

class LayerFieldWriter {
 public:
  virtual ~LayerFieldWriter() = default;
  virtual void integer(std::string_view key, int64_t value) = 0;
  virtual void number(std::string_view key, double value) = 0;
  virtual void boolean(std::string_view key, bool value) = 0;
  virtual void string(std::string_view key, std::string_view value) = 0;
  virtual void integers(std::string_view key, std::span<const int64_t> values) = 0;
  virtual void null(std::string_view key) = 0;

  template <typename E, size_t N>
  void enumValue(std::string_view key, const EnumNames<E, N>& names, E value) {
    string(key, nameOf(names, value));
  }
  // An unset optional field is written as null.
  template <typename E, size_t N>
  void optionalEnum(std::string_view key, const EnumNames<E, N>& names,
                    const std::optional<E>& value) {
    if (value)
      enumValue(key, names, *value);
    else
      null(key);
  }
};

class LayerFieldReader {
 public:
  virtual ~LayerFieldReader() = default;
  virtual bool isNull(std::string_view key) const = 0;
  // An integer in [0, max]: sizes are bounded before anything multiplies them.
  virtual int64_t size(std::string_view key, int64_t max) const = 0;
  // An array of exactly `count` integers, each in [0, max].
  virtual std::vector<int64_t> sizes(std::string_view key, size_t count, int64_t max) const = 0;
  virtual double number(std::string_view key) const = 0;
  virtual bool boolean(std::string_view key) const = 0;
  virtual std::string string(std::string_view key) const = 0;
  // The index in `names` of the string at `key`; ConfigError listing the names otherwise.
  virtual size_t choice(std::string_view key, std::span<const char* const> names) const = 0;
  // ConfigError for the field at `key`: "<path>: <problem>".
  [[noreturn]] virtual void fail(std::string_view key, const std::string& problem) const = 0;

  template <typename E, size_t N>
  E enumValue(std::string_view key, const EnumNames<E, N>& names) const {
    std::array<const char*, N> labels{};
    for (size_t i = 0; i < N; ++i) labels[i] = names[i].second;
    return names[choice(key, labels)].first;
  }
  template <typename E, size_t N>
  std::optional<E> optionalEnum(std::string_view key, const EnumNames<E, N>& names) const {
    if (isNull(key)) return std::nullopt;
    return enumValue(key, names);
  }
};

}  // namespace dl4cpp
