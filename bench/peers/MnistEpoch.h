#pragma once
// MNIST for the libtorch peer program, without dl4cpp: reads the IDX files (raw or gzip, through
// zlib) and orders the training set exactly as MnistDataSetIterator(128, true, 123) does in its
// first epoch. The order is the point: iterators/MnistDataSetIterator.cpp shuffles the indices
// 0..N-1 with a Fisher-Yates driven by std::mt19937_64(seed) and a rejection-sampled bound, both
// reproduced here. scripts/bench-peers.sh compares the two programs' epoch_order_fnv1a, so a drift
// between the copies shows up as a failed run, not as a silently different benchmark.
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace peers {

struct MnistSplit {
  int64_t count = 0;
  int64_t imageSize = 0;        // rows * cols
  std::vector<uint8_t> pixels;  // (count, imageSize)
  std::vector<uint8_t> labels;  // (count)
};

namespace detail {

inline std::vector<uint8_t> readWholeFile(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");  // reads uncompressed files as they are
  if (file == nullptr) throw std::runtime_error("cannot open " + path);
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  int n = 0;
  while ((n = gzread(file, chunk, sizeof chunk)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  const bool failed = n < 0;
  gzclose(file);
  if (failed) throw std::runtime_error(path + ": corrupt gzip stream");
  return bytes;
}

inline uint32_t bigEndian(const std::vector<uint8_t>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) |
         b[at + 3];
}

// `dir/name`, else `dir/name.gz` (MnistDataSetIterator's rule).
inline std::string idxPath(const std::string& dir, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path raw = fs::path(dir) / name;
  if (fs::is_regular_file(raw)) return raw.string();
  const fs::path gz = fs::path(dir) / (name + ".gz");
  if (fs::is_regular_file(gz)) return gz.string();
  throw std::runtime_error(name + " not found: looked for " + raw.string() + " and " + gz.string() +
                           " (scripts/get-mnist.sh fetches MNIST)");
}

// std::uniform_int_distribution is not used: its algorithm differs between standard libraries.
inline uint64_t uniformBelow(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
  for (;;) {
    const uint64_t r = rng();
    if (r >= threshold) return r % bound;
  }
}

}  // namespace detail

// The first `numExamples` (0 = all) examples of the train or test split in `dir`.
inline MnistSplit readMnist(const std::string& dir, bool train, int64_t numExamples) {
  const std::string prefix = train ? "train" : "t10k";
  const std::string imagesPath = detail::idxPath(dir, prefix + "-images-idx3-ubyte");
  const std::string labelsPath = detail::idxPath(dir, prefix + "-labels-idx1-ubyte");
  const std::vector<uint8_t> images = detail::readWholeFile(imagesPath);
  const std::vector<uint8_t> labels = detail::readWholeFile(labelsPath);
  if (images.size() < 16 || detail::bigEndian(images, 0) != 0x803)
    throw std::runtime_error(imagesPath + ": not an IDX image file");
  if (labels.size() < 8 || detail::bigEndian(labels, 0) != 0x801)
    throw std::runtime_error(labelsPath + ": not an IDX label file");
  MnistSplit split;
  split.count = detail::bigEndian(images, 4);
  split.imageSize = int64_t{detail::bigEndian(images, 8)} * detail::bigEndian(images, 12);
  if (detail::bigEndian(labels, 4) != split.count)
    throw std::runtime_error(imagesPath + " and " + labelsPath + " hold different example counts");
  if (images.size() < 16 + static_cast<size_t>(split.count * split.imageSize) ||
      labels.size() < 8 + static_cast<size_t>(split.count))
    throw std::runtime_error(imagesPath + " or " + labelsPath + " is truncated");
  if (numExamples > 0 && numExamples < split.count) split.count = numExamples;
  split.pixels.assign(images.begin() + 16, images.begin() + 16 + split.count * split.imageSize);
  split.labels.assign(labels.begin() + 8, labels.begin() + 8 + split.count);
  for (uint8_t label : split.labels)
    if (label > 9)
      throw std::runtime_error(labelsPath + ": label " + std::to_string(label) + " outside 0..9");
  return split;
}

// The first epoch's order of MnistDataSetIterator with shuffle and `seed`.
inline std::vector<int64_t> firstEpochOrder(int64_t count, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(count));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::mt19937_64 rng(seed);
  for (size_t i = order.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(detail::uniformBelow(rng, i));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

}  // namespace peers
