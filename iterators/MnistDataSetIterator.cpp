#include "iterators/MnistDataSetIterator.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <utility>

namespace dl4cpp {

namespace {

namespace fs = std::filesystem;
constexpr int64_t kCacheLineBytes = 64;

// `dir/name` if it is a regular file, else `dir/name.gz` if that is one; failing both, the first
// that exists at all, so that the reader says what it is instead (a directory, a FIFO, ...).
// DataNotFoundError when neither exists.
std::string findIdxFile(const std::string& dir, const std::string& name) {
  const fs::path raw = fs::path(dir) / name;
  const fs::path gz = fs::path(dir) / (name + ".gz");
  std::error_code ec;
  for (const fs::path& candidate : {raw, gz})
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  for (const fs::path& candidate : {raw, gz})
    if (fs::exists(candidate, ec)) return candidate.string();
  throw DataNotFoundError(
      "MnistDataSetIterator: " + name + " not found: looked for " + raw.string() + " and " +
      gz.string() + ". For MNIST run `scripts/get-mnist.sh " + dir +
      "`; for Fashion-MNIST run `apt-get install dataset-fashion-mnist` and pass the directory "
      "MnistDataSetIterator::fashionMnistDirectory() (" +
      MnistDataSetIterator::fashionMnistDirectory() + ")");
}

// Uniform integer in [0, bound) from the raw 64-bit output (rejection sampling removes the modulo
// bias). std::uniform_int_distribution is not used: its algorithm differs between libraries.
uint64_t uniformBelow(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
  for (;;) {
    const uint64_t r = rng();
    if (r >= threshold) return r % bound;
  }
}

}  // namespace

MnistDataSetIterator::MnistDataSetIterator(int batch, bool train, int64_t seed)
    : MnistDataSetIterator(batch, train ? 60000 : 10000, false, train, true, seed) {}

MnistDataSetIterator::MnistDataSetIterator(int batch, int numExamples, bool binarize, bool train,
                                           bool shuffle, int64_t seed, std::string dir)
    : batch_(batch),
      binarize_(binarize),
      shuffle_(shuffle),
      dir_(dir.empty() ? defaultDataDirectory("MNIST") : std::move(dir)),
      rng_(static_cast<uint64_t>(seed)) {
  if (batch <= 0)
    throw ConfigError("MnistDataSetIterator: batch must be positive, got " + std::to_string(batch));
  const std::string prefix = train ? "train" : "t10k";
  imagesPath_ = findIdxFile(dir_, prefix + "-images-idx3-ubyte");
  labelsPath_ = findIdxFile(dir_, prefix + "-labels-idx1-ubyte");
  images_ = IdxReader::readImages(imagesPath_);
  labels_ = IdxReader::readLabels(labelsPath_, kNumClasses);
  if (images_.count != labels_.count())
    throw DataMismatchError("MnistDataSetIterator: " + imagesPath_ + " holds " +
                            std::to_string(images_.count) + " images but " + labelsPath_ +
                            " holds " + std::to_string(labels_.count()) +
                            " labels; the two files must come from the same data set");

  // Keep only the first numExamples (before shuffling), releasing the rest.
  if (numExamples > 0 && numExamples < images_.count) {
    images_.count = numExamples;
    images_.pixels.resize(static_cast<size_t>(numExamples * images_.imageSize()));
    images_.pixels.shrink_to_fit();
    labels_.labels.resize(static_cast<size_t>(numExamples));
  }
  order_.resize(static_cast<size_t>(images_.count));
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int64_t>(i);
  if (shuffle_) shuffleOrder();
}

void MnistDataSetIterator::shuffleOrder() {
  for (size_t i = order_.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(uniformBelow(rng_, i));
    std::swap(order_[i - 1], order_[j]);
  }
}

bool MnistDataSetIterator::hasNext() { return cursor_ < static_cast<int64_t>(order_.size()); }

DataSet MnistDataSetIterator::next() {
  if (!hasNext()) throwNoNext("MnistDataSetIterator");
  const int64_t n = std::min<int64_t>(batch_, static_cast<int64_t>(order_.size()) - cursor_);
  const int64_t cols = images_.imageSize();
  DataSet ds;
  ds.features = Tensor(Shape{n, cols});       // (n, 784)
  ds.labels = Tensor(Shape{n, kNumClasses});  // (n, 10), zero-filled
  float* f = ds.features.data();
  float* l = ds.labels.data();
  for (int64_t r = 0; r < n; ++r) {
    // The image after next, line by line: shuffled images are scattered over 47 MB, and a load
    // miss at each one's first line stalled the conversion (most of next()'s time).
    if (r + 2 < n) {
      const uint8_t* ahead = images_.image(order_[static_cast<size_t>(cursor_ + r + 2)]);
      for (int64_t c = 0; c < cols; c += kCacheLineBytes) __builtin_prefetch(ahead + c);
    }
    const int64_t example = order_[static_cast<size_t>(cursor_ + r)];
    const uint8_t* px = images_.image(example);
    float* row = f + r * cols;
    if (binarize_) {
      for (int64_t c = 0; c < cols; ++c) row[c] = px[c] > kBinarizeThreshold ? 1.0f : 0.0f;
    } else {
      for (int64_t c = 0; c < cols; ++c) row[c] = static_cast<float>(px[c]) / 255.0f;
    }
    l[r * kNumClasses + labels_.labels[static_cast<size_t>(example)]] = 1.0f;
  }
  cursor_ += n;
  return preProcessed(std::move(ds));
}

void MnistDataSetIterator::skipNext() {
  if (!hasNext()) throwNoNext("MnistDataSetIterator");
  cursor_ += std::min<int64_t>(batch_, static_cast<int64_t>(order_.size()) - cursor_);
}

void MnistDataSetIterator::reset() {
  cursor_ = 0;
  if (shuffle_) shuffleOrder();
}

std::string MnistDataSetIterator::defaultDataDirectory(const std::string& dataset) {
  const char* root = std::getenv("DL4CPP_DATA_DIR");
  if (root != nullptr && *root != '\0') return (fs::path(root) / dataset).string();
  const char* home = std::getenv("HOME");
  const fs::path base = (home != nullptr && *home != '\0') ? fs::path(home) : fs::path();
  return (base / ".dl4cpp" / "data" / dataset).string();
}

}  // namespace dl4cpp
