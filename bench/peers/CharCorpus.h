#pragma once
// The text of the charlstm peer network, for both peer programs (the standard library only: the
// libtorch program does not link dl4cpp). The corpus is Debian's fortunes-min: the files
// fortunes, literature and riddles of one directory, concatenated in that order, without the
// separator lines ("%"). Every distinct byte is a character; the vocabulary is sorted by byte.
//
// The text is cut into consecutive windows of kSteps + 1 characters that overlap by one (the
// input is a window's first kSteps characters, the target its last kSteps). The last tenth of the
// windows is the test set; the training windows are shuffled once by a Fisher-Yates driven by
// splitmix64(PeerOptions::kSeed), the same order in both programs (the order hash checks it).
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace peers {

struct CharCorpus {
  static constexpr int kSteps = 64;   // characters per training sequence
  static constexpr int kBatch = 16;   // sequences per minibatch
  static constexpr int kUnits = 128;  // LSTM units

  int vocabulary = 0;
  std::vector<std::vector<int>> train;  // windows of kSteps + 1 indices, in epoch order
  std::vector<std::vector<int>> test;
};

inline std::string readFortunes(const std::string& directory) {
  std::string text;
  for (const char* name : {"fortunes", "literature", "riddles"}) {
    const std::string path = (std::filesystem::path(directory) / name).string();
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path + " (install Debian's fortunes-min)");
    for (std::string line; std::getline(in, line);)
      if (line != "%") text += line + "\n";
  }
  return text;
}

// The corpus of `directory`, keeping the first `trainWindows` training windows and the first
// `testWindows` test windows (0: all).
inline CharCorpus readCharCorpus(const std::string& directory, int trainWindows, int testWindows,
                                 uint64_t seed) {
  const std::string text = readFortunes(directory);
  std::array<int, 256> index{};
  index.fill(-1);
  for (unsigned char c : text) index[c] = 0;
  CharCorpus corpus;
  for (int& i : index)
    if (i == 0) i = corpus.vocabulary++;
  const size_t steps = CharCorpus::kSteps;
  std::vector<std::vector<int>> windows;
  for (size_t start = 0; start + steps < text.size(); start += steps) {
    std::vector<int> w(steps + 1);
    for (size_t t = 0; t <= steps; ++t) w[t] = index[static_cast<unsigned char>(text[start + t])];
    windows.push_back(std::move(w));
  }
  const size_t testCount = windows.size() / 10;
  corpus.test.assign(windows.end() - static_cast<std::ptrdiff_t>(testCount), windows.end());
  windows.resize(windows.size() - testCount);
  uint64_t state = seed;
  auto next = [&state] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  for (size_t i = windows.size(); i > 1; --i) std::swap(windows[i - 1], windows[next() % i]);
  corpus.train = std::move(windows);
  if (trainWindows > 0 && static_cast<size_t>(trainWindows) < corpus.train.size())
    corpus.train.resize(static_cast<size_t>(trainWindows));
  if (testWindows > 0 && static_cast<size_t>(testWindows) < corpus.test.size())
    corpus.test.resize(static_cast<size_t>(testWindows));
  return corpus;
}

}  // namespace peers
