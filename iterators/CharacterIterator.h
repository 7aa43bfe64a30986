#pragma once
// CharacterIterator: a text file as minibatches of character sequences for a character-level
// language model, as the CharacterIterator of DL4J's examples (GravesLSTMCharModellingExample).
//
//   CharacterIterator it("/usr/share/games/fortunes/fortunes", 32, 100,
//                        CharacterIterator::getMinimalCharacterSet(), 12345);
//   DataSet batch = it.next();   // features [32, V, 100] one-hot, labels [32, V, 100] one-hot
//
// The file is read whole; each line's characters outside the valid set are dropped, and the
// line ends with '\n' when '\n' is in the set (LF or CRLF alike). Lines starting with
// commentChars are dropped whole (DL4J's commentChars; "%" drops the separator lines of a
// fortune file). Characters are bytes: a valid set is a string of distinct bytes, V of them, and
// character c has index validCharacters.find(c).
//
// The text of n characters holds (n - 1) / exampleLength examples: example k covers characters
// [k * exampleLength, (k + 1) * exampleLength) as input and the characters one further as its
// labels (the next character at every step). Each epoch visits every example once, in an order
// drawn from (seed, epoch) alone: the same on every platform and run; reset() starts the next
// epoch with a new order. The last batch of an epoch may hold fewer examples.
//
// Input formats:
//   ONE_HOT  features [N, V, exampleLength], one-hot (inputColumns() is V)
//   INDEX    features [N, 1, exampleLength] holding the character's index (as a float), the
//            input of an EmbeddingSequenceLayer (inputColumns() is 1)
// Labels are one-hot [N, V, exampleLength] in both. No masks: every example is full length.
//
// Errors:
//   DataNotFoundError, IoError  the file does not exist, is not a regular file, cannot be read
//   DataError                   an empty file, a file holding no valid character, a file shorter
//                               than one example (exampleLength + 1 valid characters), each
//                               naming the file and the counts
//   ConfigError                 miniBatchSize or exampleLength not positive, an empty valid set, a
//                               character given twice in it
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "iterators/DataSetIterator.h"

namespace dl4cpp {

// DL4J's CharacterIterator.getMinimalCharacterSet(): a-z, A-Z, 0-9 and !&()?-'",.:; space,
// newline, tab.
std::string minimalCharacterSet();
// DL4J's getDefaultCharacterSet(): the minimal set and @#$%^*{}[]/+_\|<>.
std::string defaultCharacterSet();

enum class CharacterInputFormat { ONE_HOT, INDEX };

struct CharacterIteratorOptions {
  std::string validCharacters = minimalCharacterSet();
  uint64_t seed = 12345;     // the order of the examples in every epoch
  std::string commentChars;  // lines starting with it are dropped; empty: none
  CharacterInputFormat inputFormat = CharacterInputFormat::ONE_HOT;
};

class CharacterIterator : public DataSetIterator {
 public:
  using InputFormat = CharacterInputFormat;
  using Options = CharacterIteratorOptions;

  CharacterIterator(const std::filesystem::path& textFile, int miniBatchSize, int exampleLength,
                    Options options = {});
  // DL4J's argument order: (file, miniBatchSize, exampleLength, validCharacters, rng seed
  // [, commentChars]), one-hot input.
  CharacterIterator(const std::filesystem::path& textFile, int miniBatchSize, int exampleLength,
                    std::string validCharacters, uint64_t seed, std::string commentChars = "");

  static std::string getMinimalCharacterSet() { return minimalCharacterSet(); }
  static std::string getDefaultCharacterSet() { return defaultCharacterSet(); }

  bool hasNext() override;
  DataSet next() override;
  void reset() override;

  int batch() const override { return miniBatchSize_; }
  int64_t inputColumns() const override;
  int totalOutcomes() const override { return static_cast<int>(valid_.size()); }
  int64_t totalExamples() const override { return static_cast<int64_t>(offsets_.size()); }

  // The character of index `index` in [0, V) (ConfigError otherwise).
  char convertIndexToCharacter(int index) const;
  // The index of `c`, or ConfigError when it is not a valid character.
  int convertCharacterToIndex(char c) const;
  const std::string& validCharacters() const { return valid_; }
  // The text as kept (valid characters only, comment lines dropped), as indices.
  const std::vector<uint8_t>& characterIndices() const { return text_; }
  int exampleLength() const { return exampleLength_; }

 private:
  void shuffle();

  std::string path_;
  int miniBatchSize_, exampleLength_;
  std::string valid_;
  std::array<int16_t, 256> indexOf_{};  // byte -> index in valid_, -1 when not valid
  uint64_t seed_;
  InputFormat inputFormat_;
  std::vector<uint8_t> text_;     // the kept characters, as indices
  std::vector<int64_t> offsets_;  // start of each example, in this epoch's order
  size_t cursor_ = 0;             // next example in offsets_
  uint64_t epoch_ = 0;
};

}  // namespace dl4cpp
