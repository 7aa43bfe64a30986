#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "TempDir.h"
#include "iterators/CharacterIterator.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

std::filesystem::path write(const testutil::TempDir& dir, const std::string& name,
                            const std::string& content) {
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// Example i's characters at every step: the input's (one-hot or index) and the label's.
struct Decoded {
  std::string input, label;
  bool operator==(const Decoded&) const = default;
};

int argmaxAt(const Tensor& t, int64_t i, int64_t step, bool requireOneHot) {
  const int64_t v = t.dim(1), steps = t.dim(2);
  int found = -1, ones = 0;
  for (int64_t c = 0; c < v; ++c) {
    const float x = t.data()[(i * v + c) * steps + step];
    if (x == 1.0F) {
      found = static_cast<int>(c);
      ++ones;
    } else if (x != 0.0F) {
      return -2;
    }
  }
  return requireOneHot && ones != 1 ? -3 : found;
}

std::vector<Decoded> decode(const CharacterIterator& it, const DataSet& batch) {
  std::vector<Decoded> out;
  const bool index = batch.features.dim(1) == 1 && it.totalOutcomes() > 1;
  for (int64_t i = 0; i < batch.numExamples(); ++i) {
    Decoded d;
    for (int64_t t = 0; t < batch.features.dim(2); ++t) {
      const int in = index ? static_cast<int>(batch.features.data()[i * batch.features.dim(2) + t])
                           : argmaxAt(batch.features, i, t, true);
      d.input.push_back(it.convertIndexToCharacter(in));
      d.label.push_back(it.convertIndexToCharacter(argmaxAt(batch.labels, i, t, true)));
    }
    out.push_back(d);
  }
  return out;
}

std::vector<Decoded> epoch(CharacterIterator& it) {
  std::vector<Decoded> all;
  while (it.hasNext()) {
    const std::vector<Decoded> batch = decode(it, it.next());
    all.insert(all.end(), batch.begin(), batch.end());
  }
  return all;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("CharacterIterator: valid characters, comment lines, next-character labels") {
    testutil::TempDir dir;
    // Kept: "ab\n" "c\n" ('%' and 'x' are not valid) "ba\n" (a last line gets its '\n');
    // "%skip" is a comment line. CRLF reads as LF.
    const auto path = write(dir, "t.txt", "ab\r\nc%x\n%skip\nba");
    CharacterIterator it(path, 2, 3, "abc\n", 7, "%");
    CHECK(it.validCharacters() == "abc\n");
    CHECK(it.characterIndices() == std::vector<uint8_t>{0, 1, 3, 2, 3, 1, 0, 3});
    CHECK(it.totalExamples() == 2);  // (8 - 1) / 3
    CHECK(it.inputColumns() == 4);
    CHECK(it.totalOutcomes() == 4);
    CHECK(it.batch() == 2);
    CHECK(it.exampleLength() == 3);
    REQUIRE(it.hasNext());
    const DataSet b = it.next();
    CHECK(b.features.shape() == Shape{2, 4, 3});
    CHECK(b.labels.shape() == Shape{2, 4, 3});
    CHECK_FALSE(b.hasMasks());
    std::vector<Decoded> got = decode(it, b);
    std::sort(got.begin(), got.end(),
              [](const Decoded& x, const Decoded& y) { return x.input < y.input; });
    CHECK(got == std::vector<Decoded>{{"ab\n", "b\nc"}, {"c\nb", "\nba"}});
    CHECK_FALSE(it.hasNext());
    CHECK_THROWS_AS(it.next(), DataError);
    it.reset();
    CHECK(it.hasNext());

    // Index input for an embedding layer: [N, 1, T] holding the indices.
    CharacterIterator index(path, 2, 3,
                            {.validCharacters = "abc\n",
                             .seed = 7,
                             .commentChars = "%",
                             .inputFormat = CharacterIterator::InputFormat::INDEX});
    CHECK(index.inputColumns() == 1);
    const DataSet ib = index.next();
    CHECK(ib.features.shape() == Shape{2, 1, 3});
    CHECK(decode(index, ib) == decode(it, b));  // same seed, same order

    CHECK(it.convertCharacterToIndex('\n') == 3);
    CHECK(it.convertIndexToCharacter(2) == 'c');
    CHECK_THROWS_AS(it.convertCharacterToIndex('z'), ConfigError);
    CHECK_THROWS_AS(it.convertIndexToCharacter(4), ConfigError);
  }

  TEST_CASE("CharacterIterator: the order of examples comes from the seed and the epoch") {
    testutil::TempDir dir;
    std::string text;
    uint32_t x = 1;
    for (int i = 0; i < 400; ++i) {
      x = x * 1103515245U + 12345U;
      text += static_cast<char>('a' + (x >> 16) % 26);
    }
    const auto path = write(dir, "t.txt", text);
    CharacterIterator a(path, 16, 4, CharacterIterator::getMinimalCharacterSet(), 1);
    CharacterIterator same(path, 16, 4, CharacterIterator::getMinimalCharacterSet(), 1);
    CharacterIterator other(path, 16, 4, CharacterIterator::getMinimalCharacterSet(), 2);
    const std::vector<Decoded> first = epoch(a);
    CHECK(first.size() == 100);  // 401 characters with the last line's '\n': (401 - 1) / 4
    CHECK(epoch(same) == first);
    const std::vector<Decoded> seeded = epoch(other);
    CHECK(seeded != first);
    a.reset();
    const std::vector<Decoded> second = epoch(a);
    CHECK(second != first);
    // Every example once per epoch, whatever the order; each is 4 characters of the text in a
    // row, labelled with the next 4.
    auto sorted = [](std::vector<Decoded> v) {
      std::sort(v.begin(), v.end(), [](const Decoded& x, const Decoded& y) {
        return x.input + x.label < y.input + y.label;
      });
      return v;
    };
    CHECK(sorted(second) == sorted(first));
    CHECK(sorted(seeded) == sorted(first));
    const std::string kept = text + "\n";
    for (const Decoded& d : first) {
      const size_t at = kept.find(d.input + d.label.back());
      REQUIRE(at != std::string::npos);
      CHECK(d.label == kept.substr(at + 1, 4));
    }
  }

  TEST_CASE("CharacterIterator: bad files and settings are typed errors naming the file") {
    testutil::TempDir dir;
    const auto missing = dir / "missing.txt";
    CHECK_THROWS_WITH_AS(CharacterIterator(missing, 2, 3),
                         doctest::Contains(missing.string().c_str()), DataNotFoundError);
    CHECK_THROWS_AS(CharacterIterator(dir.path(), 2, 3), DataError);
    const auto empty = write(dir, "empty.txt", "");
    CHECK_THROWS_WITH_AS(CharacterIterator(empty, 2, 3),
                         ("CharacterIterator: " + empty.string() + " is empty").c_str(), DataError);
    const auto digits = write(dir, "digits.txt", "123\n456\n");
    CHECK_THROWS_WITH_AS(CharacterIterator(digits, 2, 3, "abc", 1),
                         ("CharacterIterator: " + digits.string() +
                          " holds no valid character: none of its 8 bytes is one of the 3 valid "
                          "characters")
                             .c_str(),
                         DataError);
    const auto comments = write(dir, "comments.txt", "#a\n#b\n");
    CHECK_THROWS_WITH_AS(CharacterIterator(comments, 2, 3, "ab\n", 1, "#"),
                         doctest::Contains("holds no valid character (past 2 comment lines "
                                           "starting with '#')"),
                         DataError);
    const auto shortText = write(dir, "short.txt", "abc");
    CHECK_THROWS_WITH_AS(CharacterIterator(shortText, 2, 4),
                         ("CharacterIterator: " + shortText.string() +
                          " holds 4 valid characters, fewer than one example needs: "
                          "exampleLength 4 characters and the one after the last as its label (5)")
                             .c_str(),
                         DataError);
    CHECK_NOTHROW(CharacterIterator(shortText, 2, 3));  // "abc\n": exactly one example
    CHECK_THROWS_AS(CharacterIterator(shortText, 0, 2), ConfigError);
    CHECK_THROWS_AS(CharacterIterator(shortText, 2, 0), ConfigError);
    CHECK_THROWS_WITH_AS(CharacterIterator(shortText, 2, 2, "", 1),
                         doctest::Contains("the set of valid characters is empty"), ConfigError);
    CHECK_THROWS_WITH_AS(CharacterIterator(shortText, 2, 2, "abca", 1),
                         "CharacterIterator: 'a' is in the set of valid characters twice (at 0 "
                         "and 3)",
                         ConfigError);
  }

  TEST_CASE("CharacterIterator: character sets as in DL4J's example") {
    const std::string minimal = CharacterIterator::getMinimalCharacterSet();
    CHECK(minimal.size() == 26 + 26 + 10 + 15);
    const std::string all = CharacterIterator::getDefaultCharacterSet();
    CHECK(all.size() == minimal.size() + 17);
    CHECK(all.starts_with(minimal));
    std::string sorted = all;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  }

  TEST_CASE("CharacterIterator: a real text, the fortunes of Debian's fortunes-min") {
    const std::filesystem::path path = "/usr/share/games/fortunes/fortunes";
    if (!std::filesystem::exists(path)) {
      std::cout << "skipped: " << path.string()
                << " is absent (Debian's fortunes-min package, scripts/install-deps.sh)"
                << std::endl;
      return;
    }
    // The file's own count of the characters kept: '%' separator lines dropped, a '\n' per line.
    std::ifstream in(path, std::ios::binary);
    const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string valid = CharacterIterator::getMinimalCharacterSet();
    int64_t expected = 0, lines = 0;
    for (size_t begin = 0; begin < raw.size();) {
      size_t end = raw.find('\n', begin);
      if (end == std::string::npos) end = raw.size();
      const std::string line = raw.substr(begin, end - begin);
      begin = end + 1;
      if (line.starts_with("%")) continue;
      ++lines;
      expected += 1 + std::count_if(line.begin(), line.end(),
                                    [&](char c) { return valid.find(c) != std::string::npos; });
    }
    REQUIRE(lines > 100);
    CharacterIterator it(path, 32, 100, valid, 12345, "%");
    CHECK(static_cast<int64_t>(it.characterIndices().size()) == expected);
    CHECK(it.totalExamples() == (expected - 1) / 100);
    int64_t examples = 0;
    std::string text;
    for (uint8_t i : it.characterIndices()) text.push_back(it.convertIndexToCharacter(i));
    while (it.hasNext()) {
      const DataSet b = it.next();
      CHECK(b.features.shape() == Shape{b.numExamples(), 77, 100});
      for (const Decoded& d : decode(it, b)) {
        // Every example is a stretch of the kept text, its labels one character on.
        size_t at = 0;
        while (at + 100 < text.size() && text.compare(at, 100, d.input) != 0) at += 100;
        REQUIRE(at + 100 < text.size());
        CHECK(d.label == text.substr(at + 1, 100));
        ++examples;
      }
    }
    CHECK(examples == it.totalExamples());
    CHECK(text.find("A day for firm decisions!!!!!  Or is it?\nA few hours grace") == 0);
  }
}
