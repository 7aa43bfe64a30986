#include "iterators/CharacterIterator.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "iterators/FileByteStream.h"
#include "iterators/image/ExampleRandom.h"
#include "nn/core/QuoteForMessage.h"

namespace dl4cpp {

namespace {

constexpr const char* kName = "CharacterIterator";

int positive(int value, const char* what) {
  if (value <= 0)
    throw ConfigError(fmt::format("{}: {} must be positive, got {}", kName, what, value));
  return value;
}

// The whole file (a gzip file decompressed).
std::string readWhole(const std::filesystem::path& path) {
  FileByteStream stream(path, "a text file");
  std::string text;
  std::vector<uint8_t> buffer(size_t{1} << 16);
  for (size_t n; (n = stream.read(buffer.data(), buffer.size())) > 0;)
    text.append(reinterpret_cast<const char*>(buffer.data()), n);
  stream.finish();
  return text;
}

}  // namespace

std::string minimalCharacterSet() {
  std::string set;
  for (char c = 'a'; c <= 'z'; ++c) set.push_back(c);
  for (char c = 'A'; c <= 'Z'; ++c) set.push_back(c);
  for (char c = '0'; c <= '9'; ++c) set.push_back(c);
  return set + "!&()?-'\",.:; \n\t";
}

std::string defaultCharacterSet() { return minimalCharacterSet() + "@#$%^*{}[]/+_\\|<>"; }

CharacterIterator::CharacterIterator(const std::filesystem::path& textFile, int miniBatchSize,
                                     int exampleLength, std::string validCharacters, uint64_t seed,
                                     std::string commentChars)
    : CharacterIterator(textFile, miniBatchSize, exampleLength,
                        Options{.validCharacters = std::move(validCharacters),
                                .seed = seed,
                                .commentChars = std::move(commentChars)}) {}

CharacterIterator::CharacterIterator(const std::filesystem::path& textFile, int miniBatchSize,
                                     int exampleLength, Options options)
    : path_(textFile.string()),
      miniBatchSize_(positive(miniBatchSize, "miniBatchSize")),
      exampleLength_(positive(exampleLength, "exampleLength")),
      valid_(std::move(options.validCharacters)),
      seed_(options.seed),
      inputFormat_(options.inputFormat) {
  if (valid_.empty())
    throw ConfigError(fmt::format(
        "{}: the set of valid characters is empty (CharacterIterator::getMinimalCharacterSet() "
        "is a start)",
        kName));
  indexOf_.fill(-1);
  for (size_t i = 0; i < valid_.size(); ++i) {
    const auto byte = static_cast<uint8_t>(valid_[i]);
    if (indexOf_[byte] >= 0)
      throw ConfigError(fmt::format("{}: {} is in the set of valid characters twice (at {} and {})",
                                    kName, quoteForMessage(std::string(1, valid_[i])),
                                    indexOf_[byte], i));
    indexOf_[byte] = static_cast<int16_t>(i);
  }

  const std::string raw = readWhole(textFile);
  if (raw.empty()) throw DataError(fmt::format("{}: {} is empty", kName, path_));
  // Line by line, as DL4J reads it: comment lines dropped, every kept line ending with '\n' when
  // that is a valid character (CRLF read as LF, a last line without one given one).
  const int16_t newline = indexOf_['\n'];
  int64_t commentLines = 0;
  text_.reserve(raw.size());
  for (size_t begin = 0; begin < raw.size();) {
    size_t end = raw.find('\n', begin);
    if (end == std::string::npos) end = raw.size();
    size_t lineEnd = end;
    if (lineEnd > begin && raw[lineEnd - 1] == '\r') --lineEnd;
    const std::string_view line(raw.data() + begin, lineEnd - begin);
    begin = end + 1;
    if (!options.commentChars.empty() && line.starts_with(options.commentChars)) {
      ++commentLines;
      continue;
    }
    for (char c : line) {
      const int16_t index = indexOf_[static_cast<uint8_t>(c)];
      if (index >= 0) text_.push_back(static_cast<uint8_t>(index));
    }
    if (newline >= 0) text_.push_back(static_cast<uint8_t>(newline));
  }
  const std::string dropped =
      commentLines > 0
          ? fmt::format(" (past {} comment line{} starting with {})", commentLines,
                        commentLines == 1 ? "" : "s", quoteForMessage(options.commentChars))
          : "";
  if (text_.empty())
    throw DataError(fmt::format(
        "{}: {} holds no valid character{}: none of its {} bytes is one of the {} valid "
        "characters",
        kName, path_, dropped, raw.size(), valid_.size()));
  const auto n = static_cast<int64_t>(text_.size());
  if (n < int64_t{exampleLength_} + 1)
    throw DataError(fmt::format(
        "{}: {} holds {} valid character{}{}, fewer than one example needs: exampleLength {} "
        "characters and the one after the last as its label ({})",
        kName, path_, n, n == 1 ? "" : "s", dropped, exampleLength_, exampleLength_ + 1));

  const int64_t examples = (n - 1) / exampleLength_;
  offsets_.resize(static_cast<size_t>(examples));
  for (int64_t k = 0; k < examples; ++k) offsets_[static_cast<size_t>(k)] = k * exampleLength_;
  shuffle();
}

void CharacterIterator::shuffle() {
  std::sort(offsets_.begin(), offsets_.end());
  ExampleRandom random(seed_, epoch_, 0);
  shuffleInPlace(offsets_, random);
  cursor_ = 0;
}

int64_t CharacterIterator::inputColumns() const {
  return inputFormat_ == InputFormat::INDEX ? 1 : static_cast<int64_t>(valid_.size());
}

char CharacterIterator::convertIndexToCharacter(int index) const {
  if (index < 0 || static_cast<size_t>(index) >= valid_.size())
    throw ConfigError(
        fmt::format("{}: character index {} is outside [0, {})", kName, index, valid_.size()));
  return valid_[static_cast<size_t>(index)];
}

int CharacterIterator::convertCharacterToIndex(char c) const {
  const int16_t index = indexOf_[static_cast<uint8_t>(c)];
  if (index < 0)
    throw ConfigError(fmt::format("{}: {} is not one of the {} valid characters", kName,
                                  quoteForMessage(std::string(1, c)), valid_.size()));
  return index;
}

bool CharacterIterator::hasNext() { return cursor_ < offsets_.size(); }

DataSet CharacterIterator::next() {
  if (!hasNext()) throwNoNext(kName);
  const auto n = static_cast<int64_t>(std::min<size_t>(miniBatchSize_, offsets_.size() - cursor_));
  const int64_t v = static_cast<int64_t>(valid_.size());
  const int64_t steps = exampleLength_;
  Tensor features(Shape{n, inputColumns(), steps});
  Tensor labels(Shape{n, v, steps});
  float* f = features.data();
  float* l = labels.data();
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* chars = text_.data() + offsets_[cursor_ + static_cast<size_t>(i)];
    for (int64_t t = 0; t < steps; ++t) {
      if (inputFormat_ == InputFormat::INDEX)
        f[i * steps + t] = static_cast<float>(chars[t]);
      else
        f[(i * v + chars[t]) * steps + t] = 1.0F;
      l[(i * v + chars[t + 1]) * steps + t] = 1.0F;
    }
  }
  cursor_ += static_cast<size_t>(n);
  return preProcessed(DataSet(std::move(features), std::move(labels)));
}

void CharacterIterator::reset() {
  ++epoch_;
  shuffle();
}

}  // namespace dl4cpp
